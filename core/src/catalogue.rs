//! Every catalogue sentence by its key: what history needs to say a recorded diagnosis again in
//! the reader's language. A diagnosis's message carries how it was made ([`Form`]: catalogue
//! sentences by key with their arguments, and the words between); history keeps that, and
//! [`say`] makes the words again in either language from this build's catalogues.

use gpudash_model::i18n::{Form, Lang, Sentence};

/// The sentence with this key, where this build has it.
pub fn sentence(key: &str) -> Option<Sentence> {
    crate::derive::diagnosis_sentences().chain(crate::fit::sentences()).find(|s| s.key == key).copied()
}

/// A recorded form said in `lang`; none where this build cannot say it (a sentence removed
/// since, or one that no longer takes an argument it names): the caller keeps the words.
pub fn say(form: &Form, lang: Lang) -> Option<String> {
    form.say(lang, &sentence)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use gpudash_model::i18n::{fill_named, Said};
    use gpudash_model::model::ClusterView;

    use super::*;
    use crate::derive::{derive, from_kubectl_yaml, Options};

    fn all() -> Vec<Sentence> {
        crate::derive::diagnosis_sentences().chain(crate::fit::sentences()).copied().collect()
    }

    /// The names a template's placeholders take.
    fn names(t: &str) -> BTreeSet<String> {
        let seen = std::cell::RefCell::new(BTreeSet::new());
        fill_named(t, |n| {
            seen.borrow_mut().insert(n.to_string());
            None
        });
        seen.into_inner()
    }

    #[test]
    fn every_sentence_is_listed_once_under_its_family_and_names_the_same_values_in_both_languages() {
        // Every catalogue file there is (a new one needs no entry here): its family, as its
        // `sentences!` declaration names it, and its text.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut sources: Vec<(String, String)> = Vec::new();
        for dir in [root.join("derive/diagnose"), root.join("fit")] {
            for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
                let path = e.path();
                if !path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("_said.rs")) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let family = text
                    .split_once("sentences! { \"")
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map(|(f, _)| f.to_string())
                    .unwrap_or_else(|| panic!("{}: no sentences! declaration", path.display()));
                sources.push((family, text));
            }
        }
        assert!(sources.len() >= 13, "the catalogues: {}", sources.len());
        let all = all();
        // A `Sentence` constant, or an entry of `gpudash_model::sentences!` (its `en:` line).
        let declared: usize = sources
            .iter()
            .map(|(_, text)| text.matches(": Sentence =").count() + text.matches(") {\n        en: ").count())
            .sum();
        assert_eq!(all.len(), declared, "a sentence declared in a catalogue is missing from its ALL list");
        let keys: BTreeSet<&str> = all.iter().map(|s| s.key).collect();
        assert_eq!(keys.len(), all.len(), "keys are unique");
        for s in &all {
            let family = s.key.split('.').next().unwrap_or("");
            assert!(sources.iter().any(|(f, _)| f == family), "{}: a key begins with its catalogue's family", s.key);
            assert_eq!(sentence(s.key), Some(*s));
            // Said with a value for each name either language takes, then said again from how
            // it was made: word for word, in both languages.
            let args: Vec<(&'static str, Said)> = names(s.en)
                .union(&names(s.ja))
                .map(|n| (&*Box::leak(n.clone().into_boxed_str()), Said::pair(format!("<{n}>"), format!("〈{n}〉"))))
                .collect();
            let refs: Vec<(&'static str, &Said)> = args.iter().map(|(n, v)| (*n, v)).collect();
            let said = s.say(&refs);
            for lang in [Lang::En, Lang::Ja] {
                let template = s.template(lang);
                assert!(fill_named(template, |n| refs.iter().find(|(k, _)| *k == n).map(|_| "")).1, "{}", s.key);
                assert_eq!(
                    say(&said.form(), lang).as_deref(),
                    Some(gpudash_model::i18n::Say::say(&said, lang)),
                    "{}",
                    s.key
                );
            }
        }
        assert_eq!(sentence("nodes.no-such-sentence"), None);
    }

    /// Every scenario file the tests hold, derived.
    fn scenario_views() -> Vec<(String, ClusterView)> {
        let mut out = Vec::new();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut dirs = vec![root.join("tests/scenarios"), root.join("sim/scenarios")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("tests/scenarios").flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&p) else { continue };
                let objects = text.split("kind: Timeline").next().unwrap_or("");
                let Ok(inputs) = from_kubectl_yaml(objects) else { continue };
                let now = jiff::Timestamp::from_second(1_796_000_000).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
                let view = derive(&inputs, &Options::default(), gpudash_model::model::Source::default(), 1, now);
                out.push((p.display().to_string(), view));
            }
        }
        out
    }

    #[test]
    fn every_diagnosis_of_every_scenario_is_said_again_from_its_form_word_for_word_in_both_languages() {
        let mut keys = BTreeSet::new();
        let mut checked = 0;
        for (file, view) in scenario_views() {
            let saids: Vec<&Said> = view
                .diagnoses
                .iter()
                .map(|d| &d.message)
                .chain(view.pending.iter().flat_map(|p| p.problems.iter().map(|d| &d.message)))
                .collect();
            for m in saids {
                let form = m.form();
                // As history keeps it: through JSON and back.
                let text = serde_json::to_string(&form).expect("a form as JSON");
                let back: Form = serde_json::from_str(&text).expect("a form from JSON");
                assert_eq!(say(&back, Lang::En).as_deref(), Some(m.en.as_ref()), "{file}: {text}");
                assert_eq!(say(&back, Lang::Ja).as_deref(), Some(m.ja.as_ref()), "{file}: {text}");
                collect_keys(&form, &mut keys);
                checked += 1;
            }
        }
        assert!(checked > 25, "only {checked} diagnoses in the scenarios: {keys:?}");
        let families: BTreeSet<&str> = keys.iter().filter_map(|k| k.split('.').next()).collect();
        for f in ["nodes", "plugin", "down", "memory", "waiting", "quota", "runtime", "dra"] {
            assert!(families.contains(f), "no {f} sentence said in any scenario: {keys:?}");
        }
    }

    fn collect_keys(f: &Form, keys: &mut BTreeSet<String>) {
        match f {
            Form::Sentence { key, args } => {
                keys.insert(key.to_string());
                args.iter().for_each(|(_, a)| collect_keys(a, keys));
            }
            Form::Join { parts, .. } => parts.iter().for_each(|p| collect_keys(p, keys)),
            Form::Text(_) | Form::Pair { .. } => {}
        }
    }

    #[test]
    fn a_form_this_build_cannot_say_is_none_so_history_keeps_the_words() {
        let gone = Form::Sentence { key: "nodes.removed_since".into(), args: Vec::new() };
        assert_eq!(say(&gone, Lang::Ja), None);
        let missing_arg = Form::Sentence { key: "quota.held".into(), args: Vec::new() };
        assert_eq!(say(&missing_arg, Lang::En), None, "a placeholder without its argument");
        let inside = Form::Join { parts: vec![Form::Text("a".into()), gone], en: "; ".into(), ja: "。".into() };
        assert_eq!(say(&inside, Lang::En), None);
    }
}
