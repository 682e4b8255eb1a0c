use super::*;

/// The placeholders a template uses, sorted.
fn placeholders(s: &str) -> Vec<String> {
    let mut out: Vec<String> = s
        .match_indices('{')
        .filter_map(|(i, _)| s.get(i..i + 3).filter(|p| p.ends_with('}') && p.as_bytes()[1].is_ascii_digit()))
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

fn check(entries: Vec<(&'static str, &'static str, &'static str)>) {
    for (key, en, ja) in entries {
        assert!(!en.trim().is_empty() && !ja.trim().is_empty(), "{key}: an empty text");
        assert_eq!(placeholders(en), placeholders(ja), "{key}: the two languages use different placeholders");
        assert!(!en.chars().any(is_japanese), "{key}: Japanese in the English text");
    }
}

#[test]
fn every_entry_has_both_languages_with_the_same_placeholders() {
    check(T::entries());
    #[cfg(not(feature = "hydrate"))]
    check(S::entries());
}

#[test]
fn accept_language_picks_the_best_of_ours() {
    assert_eq!(Lang::from_accept_language("ja,en-US;q=0.8"), Some(Lang::Ja));
    assert_eq!(Lang::from_accept_language("en-US,en;q=0.9,ja;q=0.8"), Some(Lang::En));
    assert_eq!(Lang::from_accept_language("fr-FR, ja-JP;q=0.5"), Some(Lang::Ja));
    assert_eq!(Lang::from_accept_language("ja;q=0, en;q=0.1"), Some(Lang::En));
    assert_eq!(Lang::from_accept_language("de, *;q=0.5"), None);
    assert_eq!(Lang::from_accept_language(""), None);
    assert_eq!(Lang::from_accept_language("ja;q=bogus"), None);
    assert_eq!(Lang::parse("JA-jp"), Some(Lang::Ja));
}

#[test]
fn templates_fill_in_any_order_and_survive_odd_braces() {
    assert_eq!(fill("{1}中 {0}", &["a", "b"]), "b中 a");
    assert_eq!(fill("{x} {0", &["a"]), "{x} {0");
    assert_eq!(fill("{3}", &["a"]), "");
    assert_eq!(fill("日本{0}語", &["x"]), "日本x語");
}

#[test]
fn durations_in_both_languages() {
    assert_eq!(duration(242, Lang::En), "4m 2s");
    assert_eq!(duration(242, Lang::Ja), "4分2秒");
    assert_eq!(fill(T::JA.pending_waiting, &[&duration(242, Lang::Ja)]), "◔ 4分2秒待機中");
    assert_eq!(duration(3 * 3600 + 300, Lang::Ja), "3時間5分");
    assert_eq!(duration(2 * 86_400 + 4 * 3600, Lang::En), "2d 4h");
    assert_eq!(duration(2 * 86_400 + 4 * 3600, Lang::Ja), "2日4時間");
    assert_eq!(duration(-5, Lang::Ja), "0秒");
}

#[cfg(not(feature = "hydrate"))]
#[test]
fn a_said_sentence_is_written_in_the_answer_language() {
    let n = 3;
    let s = crate::say!("{n} pods wait", "{n} 個の Pod が待機中");
    assert_eq!(serde_json::to_string(&s).ok().as_deref(), Some("\"3 pods wait\""));
    let ja = to_json(Lang::Ja, &s).ok();
    assert_eq!(ja.as_deref(), Some("\"3 個の Pod が待機中\""));
    // Inside what holds it (an option, a list, a map, a struct), and plain JSON in English after.
    let nested = serde_json::json!({"a": [null, "x"]});
    let held = (Some(&s), vec![&s], std::collections::BTreeMap::from([("k", &s)]), nested);
    assert_eq!(
        to_json(Lang::Ja, &held).ok().as_deref(),
        Some(
            "[\"3 個の Pod が待機中\",[\"3 個の Pod が待機中\"],{\"k\":\"3 個の Pod が待機中\"},{\"a\":[null,\"x\"]}]"
        )
    );
    assert_eq!(serde_json::to_string(&s).ok().as_deref(), Some("\"3 pods wait\""));
    // A string read back is the same in both.
    let back: Said = serde_json::from_str("\"x\"").unwrap_or_default();
    assert_eq!(back, Said::same("x"));
}

#[cfg(not(feature = "hydrate"))]
#[test]
fn a_template_fills_its_named_placeholders_and_keeps_doubled_braces() {
    let v = |n: &str| match n {
        "node" => Some("orin-01"),
        "n" => Some("2"),
        _ => None,
    };
    assert_eq!(fill_named("{node} has {n} free", v), ("orin-01 has 2 free".to_string(), true));
    assert_eq!(fill_named("-p '{{\"a\":{{}}}}' on {node}", v), ("-p '{\"a\":{}}' on orin-01".to_string(), true));
    assert_eq!(fill_named("{missing} and {node}", v), ("{missing} and orin-01".to_string(), false));
    assert_eq!(fill_named("a lone } and { stay", v), ("a lone } and { stay".to_string(), true));
    assert_eq!(fill_named("日本語 {n} 個", v), ("日本語 2 個".to_string(), true));
}

#[cfg(not(feature = "hydrate"))]
#[test]
fn a_catalogue_sentence_says_both_languages_and_remembers_how_it_was_made() {
    const HELD: Sentence =
        Sentence { key: "test.held", en: "{what} held by {who}", ja: "{who} が {what} を使用中" };
    const WHO: Sentence = Sentence { key: "test.who", en: "pod {p}", ja: "Pod {p}" };
    let who = WHO.say(&[("p", &Said::text("infer-0"))]);
    let s = HELD.say(&[("what", &Said::text("2 GPUs")), ("who", &who)]);
    assert_eq!((s.en.as_ref(), s.ja.as_ref()), ("2 GPUs held by pod infer-0", "Pod infer-0 が 2 GPUs を使用中"));
    let lookup = |k: &str| [HELD, WHO].into_iter().find(|s| s.key == k);
    assert_eq!(s.form().say(Lang::Ja, &lookup).as_deref(), Some(s.ja.as_ref()));
    // Joined and appended, with words around: the form says the whole in either language.
    let mut all = Said::join(&[s.clone(), Said::same("x")], "; ", "。");
    all.push(&crate::say!(" (since 5m)", "（5分前から）"));
    for lang in [Lang::En, Lang::Ja] {
        assert_eq!(all.form().say(lang, &lookup).as_deref(), Some(all.say(lang)), "{lang:?}");
    }
    // Through JSON, as history keeps it.
    let text = serde_json::to_string(&all.form()).unwrap();
    let back: Form = serde_json::from_str(&text).unwrap();
    assert_eq!(back.say(Lang::Ja, &lookup).as_deref(), Some(all.ja.as_ref()));
    // Words alone carry no form, and their form is their words.
    assert!(Said::same("x").form.is_none() && crate::say!("a", "b").form.is_none());
    assert_eq!(crate::say!("a", "b").form(), Form::Pair { en: "a".into(), ja: "b".into() });
}
