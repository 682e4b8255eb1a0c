//! [`Said`]: a derived sentence in both languages, serialised in one; [`Sentence`]: a sentence
//! of a catalogue, its placeholders named; [`Form`]: how a sentence was made, which history
//! keeps to say it again in the reader's language.

mod speak;

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use speak::{to_json, to_postcard};

use super::{Lang, Say};

/// A sentence the derivation wrote, in English and in Japanese. It serialises as one string in
/// the language of the answer being written ([`to_json`]; English otherwise), so the JSON API
/// and the stream stay plain strings; it reads back from one string as both.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Said {
    /// English. Shared (`Arc`): a sentence said for many objects in one derivation (10,000 pods
    /// waiting for the same reason) is kept once, and cloning it copies no text.
    pub en: Arc<str>,
    /// Japanese (the same allocation as `en` when the words are the same).
    pub ja: Arc<str>,
    /// How it was made, where catalogue sentences made it (none: the words are all there is).
    pub form: Option<Arc<Form>>,
}

impl Said {
    /// The same text in both languages (a name, a raw message, a string read back).
    pub fn same(s: impl Into<Arc<str>>) -> Self {
        let en = s.into();
        Self { ja: Arc::clone(&en), en, form: None }
    }

    /// A value as text, the same in both languages (a name, a count).
    pub fn text(v: impl std::fmt::Display) -> Self {
        Self::same(v.to_string())
    }

    /// Words written in each language directly.
    pub fn pair(en: impl Into<Arc<str>>, ja: impl Into<Arc<str>>) -> Self {
        let (en, ja) = (en.into(), ja.into());
        let ja = if en == ja { Arc::clone(&en) } else { ja };
        Self { en, ja, form: None }
    }

    /// Sentences or items joined, each language with its own separator.
    pub fn join(parts: &[Said], en_sep: &str, ja_sep: &str) -> Self {
        let form = parts.iter().any(|p| p.form.is_some()).then(|| {
            Arc::new(Form::Join { parts: parts.iter().map(Said::form).collect(), en: en_sep.into(), ja: ja_sep.into() })
        });
        Self {
            en: parts.iter().map(|p| &*p.en).collect::<Vec<_>>().join(en_sep).into(),
            ja: parts.iter().map(|p| &*p.ja).collect::<Vec<_>>().join(ja_sep).into(),
            form,
        }
    }

    /// Appends to both.
    pub fn push(&mut self, other: &Said) {
        if self.form.is_some() || other.form.is_some() {
            let mut parts = match self.form.as_deref() {
                Some(Form::Join { parts, en, ja }) if en.is_empty() && ja.is_empty() => parts.clone(),
                _ => vec![self.form()],
            };
            parts.push(other.form());
            self.form = Some(Arc::new(Form::Join { parts, en: String::new(), ja: String::new() }));
        }
        self.en = [&*self.en, &*other.en].concat().into();
        self.ja = [&*self.ja, &*other.ja].concat().into();
    }

    /// How it was made: its form where catalogue sentences made it, else its words.
    pub fn form(&self) -> Form {
        match &self.form {
            Some(f) => Form::clone(f),
            None if self.en == self.ja => Form::Text(self.en.to_string()),
            None => Form::Pair { en: self.en.to_string(), ja: self.ja.to_string() },
        }
    }
}

/// A sentence of a catalogue: a stable key (`family.name`) and its two templates, placeholders
/// named (`{node}`) and braces doubled (`{{`), as `format!` writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence {
    /// `family.name`, as history keeps it.
    pub key: &'static str,
    /// English.
    pub en: &'static str,
    /// Japanese.
    pub ja: &'static str,
}

impl Sentence {
    /// The sentence said with `args` in its placeholders (each language of an argument in that
    /// language's sentence), and how it was made.
    pub fn say(&self, args: &[(&'static str, &Said)]) -> Said {
        let arg = |name: &str| args.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let en = fill_named(self.en, |n| arg(n).map(|v| &*v.en)).0.into();
        let ja = fill_named(self.ja, |n| arg(n).map(|v| &*v.ja)).0.into();
        let args = args.iter().map(|(k, v)| (Cow::Borrowed(*k), v.form())).collect();
        Said { en, ja, form: Some(Arc::new(Form::Sentence { key: Cow::Borrowed(self.key), args })) }
    }

    /// The template in `lang`.
    pub fn template(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Ja => self.ja,
        }
    }
}

/// A template with its placeholders filled: `{name}` by `value(name)` (left as written where it
/// gives none), `{{` and `}}` as single braces; and whether every placeholder had a value.
pub fn fill_named<'a>(template: &str, value: impl Fn(&str) -> Option<&'a str>) -> (String, bool) {
    let mut out = String::with_capacity(template.len() + 32);
    let mut complete = true;
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let name_end = tail.find('}').filter(|_| tail.starts_with('{'));
        match name_end.map(|e| (&tail[1..e], e)) {
            Some((name, e)) => {
                match value(name) {
                    Some(v) => out.push_str(v),
                    None => {
                        complete = false;
                        out.push_str(&tail[..=e]);
                    }
                }
                rest = &tail[e + 1..];
            }
            None => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    (out, complete)
}

/// How a sentence was made, so that it can be said again later in either language: history
/// keeps this, not the words, and a reader gets it in their language.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// A catalogue sentence by key, with its named arguments.
    Sentence {
        /// [`Sentence::key`].
        key: Cow<'static, str>,
        /// Each placeholder's argument.
        args: Vec<(Cow<'static, str>, Form)>,
    },
    /// The same words in both languages (a name, a number, a message quoted as it is).
    Text(String),
    /// Words written in each language directly.
    Pair {
        /// English.
        en: String,
        /// Japanese.
        ja: String,
    },
    /// Parts joined, each language with its separator.
    Join {
        /// The parts.
        parts: Vec<Form>,
        /// The English separator.
        en: String,
        /// The Japanese separator.
        ja: String,
    },
}

impl Form {
    /// Says it again in `lang`, its catalogue sentences looked up by `sentence`; none where a
    /// sentence or an argument is not known to this build (the caller falls back to the words).
    pub fn say(&self, lang: Lang, sentence: &dyn Fn(&str) -> Option<Sentence>) -> Option<String> {
        let pick = |en: &str, ja: &str| match lang {
            Lang::En => en.to_string(),
            Lang::Ja => ja.to_string(),
        };
        match self {
            Form::Text(t) => Some(t.clone()),
            Form::Pair { en, ja } => Some(pick(en, ja)),
            Form::Join { parts, en, ja } => {
                let parts = parts.iter().map(|p| p.say(lang, sentence)).collect::<Option<Vec<_>>>()?;
                Some(parts.join(&pick(en, ja)))
            }
            Form::Sentence { key, args } => {
                let s = sentence(key)?;
                let said =
                    args.iter().map(|(k, f)| Some((k.as_ref(), f.say(lang, sentence)?))).collect::<Option<Vec<_>>>()?;
                let (text, complete) =
                    fill_named(s.template(lang), |n| said.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str()));
                complete.then_some(text)
            }
        }
    }
}

impl From<&str> for Said {
    fn from(s: &str) -> Self {
        Self::same(s)
    }
}

impl From<String> for Said {
    fn from(s: String) -> Self {
        Self::same(s)
    }
}

/// In code (matching, tests, logs) a sentence reads as its English.
impl std::ops::Deref for Said {
    type Target = str;
    fn deref(&self) -> &str {
        &self.en
    }
}

impl PartialEq<&str> for Said {
    fn eq(&self, other: &&str) -> bool {
        &*self.en == *other
    }
}

impl PartialEq<str> for Said {
    fn eq(&self, other: &str) -> bool {
        &*self.en == other
    }
}

impl Say for Said {
    fn say(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Ja => &self.ja,
        }
    }
}

impl std::fmt::Display for Said {
    /// English (logs, history).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.en)
    }
}

impl Serialize for Said {
    /// As one string: English to a human-readable serializer (JSON), the language asked for
    /// through [`to_json`] (see [`speak`]).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.en)
        } else {
            s.serialize_newtype_struct(speak::SAID, &(&self.en, &self.ja))
        }
    }
}

impl<'de> Deserialize<'de> for Said {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::same(String::deserialize(d)?))
    }
}

/// A [`Said`] from an English and a Japanese `format!` string, with the same arguments in scope:
/// `say!("{n} pods wait", "{n} 個の Pod が待機中")`. Names after a `;` are [`Said`] values in scope;
/// each string sees its own language of them: `say!("{name}: {why}", "{name}：{why}"; why)`.
#[macro_export]
macro_rules! say {
    ($en:literal, $ja:literal; $($said:ident),+ $(,)?) => {
        $crate::i18n::Said::pair(
            { $(let $said = &$said.en;)+ format!($en) },
            { $(let $said = &$said.ja;)+ format!($ja) },
        )
    };
    ($en:literal, $ja:literal $(, $arg:expr)* $(,)?) => {
        $crate::i18n::Said::pair(format!($en $(, $arg)*), format!($ja $(, $arg)*))
    };
}

/// Declares a catalogue: for each sentence a function named for it, whose parameters are its
/// placeholders — a value shown as text (a name, a count: `&impl Display`), or with `: Said` a
/// [`Said`] whose each language goes into that language's sentence — and `ALL`, every sentence
/// of the catalogue with its key `family.name`, by which history says a recorded one again.
///
/// ```ignore
/// app::sentences! { "family";
///     /// What it is for.
///     held_by(pod, node, why: Said) {
///         en: "held by {pod} on {node}: {why}",
///         ja: "{node} の {pod} が持っています：{why}",
///     }
/// }
/// ```
#[macro_export]
macro_rules! sentences {
    (@ty) => { &(impl ::std::fmt::Display + ?Sized) };
    (@ty Said) => { &$crate::i18n::Said };
    (@ref $arg:ident) => { &$crate::i18n::Said::text($arg) };
    (@ref $arg:ident Said) => { $arg };
    ($family:literal; $($(#[$doc:meta])* $name:ident($($arg:ident $(: $said:ident)?),* $(,)?) {
        en: $en:literal, ja: $ja:literal $(,)?
    })*) => {
        $(
            $(#[$doc])*
            // A sentence takes every value it names.
            #[allow(clippy::too_many_arguments)]
            pub(super) fn $name($($arg: $crate::sentences!(@ty $($said)?)),*) -> $crate::i18n::Said {
                const SENTENCE: $crate::i18n::Sentence =
                    $crate::i18n::Sentence { key: concat!($family, ".", stringify!($name)), en: $en, ja: $ja };
                SENTENCE.say(&[$((stringify!($arg), $crate::sentences!(@ref $arg $($said)?))),*])
            }
        )*
        /// Every sentence of this catalogue, by which history says a recorded one again.
        pub(crate) const ALL: &[$crate::i18n::Sentence] = &[
            $($crate::i18n::Sentence { key: concat!($family, ".", stringify!($name)), en: $en, ja: $ja },)*
        ];
    };
}
