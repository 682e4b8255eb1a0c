//! `/metrics`: the derived gauges and gpudash's own health in the Prometheus text format.

use std::fmt::Write;

use app::model::ClusterView;

/// Process-level figures gathered outside the view.
#[derive(Debug, Clone, Copy, Default)]
pub struct Health {
    /// Open `/api/v1/stream` clients.
    pub stream_clients: u64,
    /// Resident memory of this process, when readable.
    pub rss_bytes: Option<u64>,
    /// Seconds since the view's watch went stale (0 while live).
    pub stale_seconds: f64,
    /// Now, in Unix seconds (the ages of Pending pods are measured to it).
    pub now: i64,
}

/// Escapes a label value as the text format requires.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

struct Out(String);

impl Out {
    fn head(&mut self, name: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} gauge");
    }
    fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, val)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", esc(val));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {v}");
    }
}

/// How long the latest derivation took, in microseconds.
pub static DERIVE_MICROS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Resident memory of this process (Linux), in bytes.
pub fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Renders the exposition.
pub fn render(v: &ClusterView, h: Health) -> String {
    let mut o = Out(String::with_capacity(8192));
    o.head("gpudash_build_info", "gpudash version.");
    o.sample("gpudash_build_info", &[("version", env!("CARGO_PKG_VERSION"))], 1.0);
    gpu_series(&mut o, v);
    node_series(&mut o, v);
    pending_series(&mut o, v, &h);
    down_series(&mut o, v);
    process_series(&mut o, v, &h);
    o.0
}

/// Each node's GPU units by resource: capacity, allocatable, held, out of service.
fn gpu_series(o: &mut Out, v: &ClusterView) {
    type Get = fn(&app::model::GpuResource) -> u64;
    let gauges: [(&str, &str, Get); 4] = [
        ("gpudash_gpu_capacity", "GPU units in the node's status.capacity.", |g| g.capacity),
        ("gpudash_gpu_allocatable", "GPU units in the node's status.allocatable.", |g| g.allocatable),
        ("gpudash_gpu_allocated", "GPU units held by pods bound to the node and not finished.", |g| g.allocated),
        (
            "gpudash_gpu_out_of_service",
            "GPU units the device plugin took out of service (capacity - allocatable).",
            |g| g.out_of_service,
        ),
    ];
    for (name, help, get) in gauges {
        o.head(name, help);
        for n in &v.nodes {
            for g in &n.gpu_resources {
                o.sample(name, &[("node", &n.name), ("resource", &g.resource)], get(g) as f64);
            }
        }
    }
}

/// Each node's state, GPU users outside the scheduler, holders and memory.
fn node_series(o: &mut Out, v: &ClusterView) {
    o.head("gpudash_node_down", "1 when the node's Ready condition is Unknown or False.");
    for n in &v.nodes {
        o.sample("gpudash_node_down", &[("node", &n.name)], if n.down.is_some() { 1.0 } else { 0.0 });
    }
    o.head(
        "gpudash_gpu_users_outside_scheduler",
        "Pods using a node's GPU without requesting a GPU resource (sure ones).",
    );
    for n in &v.nodes {
        let sure = n.gpu_users_outside.iter().filter(|u| u.sure).count();
        o.sample("gpudash_gpu_users_outside_scheduler", &[("node", &n.name)], sure as f64);
    }
    o.head("gpudash_gpu_holders", "Pods holding units of a GPU resource.");
    for n in &v.nodes {
        for g in &n.gpu_resources {
            o.sample("gpudash_gpu_holders", &[("node", &n.name), ("resource", &g.resource)], g.holders.len() as f64);
        }
    }
    type MemGet = fn(&app::model::MemoryView) -> Option<u64>;
    let mem: [(&str, &str, MemGet); 4] = [
        (
            "gpudash_node_memory_allocatable_bytes",
            "Allocatable memory (the whole board on unified-memory nodes).",
            |m| Some(m.allocatable_bytes),
        ),
        ("gpudash_node_memory_requests_bytes", "Sum of memory requests of pods on the node.", |m| {
            Some(m.requested_bytes)
        }),
        (
            "gpudash_node_memory_limits_bytes",
            "Sum of memory limits of pods on the node (unbounded containers not counted).",
            |m| Some(m.limits_bytes),
        ),
        ("gpudash_node_memory_used_bytes", "Memory use from metrics.k8s.io (absent when unknown).", |m| m.used_bytes),
    ];
    for (name, help, get) in mem {
        o.head(name, help);
        for n in &v.nodes {
            if let Some(x) = get(&n.memory) {
                let unified = if n.unified_memory { "true" } else { "false" };
                o.sample(name, &[("node", &n.name), ("unified", unified)], x as f64);
            }
        }
    }
    o.head("gpudash_node_ready", "1 when the node's Ready condition is True.");
    for n in &v.nodes {
        o.sample("gpudash_node_ready", &[("node", &n.name)], if n.ready { 1.0 } else { 0.0 });
    }
}

/// Pending pods by reason and age, diagnoses, blocked workloads.
fn pending_series(o: &mut Out, v: &ClusterView, h: &Health) {
    o.head("gpudash_pending_pods", "Unscheduled Pending pods.");
    o.sample("gpudash_pending_pods", &[], v.pending.len() as f64);
    o.head("gpudash_pending_pods_by_reason", "Pending pods whose scheduler message gives this (normalised) reason.");
    let counts = reason_counts(&v.pending);
    for (r, n) in &counts {
        o.sample("gpudash_pending_pods_by_reason", &[("reason", r)], *n as f64);
    }
    o.head("gpudash_diagnoses", "Open diagnoses by code and severity.");
    let mut diags: std::collections::BTreeMap<(&str, &str), u64> = std::collections::BTreeMap::new();
    for d in &v.diagnoses {
        *diags.entry((d.code.as_str(), severity_label(d.severity))).or_default() += 1;
    }
    for ((c, s), n) in diags {
        o.sample("gpudash_diagnoses", &[("code", c), ("severity", s)], n as f64);
    }
    diagnosis_series(o, v);
    o.head(
        "gpudash_pending_oldest_seconds",
        "How long the longest-waiting Pending pod with this (normalised) reason has waited.",
    );
    for (r, age) in oldest_by_reason(&v.pending, &counts, h.now) {
        o.sample("gpudash_pending_oldest_seconds", &[("reason", &r)], age as f64);
    }
    o.head("gpudash_blocked_workloads", "Workloads a ResourceQuota keeps from creating their pods, by namespace.");
    let mut blocked: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for b in &v.blocked {
        *blocked.entry(b.namespace.as_str()).or_default() += 1;
    }
    for (ns, n) in blocked {
        o.sample("gpudash_blocked_workloads", &[("namespace", ns)], n as f64);
    }
}

/// Down nodes (since when, the pods they took down with them) and stale agents.
fn down_series(o: &mut Out, v: &ClusterView) {
    o.head("gpudash_node_down_since_timestamp_seconds", "When a down node's Ready condition last changed (Unix time).");
    for n in &v.nodes {
        if let Some(t) = n.down.as_ref().and_then(|d| d.since.as_deref()).and_then(app::time::parse_rfc3339) {
            o.sample("gpudash_node_down_since_timestamp_seconds", &[("node", &n.name)], t as f64);
        }
    }
    o.head(
        "gpudash_node_down_gpu_holder",
        "1 for each pod still bound to a down node and holding its GPU (the models the board took down with it).",
    );
    // One series per pod: capped, as a tenant can bind thousands of pods to a dark node (10,000
    // once made /metrics 2.66 MB); the rest are counted.
    let holders = v
        .nodes
        .iter()
        .filter(|n| n.down.is_some())
        .flat_map(|n| n.gpu_resources.iter().flat_map(move |g| g.holders.iter().map(move |p| (n, g, p))));
    let mut dropped = 0_u64;
    for (i, (n, g, p)) in holders.enumerate() {
        if i >= MAX_HOLDER_SERIES {
            dropped += 1;
            continue;
        }
        let labels =
            [("node", n.name.as_str()), ("namespace", &p.namespace), ("pod", &p.name), ("resource", &g.resource)];
        o.sample("gpudash_node_down_gpu_holder", &labels, 1.0);
    }
    o.head(
        "gpudash_node_down_gpu_holder_series_dropped",
        "Pods bound to down nodes beyond the series limit, not written as gpudash_node_down_gpu_holder.",
    );
    o.sample("gpudash_node_down_gpu_holder_series_dropped", &[], dropped as f64);
    o.head("gpudash_agent_stale", "1 while a node's gpudash-agent has not answered within three intervals.");
    for n in &v.nodes {
        if let Some(a) = &n.agent {
            o.sample("gpudash_agent_stale", &[("node", &n.name)], if a.stale { 1.0 } else { 0.0 });
        }
    }
}

/// The watch, the view, the derivation, the streams and the process.
fn process_series(o: &mut Out, v: &ClusterView, h: &Health) {
    o.head("gpudash_watch_synced", "1 once every watcher finished its first list.");
    o.sample("gpudash_watch_synced", &[], if v.source.synced { 1.0 } else { 0.0 });
    o.head("gpudash_watch_stale", "1 while the cluster watch is down.");
    o.sample("gpudash_watch_stale", &[], if v.source.stale_since.is_some() { 1.0 } else { 0.0 });
    o.head("gpudash_watch_stale_seconds", "Seconds since the cluster watch went down (0 while live).");
    o.sample("gpudash_watch_stale_seconds", &[], h.stale_seconds);
    o.head("gpudash_view_revision", "Revision of the published view.");
    o.sample("gpudash_view_revision", &[], v.revision as f64);
    o.head("gpudash_derive_seconds", "How long the latest derivation of the view took.");
    o.sample("gpudash_derive_seconds", &[], DERIVE_MICROS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6);
    o.head("gpudash_stream_clients", "Open live-stream (server-sent events) connections.");
    o.sample("gpudash_stream_clients", &[], h.stream_clients as f64);
    if let Some(rss) = h.rss_bytes {
        o.head("process_resident_memory_bytes", "Resident memory size in bytes.");
        o.sample("process_resident_memory_bytes", &[], rss as f64);
    }
}

/// Pods on down nodes written as `gpudash_node_down_gpu_holder` series at most; beyond, the rest
/// are counted in `gpudash_node_down_gpu_holder_series_dropped`.
pub const MAX_HOLDER_SERIES: usize = 1000;

/// Open diagnoses written as `gpudash_diagnosis` series at most; beyond, the rest are counted in
/// `gpudash_diagnosis_series_dropped` (the per-code counts in `gpudash_diagnoses` stay whole).
pub const MAX_DIAGNOSIS_SERIES: usize = 5000;

fn severity_label(s: app::model::Severity) -> &'static str {
    match s {
        app::model::Severity::Critical => "critical",
        app::model::Severity::Warning => "warning",
        app::model::Severity::Info => "info",
    }
}

/// One `gpudash_diagnosis` series per open diagnosis (value 1) and its start time: what an alert
/// rule selects by code and severity and names by namespace, name and node.
fn diagnosis_series(o: &mut Out, v: &ClusterView) {
    o.head(
        "gpudash_diagnosis",
        "1 while a diagnosis holds: its code, severity, the object it concerns and that object's node.",
    );
    // Borrowed from the diagnosis: nothing is copied per series.
    fn labels(d: &app::model::Diagnosis) -> [(&'static str, &str); 6] {
        [
            ("code", d.code.as_str()),
            ("severity", severity_label(d.severity)),
            ("kind", d.kind.as_str()),
            ("namespace", d.namespace.as_deref().unwrap_or("")),
            ("name", d.name.as_str()),
            ("node", d.node.as_deref().unwrap_or("")),
        ]
    }
    let shown = &v.diagnoses[..v.diagnoses.len().min(MAX_DIAGNOSIS_SERIES)];
    for d in shown {
        o.sample("gpudash_diagnosis", &labels(d), 1.0);
    }
    o.head("gpudash_diagnosis_since_timestamp_seconds", "Since when a diagnosis has held without a break (Unix time).");
    for d in shown {
        if let Some(t) = d.since.as_deref().and_then(app::time::parse_rfc3339) {
            o.sample("gpudash_diagnosis_since_timestamp_seconds", &labels(d), t as f64);
        }
    }
    o.head("gpudash_diagnosis_series_dropped", "Open diagnoses beyond the series limit, not written above.");
    o.sample("gpudash_diagnosis_series_dropped", &[], v.diagnoses.len().saturating_sub(MAX_DIAGNOSIS_SERIES) as f64);
}

/// The longest wait per reason label: the labels `counts` ([`reason_counts`] of the same pods)
/// has, the rest as `other`.
pub fn oldest_by_reason(pending: &[app::model::PendingPod], counts: &[(String, u64)], now: i64) -> Vec<(String, i64)> {
    let allowed: std::collections::BTreeSet<&str> = counts.iter().map(|(r, _)| r.as_str()).collect();
    let mut oldest: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for p in pending {
        let Some(since) = p.pending_since.as_deref().and_then(app::time::parse_rfc3339) else { continue };
        let age = (now - since).max(0);
        for r in reason_labels(p) {
            let r = if allowed.contains(r.as_str()) { r } else { "other".to_string() };
            let e = oldest.entry(r).or_insert(0);
            *e = (*e).max(age);
        }
    }
    oldest.into_iter().collect()
}

/// A Pending pod's reason labels: the scheduler's words gpudash knows by name (cut to
/// [`MAX_REASON_CHARS`]), anything else — text a tenant could have written in its own pod's
/// events — as `other`; each once.
fn reason_labels(p: &app::model::PendingPod) -> Vec<String> {
    let mut seen: Vec<String> = p
        .reasons
        .iter()
        .map(|r| {
            let known = !r.verbatim && !r.reason.en.chars().any(char::is_control);
            match r.reason.en.strip_prefix("Insufficient ") {
                // Only the resource's name: the scheduler's words end there, and whatever
                // follows (text in a message a tenant can shape) would be a new series each
                // time it changes.
                Some(rest) if known => {
                    resource_token(rest).map_or_else(|| "other".into(), |t| format!("Insufficient {t}"))
                }
                _ if known => r.reason.en.chars().take(MAX_REASON_CHARS).collect(),
                _ => "other".to_string(),
            }
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen
}

/// The resource name at the start of `s` (`nvidia.com/gpu` of `nvidia.com/gpu. anything`): a
/// qualified name as the API server allows them (letters, digits, `-`, `_`, `.`, one `/`), its
/// trailing dot the sentence's; none where it is not one.
fn resource_token(s: &str) -> Option<&str> {
    let t = s.split_whitespace().next()?.trim_end_matches(['.', ',']);
    let ok = !t.is_empty()
        && t.len() <= 253
        && t.matches('/').count() <= 1
        && t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    ok.then_some(t)
}

/// Distinct `reason` label values at most; the rarest beyond these are counted as `other`.
pub const MAX_REASONS: usize = 24;
/// Longest `reason` label value, in characters.
pub const MAX_REASON_CHARS: usize = 96;

/// Pending pods per normalised reason, as bounded label values: the scheduler's words that
/// gpudash knows by name (cut to [`MAX_REASON_CHARS`]), anything else — text a tenant could
/// have written in its own pod's events — as `other`; at most [`MAX_REASONS`] values.
pub fn reason_counts(pending: &[app::model::PendingPod]) -> Vec<(String, u64)> {
    let mut reasons: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for p in pending {
        for r in reason_labels(p) {
            *reasons.entry(r).or_default() += 1;
        }
    }
    if reasons.len() <= MAX_REASONS {
        return reasons.into_iter().collect();
    }
    let mut by_count: Vec<(String, u64)> = reasons.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let rest: u64 = by_count.split_off(MAX_REASONS - 1).into_iter().map(|(_, n)| n).sum();
    let other = by_count.iter_mut().find(|(r, _)| r == "other");
    match other {
        Some(o) => o.1 += rest,
        None => by_count.push(("other".into(), rest)),
    }
    by_count.sort();
    by_count
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::model::{GpuResource, NodeView};

    #[test]
    fn a_reason_label_keeps_the_resource_name_and_drops_what_follows_it() {
        // Hardening round two, finding 7: text after the resource's name reached the label.
        let pending = |reason: &str| app::model::PendingPod {
            reasons: vec![app::model::ReasonCount {
                reason: app::i18n::Said::same(reason),
                nodes: Some(1),
                verbatim: false,
            }],
            ..Default::default()
        };
        let labels = |r: &str| reason_labels(&pending(r));
        assert_eq!(
            labels("Insufficient nvidia.com/gpu. attacker-chosen-label-0 visit evil.example"),
            vec!["Insufficient nvidia.com/gpu"]
        );
        assert_eq!(labels("Insufficient nvidia.com/gpu"), vec!["Insufficient nvidia.com/gpu"]);
        assert_eq!(labels("Insufficient memory"), vec!["Insufficient memory"]);
        assert_eq!(labels("Insufficient nvidia.com/mig-1g.5gb"), vec!["Insufficient nvidia.com/mig-1g.5gb"]);
        assert_eq!(labels("Insufficient <script>"), vec!["other"]);
        assert_eq!(labels("Insufficient a/b/c"), vec!["other"]);
    }

    #[test]
    fn tenants_cannot_choose_reason_labels() {
        use app::model::{PendingPod, ReasonCount};
        let pod = |reason: String, verbatim: bool| PendingPod {
            reasons: vec![ReasonCount { reason: app::i18n::Said::same(reason), verbatim, nodes: Some(1) }],
            ..PendingPod::default()
        };
        let mut pending: Vec<PendingPod> = (0..60).map(|i| pod(format!("{i}{}", "x".repeat(300_000)), true)).collect();
        pending.extend((0..60).map(|i| pod(format!("Insufficient example.com/r{i}{}", "y".repeat(1000)), false)));
        pending.push(pod("Insufficient nvidia.com/gpu".into(), false));
        pending.push(pod("Insufficient nvidia.com/gpu".into(), false));
        let counts = reason_counts(&pending);
        assert!(counts.len() <= MAX_REASONS, "{}", counts.len());
        assert!(counts.iter().all(|(r, _)| r.chars().count() <= MAX_REASON_CHARS));
        assert_eq!(counts.iter().map(|(_, n)| n).sum::<u64>(), 122, "every pod still counted");
        assert!(counts.contains(&("Insufficient nvidia.com/gpu".into(), 2)), "{counts:?}");
        assert!(counts.iter().any(|(r, n)| r == "other" && *n >= 60), "{counts:?}");
        let v = ClusterView { pending, ..ClusterView::default() };
        let text = render(&v, Health::default());
        assert!(text.len() < 64 * 1024, "the metrics page stays small: {} bytes", text.len());
    }

    #[test]
    fn label_values_are_escaped() {
        let v = ClusterView {
            nodes: vec![std::sync::Arc::new(NodeView {
                name: "a\"b\\c\nd".into(),
                gpu_resources: vec![GpuResource {
                    resource: "nvidia.com/gpu".into(),
                    capacity: 4,
                    ..GpuResource::default()
                }],
                ..NodeView::default()
            })],
            ..ClusterView::default()
        };
        let text = render(&v, Health::default());
        assert!(text.contains(r#"gpudash_gpu_capacity{node="a\"b\\c\nd",resource="nvidia.com/gpu"} 4"#), "{text}");
        assert!(text.lines().all(|l| l.starts_with('#') || l.split(' ').count() == 2 || l.contains('"')), "{text}");
    }

    #[test]
    fn one_series_per_diagnosis_named_by_its_object_and_bounded() {
        use app::model::{Diagnosis, Severity};
        let d = |name: String| Diagnosis {
            code: "insufficient-gpu".into(),
            severity: Severity::Critical,
            kind: "Pod".into(),
            namespace: Some("team\"a".into()),
            name,
            node: Some("orin\nx".into()),
            since: Some("2026-12-04T10:00:00Z".into()),
            ..Diagnosis::default()
        };
        let v = ClusterView { diagnoses: vec![d("p\"}\n x 1".into()).into()], ..ClusterView::default() };
        let text = render(&v, Health::default());
        let labels = r#"{code="insufficient-gpu",severity="critical",kind="Pod",namespace="team\"a",name="p\"}\n x 1",node="orin\nx"}"#;
        assert!(text.contains(&format!("gpudash_diagnosis{labels} 1\n")), "{text}");
        assert!(text.contains(&format!("gpudash_diagnosis_since_timestamp_seconds{labels} 1796378400\n")), "{text}");
        let many = ClusterView {
            diagnoses: (0..MAX_DIAGNOSIS_SERIES + 7).map(|i| d(format!("p{i}")).into()).collect(),
            ..ClusterView::default()
        };
        let text = render(&many, Health::default());
        assert_eq!(text.lines().filter(|l| l.starts_with("gpudash_diagnosis{")).count(), MAX_DIAGNOSIS_SERIES);
        assert!(text.contains("gpudash_diagnosis_series_dropped 7\n"), "the rest are counted");
        assert!(text.contains(&format!(
            "gpudash_diagnoses{{code=\"insufficient-gpu\",severity=\"critical\"}} {}\n",
            MAX_DIAGNOSIS_SERIES + 7
        )));
    }

    /// 10,000 pods bound to a dark node were 10,000 series (/metrics 2.66 MB): capped, counted.
    #[test]
    fn pods_on_a_down_node_are_series_up_to_the_cap_and_the_rest_counted() {
        use app::model::{GpuResource, Holder, NodeDown, NodeView};
        let holders: Vec<Holder> = (0..10_000)
            .map(|i| Holder { namespace: "t".into(), name: format!("p{i}"), count: 1, ..Holder::default() })
            .collect();
        let node = NodeView {
            name: "dark".into(),
            down: Some(NodeDown::default()),
            gpu_resources: vec![GpuResource { resource: "nvidia.com/gpu".into(), holders, ..GpuResource::default() }],
            ..NodeView::default()
        };
        let v = ClusterView { nodes: vec![std::sync::Arc::new(node)], ..ClusterView::default() };
        let text = render(&v, Health::default());
        assert_eq!(text.lines().filter(|l| l.starts_with("gpudash_node_down_gpu_holder{")).count(), MAX_HOLDER_SERIES);
        assert!(text.contains("gpudash_node_down_gpu_holder_series_dropped 9000\n"), "the rest are counted");
        assert!(text.len() < 400_000, "{} bytes", text.len());
    }

    #[test]
    fn the_oldest_wait_per_reason() {
        use app::model::{PendingPod, ReasonCount};
        let pod = |since: &str, reason: &str| PendingPod {
            pending_since: Some(since.into()),
            reasons: vec![ReasonCount {
                reason: app::i18n::Said::same(reason.to_string()),
                verbatim: false,
                nodes: Some(1),
            }],
            ..PendingPod::default()
        };
        let pending = vec![
            pod("2026-12-04T10:00:00Z", "Insufficient nvidia.com/gpu"),
            pod("2026-12-04T10:05:00Z", "Insufficient nvidia.com/gpu"),
            pod("2026-12-04T10:09:00Z", "Insufficient memory"),
        ];
        let now = 1_796_378_400 + 600;
        let v = ClusterView { pending, ..ClusterView::default() };
        let text = render(&v, Health { now, ..Health::default() });
        assert!(
            text.contains("gpudash_pending_oldest_seconds{reason=\"Insufficient nvidia.com/gpu\"} 600\n"),
            "{text}"
        );
        assert!(text.contains("gpudash_pending_oldest_seconds{reason=\"Insufficient memory\"} 60\n"), "{text}");
    }
}
