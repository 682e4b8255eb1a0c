//! [`Said`]: a derived sentence in both languages, serialised in one.

use std::cell::Cell;

use serde::{Deserialize, Serialize};

use super::{Lang, Say};

/// A sentence the derivation wrote, in English and in Japanese. It serialises as one string in
/// the language of the answer being written ([`in_lang`]; English otherwise), so the JSON API
/// and the stream stay plain strings; it reads back from one string as both.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Said {
    /// English.
    pub en: String,
    /// Japanese.
    pub ja: String,
}

impl Said {
    /// The same text in both languages (a name, a raw message, a string read back).
    pub fn same(s: impl Into<String>) -> Self {
        let en = s.into();
        Self { ja: en.clone(), en }
    }

    /// Sentences or items joined, each language with its own separator.
    pub fn join(parts: &[Said], en_sep: &str, ja_sep: &str) -> Self {
        Self {
            en: parts.iter().map(|p| p.en.as_str()).collect::<Vec<_>>().join(en_sep),
            ja: parts.iter().map(|p| p.ja.as_str()).collect::<Vec<_>>().join(ja_sep),
        }
    }

    /// Appends to both.
    pub fn push(&mut self, other: &Said) {
        self.en.push_str(&other.en);
        self.ja.push_str(&other.ja);
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
        self.en == *other
    }
}

impl PartialEq<str> for Said {
    fn eq(&self, other: &str) -> bool {
        self.en == other
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

thread_local! {
    static LANG: Cell<Lang> = const { Cell::new(Lang::En) };
}

/// Runs `f` (a serialisation) with every [`Said`] written in `lang`.
pub fn in_lang<R>(lang: Lang, f: impl FnOnce() -> R) -> R {
    struct Reset(Lang);
    impl Drop for Reset {
        fn drop(&mut self) {
            LANG.with(|l| l.set(self.0));
        }
    }
    let _reset = Reset(LANG.with(|l| l.replace(lang)));
    f()
}

/// The language [`Said`] values are being written in.
pub fn lang_now() -> Lang {
    LANG.with(Cell::get)
}

impl Serialize for Said {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.say(lang_now()))
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
        $crate::i18n::Said {
            en: { $(let $said = &$said.en;)+ format!($en) },
            ja: { $(let $said = &$said.ja;)+ format!($ja) },
        }
    };
    ($en:literal, $ja:literal $(, $arg:expr)* $(,)?) => {
        $crate::i18n::Said { en: format!($en $(, $arg)*), ja: format!($ja $(, $arg)*) }
    };
}
