//! Languages: English and Japanese for every screen.
//!
//! - [`Lang`]: the language a page or an API answer is in, chosen by `?lang=`, else the
//!   browser's `Accept-Language`, else the server's `--lang`.
//! - [`T`] (and [`S`] for the pages that only the server renders): every fixed string of the
//!   views as a struct field, declared once with its English and its Japanese text by
//!   [`catalog!`]. A view names `t.pending_title`; a misspelt key does not compile, and an entry
//!   without its Japanese does not match the macro, so no string can fall back silently.
//! - [`Said`]: a sentence the derivation wrote (a diagnosis, a scheduler reason) in both
//!   languages; it is written as one string, in the language of the answer being serialised
//!   ([`to_json`]). The browser receives only that string.
//!
//! Placeholders are `{0}`, `{1}`, … ([`fill`]) so Japanese can put them in its own order; a test
//! checks that both languages of every entry use the same ones. Kubernetes words (Pod, Node,
//! RuntimeClass, `nvidia.com/gpu`) stay as operators type them, in both languages.

use serde::{Deserialize, Serialize};

/// A language of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Japanese.
    Ja,
}

impl Lang {
    /// Both, in the order the language switch lists them.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Ja];

    /// The BCP 47 code (`<html lang>`, `?lang=`).
    pub fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Ja => "ja",
        }
    }

    /// The language's own name, for the switch.
    pub fn name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Ja => "日本語",
        }
    }

    /// A language tag (`ja`, `ja-JP`, `EN-us`), when it is one of ours.
    pub fn parse(tag: &str) -> Option<Self> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Self::En),
            "ja" => Some(Self::Ja),
            _ => None,
        }
    }

    /// The best of ours in an `Accept-Language` header (`ja,en-US;q=0.8`): the highest
    /// quality, the first listed on a tie; `q=0` refuses; `*` says nothing.
    pub fn from_accept_language(header: &str) -> Option<Self> {
        let mut best: Option<(u32, Self)> = None;
        for item in header.split(',') {
            let mut parts = item.split(';');
            let Some(lang) = parts.next().and_then(Self::parse) else { continue };
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(1000, |q| (q.trim().parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0) * 1000.0) as u32);
            if q > 0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, lang));
            }
        }
        best.map(|(_, l)| l)
    }

    /// The views' strings in this language.
    pub fn t(self) -> &'static T {
        match self {
            Self::En => &T::EN,
            Self::Ja => &T::JA,
        }
    }

    /// The server-rendered pages' strings in this language.
    #[cfg(not(feature = "hydrate"))]
    pub fn s(self) -> &'static S {
        match self {
            Self::En => &S::EN,
            Self::Ja => &S::JA,
        }
    }
}

/// Replaces `{0}`, `{1}`, … in a catalog string with the arguments.
pub fn fill(template: &str, args: &[&str]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let n = tail.as_bytes().get(1).filter(|c| c.is_ascii_digit()).map(|c| usize::from(c - b'0'));
        match n {
            Some(n) if tail.as_bytes().get(2) == Some(&b'}') => {
                out.push_str(args.get(n).copied().unwrap_or(""));
                rest = &tail[3..];
            }
            _ => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether a character is Japanese script: hiragana, katakana, CJK ideographs, full-width forms
/// and Japanese punctuation (the language tests look for it on English pages and count it on
/// Japanese ones).
pub fn is_japanese(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{9fff}' | '\u{ff00}'..='\u{ffef}' | '\u{3000}'..='\u{303f}')
}

/// How long it has been from `since` to `now` (Unix seconds), as [`duration`] says it: what
/// the live pages show as their clock ticks ("waiting 4m 2s").
pub fn elapsed(since: i64, now: i64, lang: Lang) -> String {
    duration(now - since, lang)
}

/// `2m 5s` / `2分5秒`: a duration in two units at most.
pub fn duration(secs: i64, lang: Lang) -> String {
    let s = secs.max(0);
    let (d, h, m) = (s / 86_400, (s % 86_400) / 3600, (s % 3600) / 60);
    let (u, sep) = match lang {
        Lang::En => (["d", "h", "m", "s"], " "),
        Lang::Ja => (["日", "時間", "分", "秒"], ""),
    };
    if d > 0 {
        format!("{d}{}{sep}{h}{}", u[0], u[1])
    } else if h > 0 {
        format!("{h}{}{sep}{m}{}", u[1], u[2])
    } else if m > 0 {
        format!("{m}{}{sep}{}{}", u[2], s % 60, u[3])
    } else {
        format!("{s}{}", u[3])
    }
}

/// Declares a catalog: a struct with one `&'static str` field per key and its `EN` and `JA`
/// values. Every entry must give both texts, or the macro does not match.
macro_rules! catalog {
    ($(#[$meta:meta])* $name:ident { $($key:ident: $en:literal, $ja:literal;)* }) => {
        $(#[$meta])*
        #[derive(Debug)]
        #[allow(missing_docs)]
        pub struct $name { $(pub $key: &'static str,)* }

        impl $name {
            /// English.
            pub const EN: $name = $name { $($key: $en,)* };
            /// Japanese.
            pub const JA: $name = $name { $($key: $ja,)* };

            /// Every entry: (key, English, Japanese), for the tests.
            #[cfg(test)]
            pub fn entries() -> Vec<(&'static str, &'static str, &'static str)> {
                vec![$((stringify!($key), $en, $ja),)*]
            }
        }
    };
}

mod views;
pub use views::T;

#[cfg(not(feature = "hydrate"))]
mod pages;
#[cfg(not(feature = "hydrate"))]
pub use pages::S;

#[cfg(not(feature = "hydrate"))]
mod said;
#[cfg(not(feature = "hydrate"))]
pub use said::{fill_named, to_json, to_postcard, Form, Said, Sentence};

/// A sentence the derivation wrote, as the browser receives it: one string in the page's
/// language (the server chose it when it serialised the view).
#[cfg(feature = "hydrate")]
pub type Said = String;

/// A derived sentence in a language: the server holds both; the browser holds the one it was
/// sent.
pub trait Say {
    /// The text in `lang`.
    fn say(&self, lang: Lang) -> &str;
}

#[cfg(feature = "hydrate")]
impl Say for String {
    fn say(&self, _: Lang) -> &str {
        self
    }
}

#[cfg(test)]
mod tests;
