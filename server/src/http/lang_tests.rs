//! Every page in Japanese and in English, rendered in process from the demo cluster's view:
//! no user-visible English sentence left on a Japanese page (Kubernetes words, commands and
//! the cluster's own names aside), no Japanese on an English one, no unfilled placeholder.

use app::i18n::is_japanese;

use super::*;

/// Words that stay as operators type them: Kubernetes kinds and fields, units, product and
/// tool names, and the words of the commands the advice quotes.
const ALLOWED: &[&str] = &[
    "Kubernetes",
    "Pod",
    "Pods",
    "Node",
    "Nodes",
    "Namespace",
    "RuntimeClass",
    "ResourceQuota",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Claim",
    "Claims",
    "ResourceSlice",
    "DeviceClass",
    "DaemonSet",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "Pending",
    "Running",
    "Ready",
    "NotReady",
    "Terminating",
    "ContainerCreating",
    "CrashLoopBackOff",
    "Error",
    "True",
    "False",
    "Unknown",
    "MemoryPressure",
    "DiskPressure",
    "PIDPressure",
    "NetworkUnavailable",
    "GPU",
    "CPU",
    "MIG",
    "MPS",
    "DRA",
    "UUID",
    "RAM",
    "Request",
    "Limit",
    "requests",
    "limits",
    "request",
    "limit",
    "claim",
    "agent",
    "gpudash",
    "kubelet",
    "containerd",
    "nvidia",
    "NVIDIA",
    "Jetson",
    "Orin",
    "AGX",
    "Nano",
    "Xavier",
    "Tegra",
    "K3s",
    "kubectl",
    "Helm",
    "Toolkit",
    "Container",
    "GiB",
    "MiB",
    "KiB",
    "TiB",
    "UTC",
    "taint",
    "toleration",
    "tolerations",
    "nodeSelector",
    "affinity",
    "selector",
    "runtimeClassName",
    "Xid",
    "dmesg",
    "tegrastats",
    "grep",
    "xid",
    "logs",
    "previous",
    "get",
    "daemonset",
    "yaml",
    "edit",
    "resourcequota",
    "delete",
    "resourceclaim",
    "pods",
    "wide",
    "resourceslices",
    "deviceclasses",
    "runc",
    "feature",
    "discovery",
    "cordon",
    "anti",
    "English",
    "Bus",
    "PCIe",
    "SXM",
    "HBM",
    "Tesla",
    "RTX",
    "Ada",
    "Generation",
    "Ampere",
    "Hopper",
    "A",
    "H",
    "L",
    "T",
    "namespace",
    "default",
    "Condition",
    "NoSchedule",
    "NoExecute",
    // The kubelet's and the scheduler's words after binding (container states, reasons).
    "OOMKilled",
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "UnexpectedAdmissionError",
    "MemoryPressure",
    "DiskPressure",
    "PIDPressure",
    "PriorityClass",
    "preemptionPolicy",
    "PreferNoSchedule",
    "YAML",
    "JSON",
    "key",
    "value",
];

/// The text a reader sees (text nodes and `alt`/`title`/`aria-label`/`placeholder`), leaving out
/// scripts, styles and every element marked as another language than the page's.
fn visible(html: &str, page_lang: &str) -> String {
    let mut out = String::new();
    let mut skip: Vec<String> = Vec::new(); // tags of the skipped elements still open
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        if skip.is_empty() {
            out.push_str(&rest[..i]);
            out.push(' ');
        }
        let Some(j) = rest[i..].find('>') else { break };
        let tag = &rest[i + 1..i + j];
        rest = &rest[i + j + 1..];
        let name: String = tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if tag.starts_with('/') {
            if skip.last() == Some(&name) {
                skip.pop();
            }
            continue;
        }
        if matches!(name.as_str(), "script" | "style") {
            let close = format!("</{name}>");
            rest = rest.find(&close).map_or("", |k| &rest[k + close.len()..]);
            continue;
        }
        let void = tag.ends_with('/') || matches!(name.as_str(), "meta" | "link" | "input" | "img" | "br");
        let other_lang = attr(tag, "lang").is_some_and(|l| l != page_lang);
        if !skip.is_empty() || other_lang {
            if !void {
                skip.push(name);
            }
            continue;
        }
        for a in ["alt", "title", "aria-label", "placeholder"] {
            if let Some(v) = attr(tag, a) {
                out.push_str(&v);
                out.push(' ');
            }
        }
    }
    out.push_str(rest);
    out.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#x27;", "'")
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(tag[i..].split('"').next()?.to_string())
}

/// English words on a page that should be in Japanese: alphabetic words that are not allowed
/// Kubernetes terms and not part of the cluster's own names (identifiers with `-./_:=` or digits
/// are names, not sentences).
fn english_left(text: &str, data: &std::collections::HashSet<String>) -> Vec<String> {
    text.split(|c: char| {
        c.is_whitespace() || is_japanese(c) || "()（）「」、。：,;:!?…·—\"'`[]{}<>|=×/✓✗✖⚠◔⊘⏸ℹ▲●◌◷└+".contains(c)
    })
    .filter(|w| !w.is_empty())
    .filter(|w| !w.chars().any(|c| c.is_ascii_digit() || "-._@%#*&~$".contains(c)))
    .filter(|w| w.chars().all(|c| c.is_ascii_alphabetic()) && w.len() >= 2)
    .filter(|w| !ALLOWED.contains(w) && !data.contains(*w))
    .map(str::to_string)
    .collect()
}

/// The demo cluster's names (nodes, namespaces, pods, resources, products, labels, conditions),
/// as words: data the pages show as it is.
fn data_words(v: &ClusterView) -> std::collections::HashSet<String> {
    let mut s: Vec<String> = Vec::new();
    for n in &v.nodes {
        s.extend([n.name.clone(), n.arch.clone()]);
        s.extend(n.namespaces.iter().cloned());
        s.extend(n.labels.iter().flat_map(|(k, v)| [k.clone(), v.clone()]));
        s.extend(
            n.conditions.iter().flat_map(|c| [c.type_.clone(), c.status.clone(), c.reason.clone().unwrap_or_default()]),
        );
        s.extend(n.default_runtime.clone());
        for g in &n.gpu_resources {
            s.push(g.resource.clone());
            s.extend(g.product.clone());
            s.extend(g.holders.iter().flat_map(|h| [h.namespace.clone(), h.name.clone()]));
            s.extend(g.devices.iter().flat_map(|d| [d.name.clone(), d.product.clone().unwrap_or_default()]));
        }
        s.extend(n.pods.iter().flat_map(|p| [p.namespace.clone(), p.name.clone()]));
        s.extend(n.gpu_users_outside.iter().flat_map(|p| [p.namespace.clone(), p.name.clone()]));
    }
    for p in v.pending.iter().chain(&v.blocked) {
        s.extend([p.namespace.clone(), p.name.clone()]);
        s.extend(p.scheduler.clone());
        s.extend(p.workload.clone());
        s.extend(
            p.claims.iter().flat_map(|c| [c.name.clone(), c.state.clone(), c.device_class.clone().unwrap_or_default()]),
        );
    }
    for d in &v.diagnoses {
        s.extend([d.code.to_string(), d.kind.to_string(), d.name.clone()]);
        s.extend(d.namespace.clone());
    }
    for q in &v.quotas {
        s.extend([q.namespace.clone(), q.name.clone()]);
        s.extend(q.scopes.iter().cloned());
    }
    s.iter()
        .flat_map(|x| x.split(|c: char| !c.is_ascii_alphanumeric()).map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn demo_view() -> ClusterView {
    let now = jiff::Timestamp::from_second(1_796_215_393).unwrap_or_default();
    let src = Source { synced: true, mode: app::model::SourceMode::Demo, ..Source::default() };
    crate::derive::derive(&demo_inputs(), &crate::derive::Options::default(), src, 1, now)
}

/// Checks that a page (`what`) is in `lang` (`ja` or `en`): its `<html lang>`, no unfilled
/// placeholder, and no English left on a Japanese page (`data`: the names it shows as they are)
/// or Japanese on an English one. What is wrong joins `problems`.
fn speaks(html: &str, lang: &str, what: &str, data: &std::collections::HashSet<String>, problems: &mut Vec<String>) {
    assert!(html.contains(&format!("<html lang=\"{lang}\"")), "{what} ({lang}): <html lang> is not {lang}");
    let text = visible(html, lang);
    if text.contains("{0}") || text.contains("{1}") {
        problems.push(format!("{what} ({lang}): an unfilled placeholder"));
    }
    if lang == "ja" {
        let left = english_left(&text, data);
        if !left.is_empty() {
            problems.push(format!("{what} (ja): English left: {left:?}"));
        }
        assert!(text.chars().filter(|c| is_japanese(*c)).count() > 10, "{what}: hardly any Japanese");
    } else if let Some(c) = text.chars().find(|c| is_japanese(*c)) {
        problems.push(format!("{what} (en): Japanese {c:?} on the English page"));
    }
}

#[tokio::test]
async fn every_page_speaks_the_language_it_was_asked_for() {
    let _ = any_spawner::Executor::init_tokio();
    let view = demo_view();
    assert!(!view.diagnoses.is_empty() && !view.pending.is_empty(), "the demo has diagnoses and pending pods");
    let data = data_words(&view);
    let node = view.nodes.iter().find(|n| !n.gpu_resources.is_empty()).map(|n| n.name.clone()).unwrap_or_default();
    let r = Setup::new(view).router();
    let pages = [
        "/".to_string(),
        "/pending".into(),
        "/diagnoses".into(),
        "/history".into(),
        "/fit".into(),
        "/quotas".into(),
        format!("/nodes/{node}"),
        "/?kiosk=1".into(),
        "/pending?kiosk=1".into(),
        "/?embed=1".into(),
        "/no-such-page".into(),
    ];
    let mut problems = Vec::new();
    for path in &pages {
        for (lang, via_header) in [("ja", false), ("ja", true), ("en", false)] {
            let req = if via_header {
                Request::get(path.as_str()).header(header::ACCEPT_LANGUAGE, "ja,en-US;q=0.7").body(Body::empty())
            } else {
                let sep = if path.contains('?') { '&' } else { '?' };
                Request::get(format!("{path}{sep}lang={lang}")).body(Body::empty())
            }
            .unwrap_or_default();
            let (_, _, body) = send(&r, req).await;
            speaks(&String::from_utf8_lossy(&body), lang, path, &data, &mut problems);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn the_api_keeps_codes_and_numbers_and_writes_sentences_in_the_asked_language() {
    let r = Setup::new(demo_view()).router();
    let (_, h_en, en) = send(&r, get("/api/v1/cluster")).await;
    let req =
        Request::get("/api/v1/cluster").header(header::ACCEPT_LANGUAGE, "ja").body(Body::empty()).unwrap_or_default();
    let (_, _, ja) = send(&r, req).await;
    let (_, _, ja_q) = send(&r, get("/api/v1/cluster?lang=ja")).await;
    assert_eq!(ja, ja_q, "?lang=ja and Accept-Language: ja answer the same");
    assert_eq!(h_en.get(header::VARY).and_then(|v| v.to_str().ok()), Some("Accept-Language"));
    let (en, ja) = (json(&en), json(&ja));
    let codes = |v: &serde_json::Value| {
        v["diagnoses"].as_array().map(|d| {
            d.iter().map(|x| (x["code"].clone(), x["severity"].clone(), x["name"].clone())).collect::<Vec<_>>()
        })
    };
    assert_eq!(codes(&en), codes(&ja), "codes, severities and names do not depend on the language");
    assert_eq!(en["totals"], ja["totals"]);
    let msg = |v: &serde_json::Value| v["diagnoses"][0]["message"].as_str().unwrap_or("").to_string();
    assert!(!msg(&en).is_empty() && !msg(&en).chars().any(is_japanese), "{}", msg(&en));
    assert!(msg(&ja).chars().any(is_japanese), "{}", msg(&ja));
}

/// The fleet page (and its kiosk) by the same rules: every state of a card, the status line,
/// the history headings; a site's own error text is marked as English and left as it is.
#[test]
fn the_fleet_page_speaks_the_language_it_was_asked_for() {
    use crate::fleet::view::{Family, FleetView, SiteState, SiteTotals, SiteView};
    let totals = SiteTotals {
        nodes: 6,
        nodes_ready: 5,
        gpu_capacity: 15,
        gpu_allocated: 10,
        pending: 2,
        critical: 1,
        warning: 3,
    };
    let site = |name: &str, state: SiteState, since: Option<&str>, totals: Option<SiteTotals>| SiteView {
        name: name.into(),
        url: format!("https://{name}.example/gpu"),
        state,
        stale_since: since.map(str::to_string),
        revision: totals.as_ref().map(|_| 7),
        totals,
        families: vec![Family { family: "nvidia.com/gpu".into(), held: 8, total: 8 }],
        error: (state != SiteState::Live).then(|| "cannot connect: connection refused".to_string()),
        cut: None,
    };
    let v = FleetView {
        generated_at: "2026-12-05T07:00:00Z".into(),
        sites: vec![
            site("plant-a", SiteState::Live, None, Some(totals.clone())),
            site("plant-b", SiteState::Stale, Some("2026-12-05T06:58:00Z"), Some(totals.clone())),
            site("plant-c", SiteState::Unreachable, Some("2026-12-05T06:50:00Z"), None),
            site("plant-d", SiteState::Unreachable, None, None),
        ],
    };
    let data: std::collections::HashSet<String> =
        ["plant", "a", "b", "c", "d", "nvidia", "com", "gpu"].iter().map(|s| s.to_string()).collect();
    let mut problems = Vec::new();
    for (kiosk, embed) in [(false, false), (true, false), (false, true)] {
        for lang in [app::i18n::Lang::Ja, app::i18n::Lang::En] {
            let shown = crate::fleet::page::Shown {
                base: String::new(),
                kiosk,
                embed,
                range: "24h",
                lang,
                zone: app::time::Zone::default(),
            };
            let html = crate::fleet::page::page(&v, &shown);
            speaks(&html, lang.code(), &format!("fleet kiosk={kiosk} embed={embed}"), &data, &mut problems);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
