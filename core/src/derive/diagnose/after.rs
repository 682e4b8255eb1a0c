//! After the scheduler said yes: what the node decided about a GPU pod. The kubelet refused it
//! at admission (`gpu-admission-rejected`), evicted it (`gpu-pod-evicted`), its model was
//! OOM-killed (`gpu-model-oom-killed`), the scheduler preempted it (`gpu-preempted`), or it
//! holds its units without running (`gpu-held-not-running`). Failed pods hold nothing (see
//! `pods::holds_resources`); these say why they failed, once per workload.

use std::collections::BTreeMap;

use gpudash_model::i18n::Said;
use gpudash_model::model::{Code, Diagnosis, Kind, PendingPod, Severity};
use k8s_openapi::api::core::v1::Node;

use super::after_said as said;
use super::{diag, list, on_node, Ctx};
use crate::derive::{node, pods};
use crate::pod::{ContainerStatus, Pod, StateReason};
use crate::quantity::Bytes;

/// How long a pod may hold a GPU unit without running before it is said to, by default
/// (seconds; `Options::held_not_running_after`): longer than a large model image takes to pull
/// on a board.
pub const HELD_NOT_RUNNING_AFTER: i64 = 10 * 60;

/// How long after its last OOM kill a model that runs again is still told (seconds).
const OOM_RECENT: i64 = 24 * 3600;

/// How long after a preemption it is told (seconds; the API server keeps events an hour).
const PREEMPTED_FOR: i64 = 3600;

/// The first accelerator resource a pod asks for, and how many units.
pub(super) fn gpu_of(p: &Pod) -> Option<(String, u64)> {
    p.facts().requests.iter().find(|(k, _)| node::is_accelerator(k)).map(|(k, v)| (k.to_string(), pods::units(*v)))
}

/// A pod that holds GPU units on a node and has not run for the time the options allow.
pub(super) struct Stalled<'a> {
    /// The pod.
    pub(super) pod: &'a Pod,
    /// Its node.
    pub(super) node: &'a str,
    /// The resource it holds, and how many units.
    pub(super) res: String,
    /// Units held.
    pub(super) count: u64,
    /// Seconds since it was given the node (its start time, else its creation).
    pub(super) secs: i64,
    /// Why it does not run: the first container not running, its state's reason and words.
    pub(super) why: Option<(&'a str, &'a StateReason)>,
}

impl Stalled<'_> {
    /// `namespace/name`.
    pub(super) fn name(&self) -> String {
        let (ns, name) = pods::key(self.pod);
        format!("{ns}/{name}")
    }

    /// How long it has not run, in the unit that reads best.
    pub(super) fn took(&self) -> Said {
        Self::took_of(self.secs)
    }

    /// A length of time in seconds, in the unit that reads best.
    pub(super) fn took_of(secs: i64) -> Said {
        let s = secs.max(0);
        match s {
            0..120 => said::seconds(&s),
            120..7200 => said::minutes(&(s / 60)),
            _ => said::hours(&(s / 3600), &(s % 3600 / 60)),
        }
    }

    /// The reason in a few words (`ImagePullBackOff`), or that its containers never started.
    pub(super) fn reason(&self) -> Said {
        match self.why {
            Some((_, r)) => Said::text(r.reason.as_deref().unwrap_or("Waiting")),
            None => said::containers_not_started(),
        }
    }
}

/// Whether a container runs now.
fn running(c: &ContainerStatus) -> bool {
    c.state.as_ref().is_some_and(|s| s.running.is_some())
}

/// The GPU pods bound to a node that hold their units and have not run for a while: bound but
/// never started, or with a container that waits (image pull back-off, crash loop, a container
/// that cannot be created).
pub(super) fn stalled<'a>(cx: &Ctx<'a>) -> Vec<Stalled<'a>> {
    let mut out = Vec::new();
    for p in cx.index.notable().filter(|p| pods::holds_resources(p) && p.metadata.deletion_timestamp.is_none()) {
        let (Some(node), Some(st), Some((res, count))) = (pods::node_of(p), p.status.as_ref(), gpu_of(p)) else {
            continue;
        };
        let statuses = st.container_statuses.as_deref().unwrap_or(&[]);
        let started = st.phase.as_deref() == Some("Running") || st.phase.as_deref() == Some("Succeeded");
        // A Running pod whose states were not kept runs every container (see `Pod::strip`).
        if started && statuses.iter().all(running) {
            continue;
        }
        let since = st.start_time.as_ref().or(p.metadata.creation_timestamp.as_ref()).map(|t| t.0);
        let Some(since) = since else { continue };
        let secs = cx.now.duration_since(since).as_secs();
        if secs < cx.held_after {
            continue;
        }
        let why = statuses.iter().find(|c| !running(c)).and_then(|c| {
            let s = c.state.as_ref()?;
            s.waiting.as_ref().or(s.terminated.as_ref()).map(|r| (c.name.as_str(), r))
        });
        out.push(Stalled { pod: p.as_ref(), node, res, count, secs, why });
    }
    out.sort_by_key(|s| pods::key(s.pod));
    out
}

/// Raises every diagnosis of this family; `stalled` is [`stalled`]'s.
/// `cards` gets, for each diagnosis about a pod that its node's card shows, the card's short
/// form (the card names the pod and what happened; the whole sentence is on the pending and
/// diagnoses pages, and a card's first load has little room).
pub(super) fn after_binding(
    cx: &Ctx<'_>,
    stalled: &[Stalled<'_>],
    pending: &[PendingPod],
    (out, cards): (&mut Vec<Diagnosis>, &mut Vec<Diagnosis>),
) {
    refused(cx, out, cards);
    oom_killed(cx, out, cards);
    held_not_running(cx, stalled, pending, out, cards);
    preempted(cx, out);
}

/// The card's form of `d`: the same code, object and node, `message` for its sentence.
fn card(d: &Diagnosis, message: Said) -> Diagnosis {
    Diagnosis { message, ..d.clone() }
}

/// The kubelet's word for a pod it refused at admission, where it is one for GPUs.
fn rejection(p: &Pod) -> Option<Code> {
    let st = p.status.as_ref()?;
    if st.phase.as_deref() != Some("Failed") || pods::refused_shared(p) {
        return None;
    }
    match st.reason.as_deref()? {
        "Evicted" => Some(Code::GpuPodEvicted),
        "UnexpectedAdmissionError" => Some(Code::GpuAdmissionRejected),
        r if r.starts_with("OutOf") => Some(Code::GpuAdmissionRejected),
        _ => None,
    }
}

/// The workload a pod belongs to, as a diagnosis names it: its controller (a ReplicaSet's
/// pods are one problem however many it made), else the pod itself.
fn owner_of(p: &Pod) -> (Kind, String) {
    let o = p.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
    match o {
        Some(o) => (Kind::from(o.kind.as_str()), o.name.clone()),
        None => (Kind::Pod, p.metadata.name.clone().unwrap_or_default()),
    }
}

/// The kubelet's `Evicted` events, by the pod they name: (namespace, name) → the kubelet's
/// words. A real kubelet (v1.36.3, tests/tests/real_node.rs) can leave an evicted pod whose
/// container exits 0 on SIGTERM in phase Succeeded with no reason; the event is then all that
/// names the eviction.
fn eviction_events<'a>(cx: &Ctx<'a>) -> BTreeMap<(&'a str, &'a str), &'a str> {
    cx.inputs
        .events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Evicted") && e.involved_object.kind.as_deref() == Some("Pod"))
        .filter_map(|e| {
            let o = &e.involved_object;
            Some(((o.namespace.as_deref()?, o.name.as_deref()?), e.message.as_deref().unwrap_or("")))
        })
        .collect()
}

/// `gpu-admission-rejected` and `gpu-pod-evicted`: Failed GPU pods the kubelet refused or
/// evicted (and ended pods its `Evicted` event names), one diagnosis per workload, node and code
/// with the count and the newest pod's words.
fn refused(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>, cards: &mut Vec<Diagnosis>) {
    type Key = (Code, String, String, String, String);
    let mut groups: BTreeMap<Key, (Kind, Vec<&Pod>)> = BTreeMap::new();
    let evictions = eviction_events(cx);
    let evicted_by_event = |p: &Pod| -> Option<&str> {
        let st = p.status.as_ref()?;
        if !matches!(st.phase.as_deref(), Some("Succeeded" | "Failed")) || st.reason.is_some() {
            return None;
        }
        let (ns, name) = (p.metadata.namespace.as_deref()?, p.metadata.name.as_deref()?);
        evictions.get(&(ns, name)).copied()
    };
    for p in cx.index.notable() {
        let code = rejection(p).or(evicted_by_event(p).map(|_| Code::GpuPodEvicted));
        let (Some(code), Some(node)) = (code, pods::node_of(p)) else { continue };
        if gpu_of(p).is_none() {
            continue;
        }
        let (kind, name) = owner_of(p);
        let ns = p.metadata.namespace.clone().unwrap_or_default();
        let key = (code, ns, kind.as_str().to_string(), name, node.to_string());
        groups.entry(key).or_insert_with(|| (kind, Vec::new())).1.push(p.as_ref());
    }
    for ((code, ns, _, name, node), (kind, mut group)) in groups {
        group.sort_by(|a, b| b.metadata.creation_timestamp.cmp(&a.metadata.creation_timestamp));
        let newest = group[0];
        let count = group.len();
        let who = format!("{kind} {ns}/{name}");
        let text = if code == Code::GpuPodEvicted {
            let words = evicted_by_event(newest).map(cut).unwrap_or_else(|| words(newest));
            evicted_text(cx, &words, (count, &who), &node, &ns)
        } else {
            rejected_text(cx, newest, (count, &who), &node, &ns)
        };
        let d = on_node(diag(code, Severity::Critical, kind, Some(&ns), &name, text), Some(&node));
        let reason = newest.status.as_ref().and_then(|s| s.reason.clone()).unwrap_or_default();
        let short = if d.code == Code::GpuPodEvicted {
            said::card_evicted(&count, &who)
        } else {
            said::card_rejected(&count, &who, &reason)
        };
        cards.push(card(&d, short));
        out.push(d);
    }
}

/// The kubelet's words on a Failed pod, cut to what a sentence can quote.
fn words(p: &Pod) -> String {
    let m = p.status.as_ref().and_then(|s| s.message.as_deref()).unwrap_or("");
    cut(m)
}

/// A message cut to [`crate::pod::MESSAGE_CAP`] bytes at a character boundary.
fn cut(m: &str) -> String {
    let mut end = m.len().min(crate::pod::MESSAGE_CAP);
    while !m.is_char_boundary(end) {
        end -= 1;
    }
    let mut s = m[..end].trim().to_string();
    if end < m.len() {
        s.push('…');
    }
    s
}

fn rejected_text(cx: &Ctx<'_>, p: &Pod, (count, owner): (usize, &str), node: &str, ns: &str) -> Said {
    // The workload's own pods bound a moment ago, not yet refused, are no holders to name.
    let own = match owner_of(p) {
        (Kind::Pod, _) => None,
        (_, name) => Some(format!("{name}-")),
    };
    let reason = p.status.as_ref().and_then(|s| s.reason.clone()).unwrap_or_default();
    let (res, want) = gpu_of(p).unwrap_or_default();
    let view = cx.view(node);
    let g = view.and_then(|v| v.gpu_resources.iter().find(|g| g.resource == res));
    let why = match g {
        None => said::node_offers_none_now(&res),
        Some(g) if g.allocatable == 0 => said::node_offers_none_now(&res),
        Some(g) if g.allocatable.saturating_sub(g.allocated) >= want => {
            let free = g.allocatable - g.allocated;
            said::units_free_now(&free, &res)
        }
        Some(g) => {
            let names: Vec<String> = g
                .holders
                .iter()
                .filter(|h| !(h.namespace == ns && own.as_deref().is_some_and(|o| h.name.starts_with(o))))
                .map(|h| format!("{}/{}", h.namespace, h.name))
                .collect();
            let who = list(&names);
            said::every_unit_held(&res, &g.allocatable, &who)
        }
    };
    said::rejected_at_admission(&count, &owner, &node, &reason, &words(p), &why, &ns)
}

/// Whether the kubelet's eviction message is about local storage, not memory: a real
/// kubelet's words for an emptyDir past its sizeLimit ("Usage of EmptyDir volume \"scratch\"
/// exceeds the limit \"4Mi\"."), a container past its ephemeral-storage limit, or disk pressure.
fn storage_eviction(words: &str) -> bool {
    ["EmptyDir volume", "ephemeral", "ephemeral-storage", "nodefs", "imagefs", "DiskPressure"]
        .iter()
        .any(|w| words.contains(w))
}

fn evicted_text(cx: &Ctx<'_>, words: &str, (count, owner): (usize, &str), node: &str, ns: &str) -> Said {
    if storage_eviction(words) {
        return said::evicted_storage(&count, &owner, &node, &words, &ns);
    }
    let object = cx.inputs.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(node));
    let mut more = Said::default();
    if let Some((cond, taint)) = object.and_then(|n| pressure(n)) {
        more.push(&said::node_under_pressure(&cond, &taint));
    }
    if let Some(v) = cx.view(node).filter(|v| v.unified_memory) {
        let board = Bytes(v.memory.board_bytes.max(v.memory.capacity_bytes));
        match (v.memory.board_used_bytes.or(v.memory.used_bytes), v.memory.split.as_ref()) {
            (Some(used), Some(sp)) => {
                let (used, gpu) = (Bytes(used), Bytes(sp.gpu_pods_bytes));
                more.push(&said::board_use_with_gpu(&used, &board, &gpu));
            }
            (Some(used), None) => {
                let used = Bytes(used);
                more.push(&said::board_use(&used, &board));
            }
            _ => more.push(&said::board_use_unknown(&board)),
        }
    }
    said::evicted(&count, &owner, &node, &words, &more, &ns)
}

/// The node's pressure condition that is True now, with the taint the node-lifecycle
/// controller puts on it for that condition.
fn pressure(n: &Node) -> Option<(String, String)> {
    let conds = n.status.as_ref()?.conditions.as_ref()?;
    let c = conds.iter().find(|c| c.type_.ends_with("Pressure") && c.status == "True")?;
    let taint = match c.type_.as_str() {
        "MemoryPressure" => "node.kubernetes.io/memory-pressure",
        "DiskPressure" => "node.kubernetes.io/disk-pressure",
        "PIDPressure" => "node.kubernetes.io/pid-pressure",
        _ => "",
    };
    Some((c.type_.clone(), taint.to_string()))
}

/// `gpu-model-oom-killed`: a GPU pod bound to a node whose container was killed for memory,
/// now or last time it ended.
fn oom_killed(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>, cards: &mut Vec<Diagnosis>) {
    for p in cx.index.notable() {
        let (Some(node), Some(st)) = (pods::node_of(p), p.status.as_ref()) else { continue };
        if gpu_of(p).is_none() || (st.phase.as_deref() == Some("Failed") && rejection(p).is_some()) {
            continue;
        }
        let oom = |s: &Option<crate::pod::ContainerState>| {
            s.as_ref().and_then(|s| s.terminated.as_ref()).filter(|t| t.reason.as_deref() == Some("OOMKilled")).cloned()
        };
        let Some((c, last)) = st.container_statuses.iter().flatten().find_map(|c| {
            let t = oom(&c.state).or_else(|| oom(&c.last_state))?;
            Some((c, t))
        }) else {
            continue;
        };
        let looping = c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.as_deref())
            == Some("CrashLoopBackOff");
        // An OOM kill long past that the model has run since is history, not a problem now.
        let old = last.finished_at.as_ref().is_some_and(|t| cx.now.duration_since(t.0).as_secs() > OOM_RECENT);
        if old && !looping {
            continue;
        }
        let (ns, name) = pods::key(p);
        let times = i64::from(c.restart_count).max(1);
        let looping = if looping { said::crash_loops_now() } else { Said::default() };
        let at = last.finished_at.as_ref().map(|t| said::last_at(&t.0)).unwrap_or_default();
        let exit = last.exit_code.unwrap_or(137);
        let memory = oom_memory(cx, p, node, &ns, &name);
        let pod = format!("{ns}/{name}");
        let text = said::oom_killed(&pod, &c.name, &exit, &times, &looping, &at, &memory);
        let d =
            on_node(diag(Code::GpuModelOomKilled, Severity::Critical, Kind::Pod, Some(&ns), &name, text), Some(node));
        cards.push(card(&d, said::card_oom_killed(&pod, &times, &looping)));
        out.push(d);
    }
}

/// What an OOM-killed model's memory was: on a unified-memory board, the limit against the
/// board and what the agent measured; elsewhere the limit.
fn oom_memory(cx: &Ctx<'_>, p: &Pod, node: &str, ns: &str, name: &str) -> Said {
    let (limit, unbounded) = p.facts().memory_limit;
    let limit = (unbounded == 0 && limit > 0).then_some(Bytes(limit));
    let view = cx.view(node);
    match view.filter(|v| v.unified_memory) {
        Some(v) => {
            let board = Bytes(v.memory.board_bytes.max(v.memory.capacity_bytes));
            let gpu = v
                .pods
                .iter()
                .find(|m| m.namespace == ns && m.name == name)
                .and_then(|m| m.gpu_memory_bytes)
                .map(|g| said::measured_gpu_memory(&Bytes(g)))
                .unwrap_or_default();
            match limit {
                Some(l) => said::unified_limit(&node, &board, &l, &gpu),
                None => said::unified_no_limit(&node, &board, &gpu),
            }
        }
        None => match limit {
            Some(l) => said::discrete_limit(&l),
            None => said::discrete_no_limit(),
        },
    }
}

/// `gpu-held-not-running`: critical where a pending pod waits for that resource.
fn held_not_running(
    cx: &Ctx<'_>,
    stalled: &[Stalled<'_>],
    pending: &[PendingPod],
    out: &mut Vec<Diagnosis>,
    cards: &mut Vec<Diagnosis>,
) {
    for s in stalled {
        // Pods waiting for that resource that could go to its node (one walk over the pending
        // pods per stalled holder: both are few).
        let node = cx.inputs.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(s.node));
        let waiting = pending
            .iter()
            .zip(cx.waiting)
            .filter(|(p, pod)| {
                p.gpu_request.as_ref().is_some_and(|g| g.resource == s.res)
                    && node.is_some_and(|n| Ctx::could_target(pod, n))
            })
            .count();
        let (ns, name) = pods::key(s.pod);
        let why = match s.why {
            Some((c, r)) => {
                let m = r.message.as_deref().map(cut).unwrap_or_default();
                let reason = r.reason.as_deref().unwrap_or("Waiting");
                if m.is_empty() {
                    said::container_is(&c, &reason)
                } else {
                    said::container_is_with(&c, &reason, &m)
                }
            }
            None => said::containers_not_started(),
        };
        let fix = fix_for(cx, s, &ns, &name);
        let (severity, waiters) = if waiting > 0 {
            (Severity::Critical, said::while_pods_wait(&waiting, &s.res))
        } else {
            (Severity::Warning, Said::default())
        };
        let (pod, held) = (format!("{ns}/{name}"), format!("{} {}", s.count, s.res));
        let text = said::held_not_running(&pod, &held, &s.node, &s.took(), &why, &waiters, &fix);
        let d = on_node(diag(Code::GpuHeldNotRunning, severity, Kind::Pod, Some(&ns), &name, text), Some(s.node));
        // On the card where it keeps a waiting pod from its unit: what a card has room for.
        if waiting > 0 {
            cards.push(card(&d, said::card_held_not_running(&pod, &held, &s.took(), &s.reason())));
        }
        out.push(d);
    }
}

/// What to do about a pod that holds a unit without running, by why.
fn fix_for(cx: &Ctx<'_>, s: &Stalled<'_>, ns: &str, name: &str) -> Said {
    let Some((_, r)) = s.why else { return said::fix_not_started(&s.node) };
    let reason = r.reason.as_deref().unwrap_or("");
    let message = r.message.as_deref().unwrap_or("");
    let arch = cx.view(s.node).map(|v| v.arch.clone()).unwrap_or_default();
    let last_exec_format = s
        .pod
        .status
        .iter()
        .flat_map(|st| st.container_statuses.iter().flatten())
        .flat_map(|c| c.state.iter().chain(c.last_state.iter()))
        .filter_map(|st| st.terminated.as_ref().or(st.waiting.as_ref()))
        .any(|t| t.message.as_deref().is_some_and(|m| m.contains("exec format error")));
    if message.contains("exec format error") || last_exec_format {
        said::fix_wrong_arch(&arch)
    } else if message.contains("no match for platform") {
        said::fix_no_platform(&arch)
    } else if matches!(reason, "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName" | "ErrImageNeverPull") {
        said::fix_image(&arch)
    } else if reason == "CrashLoopBackOff" {
        said::fix_crash_loop(&ns, &name)
    } else {
        said::fix_describe(&ns, &name)
    }
}

/// A preemption as its event tells it.
struct Preemption<'a> {
    /// The victim, `namespace`, `name`.
    victim: (&'a str, &'a str),
    /// The preemptor as the event names it: `namespace/name` (`related`), or its UID.
    by: (Option<(&'a str, &'a str)>, Option<&'a str>),
    node: Option<&'a str>,
    at: jiff::Timestamp,
}

/// The scheduler's `Preempted` events of the last hour. Its message is `Preempted by pod <uid>
/// on node <node>` (`podgroup` for a gang; kube-scheduler 1.36's preemption/executor.go, older
/// ones `Preempted by <ns>/<name> on node <node>`), the preemptor in `related`.
fn preemptions<'a>(cx: &Ctx<'a>) -> Vec<Preemption<'a>> {
    let mut out = Vec::new();
    for e in cx.inputs.events.iter().filter(|e| e.reason.as_deref() == Some("Preempted")) {
        let o = &e.involved_object;
        if o.kind.as_deref() != Some("Pod") {
            continue;
        }
        let at = e
            .event_time
            .as_ref()
            .map(|t| t.0)
            .or_else(|| e.last_timestamp.as_ref().map(|t| t.0))
            .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
            .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0));
        let Some(at) = at.filter(|at| cx.now.duration_since(*at).as_secs() < PREEMPTED_FOR) else { continue };
        let msg = e.message.as_deref().unwrap_or("");
        let (who, node) = match msg.strip_prefix("Preempted by ").and_then(|r| r.rsplit_once(" on node ")) {
            Some((who, node)) => {
                let who = who.strip_prefix("podgroup ").or_else(|| who.strip_prefix("pod ")).unwrap_or(who);
                (Some(who), Some(node.trim()))
            }
            None => (None, None),
        };
        let related = e.related.as_ref().and_then(|r| Some((r.namespace.as_deref()?, r.name.as_deref()?)));
        let by = match (related, who) {
            (Some(r), _) => (Some(r), None),
            (None, Some(w)) => match w.split_once('/') {
                Some(r) => (Some(r), None),
                None => (None, Some(w)),
            },
            (None, None) => (None, None),
        };
        let victim = (o.namespace.as_deref().unwrap_or(""), o.name.as_deref().unwrap_or(""));
        out.push(Preemption { victim, by, node, at });
    }
    out
}

/// `gpu-preempted`: a GPU pod (or one preempted for a GPU pod) the scheduler preempted, by
/// which pod (its name, its PriorityClass), on which node, when.
fn preempted(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    let found = preemptions(cx);
    if found.is_empty() {
        return;
    }
    // One walk over the pods for every name and UID the events give.
    let mut pods_by_name: BTreeMap<(&str, &str), &Pod> = BTreeMap::new();
    let mut pods_by_uid: BTreeMap<&str, &Pod> = BTreeMap::new();
    for p in &cx.inputs.pods {
        let key = (p.metadata.namespace.as_deref().unwrap_or(""), p.metadata.name.as_deref().unwrap_or(""));
        if found.iter().any(|f| f.victim == key || f.by.0 == Some(key)) {
            pods_by_name.insert(key, p);
        }
        if let Some(u) = p.metadata.uid.as_deref().filter(|u| found.iter().any(|f| f.by.1 == Some(*u))) {
            pods_by_uid.insert(u, p);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for f in &found {
        if !seen.insert(f.victim) {
            continue;
        }
        let victim = pods_by_name.get(&f.victim).copied();
        let preemptor = match f.by {
            (Some(k), _) => pods_by_name.get(&k).copied(),
            (None, Some(u)) => pods_by_uid.get(u).copied(),
            (None, None) => None,
        };
        if !victim.into_iter().chain(preemptor).any(|p| gpu_of(p).is_some()) {
            continue;
        }
        let by = match (preemptor, f.by) {
            (Some(p), _) => {
                let (ns, name) = pods::key(p);
                format!("{ns}/{name}")
            }
            (None, (Some((ns, name)), _)) => format!("{ns}/{name}"),
            (None, (None, Some(uid))) => uid.to_string(),
            (None, (None, None)) => String::new(),
        };
        let class = preemptor
            .and_then(|p| p.spec.as_ref()?.priority_class_name.as_deref())
            .map(|c| said::priority_class(&c))
            .unwrap_or_default();
        let node = f.node.or_else(|| victim.and_then(pods::node_of)).unwrap_or("");
        let at = f.at;
        let text =
            if by.is_empty() { said::preempted_unknown(&node, &at) } else { said::preempted(&node, &at, &by, &class) };
        let (ns, name) = f.victim;
        let d = diag(Code::GpuPreempted, Severity::Warning, Kind::Pod, Some(ns), name, text);
        out.push(on_node(d, (!node.is_empty()).then_some(node)));
    }
}

/// Points each pending pod at the after-binding diagnosis behind its wait: the replacement of a
/// preempted pod (same workload: its generateName begins the victim's name) at the preemption,
/// a pod told that a unit is held by a pod that does not run at that pod's diagnosis.
pub(super) fn tell_pending(
    cx: &Ctx<'_>,
    stalled: &[Stalled<'_>],
    pending: &mut [PendingPod],
    out: &[std::sync::Arc<Diagnosis>],
) {
    let of = |code: Code| -> Vec<&std::sync::Arc<Diagnosis>> { out.iter().filter(|d| d.code == code).collect() };
    let (preempted, held) = (of(Code::GpuPreempted), of(Code::GpuHeldNotRunning));
    if preempted.is_empty() && held.is_empty() {
        return;
    }
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        let prefix = pod.metadata.generate_name.as_deref().filter(|g| !g.is_empty());
        for d in &preempted {
            let same_ns = d.namespace.as_deref() == Some(p.namespace.as_str());
            let sibling = prefix
                .is_some_and(|g| d.name.strip_prefix(g).is_some_and(|rest| !rest.is_empty() && !rest.contains('-')));
            if same_ns && sibling && d.name != p.name {
                push(p, d);
            }
        }
        if !p.diagnoses.contains(&Code::GpuHeldNotRunning) {
            continue;
        }
        let Some(res) = p.gpu_request.as_ref().map(|g| g.resource.clone()) else { continue };
        for s in stalled.iter().filter(|s| s.res == res) {
            let node = cx.inputs.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(s.node));
            if !node.is_some_and(|n| Ctx::could_target(pod, n)) {
                continue;
            }
            let (ns, name) = pods::key(s.pod);
            if let Some(d) = held.iter().find(|d| d.name == name && d.namespace.as_deref() == Some(ns.as_str())) {
                push(p, d);
            }
        }
    }
}

fn push(p: &mut PendingPod, d: &std::sync::Arc<Diagnosis>) {
    if !p.problems.iter().any(|x| x.code == d.code && x.name == d.name && x.namespace == d.namespace) {
        p.problems.push(std::sync::Arc::clone(d));
    }
    if !p.diagnoses.contains(&d.code) {
        p.diagnoses.push(d.code.clone());
    }
}

/// What a pod short of a GPU resource is told when a unit it could use is held by a pod that
/// does not run (see [`stalled`]); none where no such holder is on a node it could go to.
pub(super) fn waiting_for_stalled<'a>(
    stalled: &'a [Stalled<'a>],
    with_res: &[(&Node, &gpudash_model::model::GpuResource)],
    res: &str,
) -> Option<&'a Stalled<'a>> {
    stalled.iter().find(|s| s.res == res && with_res.iter().any(|(n, _)| n.metadata.name.as_deref() == Some(s.node)))
}

/// The busy % under which a held GPU counts as idle.
pub const IDLE_PERCENT: u32 = 5;

/// How long a holder's GPU may be idle while a pod waits before it is said, by default
/// (seconds; `Options::held_idle_after`).
pub const HELD_IDLE_AFTER: i64 = 2 * 3600;

/// A holder whose every measured device has been under [`IDLE_PERCENT`] for longer than the
/// options allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idle {
    /// The pod, `namespace`, `name`.
    pub pod: (String, String),
    /// Its node.
    pub node: String,
    /// The resource it holds, and how many units.
    pub resource: (String, u64),
    /// The busiest of its devices now, percent.
    pub busy: u32,
    /// Seconds it has been idle.
    pub secs: i64,
}

/// Since when each holder has been idle, as this process watched it: kept between
/// derivations, only for holders idle now (so bounded by the view). A restart of gpudash
/// starts the count again; an agent that goes stale, or a device it stops measuring, ends it
/// (unknown is not idle).
#[derive(Debug, Default)]
pub struct IdleSince(std::collections::BTreeMap<(String, String), jiff::Timestamp>);

impl IdleSince {
    /// Takes in the views as they are `now`; returns the holders idle for at least `after`
    /// (zero: [`HELD_IDLE_AFTER`]).
    pub fn update(
        &mut self,
        nodes: &[std::sync::Arc<gpudash_model::model::NodeView>],
        now: jiff::Timestamp,
        after: std::time::Duration,
    ) -> Vec<Idle> {
        let after = if after.is_zero() { HELD_IDLE_AFTER } else { i64::try_from(after.as_secs()).unwrap_or(i64::MAX) };
        type Seen = (String, (String, u64), u32);
        let mut idle: BTreeMap<(String, String), Seen> = BTreeMap::new();
        let mut busy: std::collections::BTreeSet<(String, String)> = std::collections::BTreeSet::new();
        for n in nodes.iter().filter(|n| n.agent.as_ref().is_some_and(|a| !a.stale)) {
            for g in &n.gpu_resources {
                for d in &g.devices {
                    for h in &d.holders {
                        let key = (h.namespace.clone(), h.name.clone());
                        match d.busy_percent {
                            Some(b) if b < IDLE_PERCENT => {
                                let units = g.holders.iter().find(|x| x.namespace == h.namespace && x.name == h.name);
                                let units = units.map_or(1, |x| x.count);
                                let e =
                                    idle.entry(key).or_insert_with(|| (n.name.clone(), (g.resource.clone(), units), b));
                                e.2 = e.2.max(b);
                            }
                            _ => {
                                busy.insert(key);
                            }
                        }
                    }
                }
            }
        }
        idle.retain(|k, _| !busy.contains(k));
        self.0.retain(|k, _| idle.contains_key(k));
        let mut out = Vec::new();
        for (key, (node, resource, b)) in idle {
            let since = *self.0.entry(key.clone()).or_insert(now);
            let secs = now.duration_since(since).as_secs();
            if secs >= after {
                out.push(Idle { pod: key, node, resource, busy: b, secs });
            }
        }
        out
    }
}

/// `gpu-held-idle`: a holder whose GPU has been idle that long while a pod that could go to its
/// node waits for that resource (only where an agent measures the GPU).
pub(super) fn held_idle(cx: &Ctx<'_>, idle: &[Idle], pending: &[PendingPod], out: &mut Vec<Diagnosis>) {
    for i in idle {
        let node = cx.inputs.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(i.node.as_str()));
        let (res, units) = (&i.resource.0, i.resource.1);
        let waiting = pending
            .iter()
            .zip(cx.waiting)
            .filter(|(p, pod)| {
                p.gpu_request.as_ref().is_some_and(|g| &g.resource == res)
                    && node.is_some_and(|n| Ctx::could_target(pod, n))
            })
            .count();
        if waiting == 0 {
            continue;
        }
        let (ns, name) = (&i.pod.0, &i.pod.1);
        let (pod, held) = (format!("{ns}/{name}"), format!("{units} {res}"));
        let took = Stalled::took_of(i.secs);
        let text = said::held_idle(&pod, &held, &i.node, &IDLE_PERCENT, &took, &i.busy, &waiting);
        let d = diag(Code::GpuHeldIdle, Severity::Warning, Kind::Pod, Some(ns), name, text);
        out.push(on_node(d, Some(&i.node)));
    }
}
