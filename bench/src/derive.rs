//! `gpudash-bench --derive N`: the derivation alone, in process, on a generated cluster of N
//! nodes — what one revision costs gpudash when one pod of 30 000 changes, phase by phase, and
//! how much memory the decoded objects take. No HTTP, no simulator: the figures isolate the
//! work the live loop does between a watch event and the stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gpudash::derive::{derive_cached, Cache, Inputs, Options};
use gpudash::pod::Pod;
use k8s_openapi::api::core::v1::{Event, Node};
use serde_json::Value;

pub fn decode<K: serde::de::DeserializeOwned>(objects: &[Value], kind: &str) -> Vec<Arc<K>> {
    objects
        .iter()
        .filter(|o| o["kind"] == kind)
        .filter_map(|o| serde_json::from_value(o.clone()).ok())
        .map(Arc::new)
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Median of the samples, in ms.
fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v.get(v.len() / 2).map_or(0.0, |d| ms(*d))
}

/// The generated pods as text, as the API server would send them (uid, resourceVersion and
/// creation time set), to time decoding as the watcher does it.
fn pods_as_sent(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .filter(|o| o["kind"] == "Pod")
        .enumerate()
        .map(|(i, o)| {
            let mut o = o.clone();
            o["metadata"]["uid"] = Value::from(format!("00000000-0000-4000-8000-{i:012}"));
            o["metadata"]["resourceVersion"] = Value::from(format!("{}", i + 1));
            o["metadata"]["creationTimestamp"] = Value::from("2026-12-01T00:00:00Z");
            o.to_string()
        })
        .collect()
}

/// Round `r`'s change: one claim's pod leaves or comes back (`dra`), else one running pod's
/// memory request changes, as under churn.
fn change_one(inputs: &mut Inputs, r: usize, dra: bool) {
    if dra {
        // One claim's pod leaves (reservedFor emptied) or comes back, as under churn.
        let i = (r * 7919) % inputs.claims.len();
        let mut c = (*inputs.claims[i]).clone();
        if let Some(st) = c.status.as_mut() {
            if st.reserved_for.is_empty() {
                st.reserved_for.push(gpudash::dra::Consumer { resource: "pods".into(), name: "back".into() });
            } else {
                st.reserved_for.clear();
            }
        }
        inputs.claims[i] = Arc::new(c);
    } else {
        // One running pod's memory request changes (a new resourceVersion), as under churn.
        let i = (r * 7919) % inputs.pods.len();
        let mut p = (*inputs.pods[i]).clone();
        p.metadata.resource_version = Some(format!("{}", 1_000_000 + r));
        if let Some(c) = p.spec.as_mut().and_then(|s| s.containers.first_mut()) {
            let req = c.resources.get_or_insert_with(Default::default).requests.get_or_insert_with(Default::default);
            let mem = k8s_openapi::apimachinery::pkg::api::resource::Quantity(format!("{}Mi", 100 + r));
            req.0.retain(|(k, _)| k != "memory");
            req.0.push(("memory".into(), mem));
        }
        inputs.pods[i] = Arc::new(p);
    }
}

/// Prints the phase timings of `rounds` revisions, each after one pod changed.
/// With `dra`, the cluster is the GPU Operator's DRA mode (8 GPUs a node, 8 claims a node) and
/// each revision changes one claim's pod (reservedFor emptied or refilled) instead of a pod.
pub fn run(nodes: usize, rounds: usize, dra: bool) {
    let generated = if dra { crate::cluster::generate_dra(nodes, 30) } else { crate::cluster::generate(nodes, 30) };
    let pod_json = pods_as_sent(&generated.objects);
    let before = crate::rss_kib(std::process::id());
    let t = Instant::now();
    // Decoded and stripped as the watcher does it.
    let pods: Vec<Arc<Pod>> =
        pod_json.iter().filter_map(|s| Pod::from_json_stripped(s.as_bytes()).ok()).map(Arc::new).collect();
    let decode_time = t.elapsed();
    let pod_kib = crate::rss_kib(std::process::id()).saturating_sub(before);
    let mut inputs = Inputs {
        nodes: decode::<Node>(&generated.objects, "Node"),
        pods,
        events: decode::<Event>(&generated.objects, "Event"),
        slices: decode(&generated.objects, "ResourceSlice"),
        claims: decode(&generated.objects, "ResourceClaim"),
        device_classes: decode(&generated.objects, "DeviceClass"),
        ..Inputs::default()
    };
    let source = app::model::Source { synced: true, ..app::model::Source::default() };
    let opts = Options::default();
    let mut cache = Cache::default();
    let now = jiff::Timestamp::now();
    let t = Instant::now();
    let mut prev = derive_cached(&inputs, &opts, source.clone(), 0, now, &mut cache);
    let cold = t.elapsed();
    // As the server's first derivation after the lists: each pod's facts found by the watcher
    // as it stored the pod, nothing else cached; in turn, and with the server's second thread.
    let first = |fork: &dyn Fn(&mut Cache) -> app::model::ClusterView| {
        median(
            (0..5)
                .map(|_| {
                    let mut fresh = Cache::default();
                    let t = Instant::now();
                    let _ = fork(&mut fresh);
                    t.elapsed()
                })
                .collect(),
        )
    };
    let in_turn = first(&|c: &mut Cache| derive_cached(&inputs, &opts, source.clone(), 0, now, c));
    let threads = first(&|c: &mut Cache| {
        gpudash::derive::derive_forked(&inputs, &opts, source.clone(), 0, now, c, &gpudash::publish::Threads)
    });
    print_metrics_cardinality(&prev, nodes);
    let (mut derive, mut compare, mut delta, mut encode, mut bytes) = (vec![], vec![], vec![], vec![], 0);
    for r in 0..rounds {
        change_one(&mut inputs, r, dra);
        let t = Instant::now();
        let view = derive_cached(&inputs, &opts, source.clone(), r as u64 + 1, now, &mut cache);
        derive.push(t.elapsed());
        let t = Instant::now();
        let changed = view.nodes != prev.nodes || view.pending != prev.pending || view.diagnoses != prev.diagnoses;
        compare.push(t.elapsed());
        let t = Instant::now();
        let d = app::model::ViewDelta::between(&prev, &view);
        delta.push(t.elapsed());
        let t = Instant::now();
        let text = serde_json::to_string(&d).unwrap_or_default();
        encode.push(t.elapsed());
        bytes += text.len();
        assert!(changed, "a changed object changes the view");
        prev = view;
    }
    println!(
        "derivation alone, {nodes} nodes, {} pods, {} claims, {rounds} revisions of one changed {} each (medians):",
        inputs.pods.len(),
        inputs.claims.len(),
        if dra { "claim" } else { "pod" }
    );
    println!(
        "| decode pods (JSON → projected pod) | pods in memory | derive | compare | delta | delta JSON | delta bytes |"
    );
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| {:.0} ms ({:.0} pods/s) | {:.0} MiB ({:.1} KiB a pod) | {:.1} ms | {:.1} ms | {:.1} ms | {:.2} ms | {} |",
        ms(decode_time),
        inputs.pods.len() as f64 / decode_time.as_secs_f64(),
        pod_kib as f64 / 1024.0,
        pod_kib as f64 / inputs.pods.len().max(1) as f64,
        median(derive),
        median(compare),
        median(delta),
        median(encode),
        bytes / rounds.max(1)
    );
    println!("first derivation (nothing cached): {:.1} ms", ms(cold));
    println!(
        "first derivation with the pods' facts found (as the server's after the lists), median of 5: in turn {in_turn:.1} ms, \
         with the server's second thread {threads:.1} ms"
    );
    print_card_weight(&prev);
}

/// What the browser's first (whole) view weighs by field of its cards: the stream's bytes at
/// this size, and where they go.
fn print_card_weight(view: &app::model::ClusterView) {
    let whole = serde_json::to_string(&app::model::WithCards(view)).unwrap_or_default();
    let cards: Vec<serde_json::Value> =
        view.nodes.iter().filter_map(|n| serde_json::to_value(app::model::AsCard(n)).ok()).collect();
    let mut by_field: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for c in &cards {
        for (k, v) in c.as_object().into_iter().flatten() {
            *by_field.entry(k.clone()).or_default() += v.to_string().len();
        }
    }
    let n = cards.len().max(1);
    print_first_view_writes(view);
    println!(
        "first view with cards: {:.2} MB ({:.0} B a node); by field, bytes a node:",
        whole.len() as f64 / 1e6,
        whole.len() as f64 / n as f64
    );
    let mut fields: Vec<(String, usize)> = by_field.into_iter().collect();
    fields.sort_by_key(|f| std::cmp::Reverse(f.1));
    for (k, b) in fields.iter().take(8) {
        println!("  {k}: {:.0}", *b as f64 / n as f64);
    }
}

/// How long the first view (cards) takes to write: plain JSON, and through
/// `app::i18n::to_json` in each language (what the stream serves), median of 5.
fn print_first_view_writes(view: &app::model::ClusterView) {
    let time = |f: &dyn Fn() -> usize| {
        median(
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(f());
                    start.elapsed()
                })
                .collect(),
        )
    };
    let cards = app::model::WithCards(view);
    let plain = time(&|| serde_json::to_string(&cards).map(|s| s.len()).unwrap_or(0));
    let en = time(&|| app::i18n::to_json(app::i18n::Lang::En, &cards).map(|s| s.len()).unwrap_or(0));
    let ja = time(&|| app::i18n::to_json(app::i18n::Lang::Ja, &cards).map(|s| s.len()).unwrap_or(0));
    println!("first view with cards written: plain JSON {plain:.1} ms, in English {en:.1} ms, in Japanese {ja:.1} ms");
}

/// The `/metrics` page of this view: series per metric family and its size (docs/alerts.md's
/// cardinality figures).
fn print_metrics_cardinality(view: &app::model::ClusterView, nodes: usize) {
    let text = gpudash::metrics::render(view, gpudash::metrics::Health::default());
    let mut families: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let name = line.split(['{', ' ']).next().unwrap_or("");
        *families.entry(name).or_default() += 1;
    }
    let total: usize = families.values().sum();
    println!(
        "/metrics at {nodes} nodes: {total} series, {:.1} KiB ({} diagnoses open)",
        text.len() as f64 / 1024.0,
        view.diagnoses.len()
    );
    for (name, n) in families.iter().filter(|(_, n)| **n > 1) {
        println!("  {name}: {n}");
    }
}
