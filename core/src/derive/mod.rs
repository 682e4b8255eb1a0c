//! The pure derivation: Kubernetes objects and a clock in, the ClusterView out. No I/O here —
//! everything is a function of its arguments and is unit-tested with real object shapes.

pub mod agent;
mod diagnose;
pub mod dra;
mod load;
pub mod memory;
pub mod node;
pub mod pods;
pub mod quota;
pub mod scheduler;
pub mod strategy;

pub use load::from_kubectl_yaml;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use app::model::{
    ClusterView, GpuRequest, GpuUser, Holder, MemoryView, NodeView, PendingPod, PodMemory, Source, Totals,
};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Node, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use crate::pod::Pod;
use crate::quantity::Bytes;

/// `metrics.k8s.io/v1beta1` NodeMetrics (not in k8s-openapi).
#[derive(Debug, Clone, Deserialize, Default)]
pub struct NodeMetrics {
    /// Metadata; the name is the node's.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `cpu` and `memory` usage.
    #[serde(default)]
    pub usage: BTreeMap<String, K8sQuantity>,
}

/// One container's usage in a PodMetrics.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct ContainerMetrics {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// `cpu` and `memory` usage.
    #[serde(default)]
    pub usage: BTreeMap<String, K8sQuantity>,
}

/// `metrics.k8s.io/v1beta1` PodMetrics.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct PodMetrics {
    /// Metadata; name and namespace are the pod's.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Per-container usage.
    #[serde(default)]
    pub containers: Vec<ContainerMetrics>,
}

/// Everything the derivation reads.
#[derive(Debug, Default, Clone)]
pub struct Inputs {
    /// Nodes.
    pub nodes: Vec<Arc<Node>>,
    /// Pods.
    pub pods: Vec<Arc<Pod>>,
    /// Events.
    pub events: Vec<Arc<Event>>,
    /// RuntimeClasses.
    pub runtime_classes: Vec<Arc<RuntimeClass>>,
    /// ReplicaSets.
    pub replica_sets: Vec<Arc<ReplicaSet>>,
    /// Deployments (their update strategy and progress; the pod template is stripped).
    pub deployments: Vec<Arc<Deployment>>,
    /// DaemonSets (their update strategy; the pod template is stripped).
    pub daemon_sets: Vec<Arc<DaemonSet>>,
    /// ResourceQuotas.
    pub quotas: Vec<Arc<ResourceQuota>>,
    /// Node metrics; `None` when metrics.k8s.io is not available. Shared: the same `Arc`
    /// until the next poll, so the derivation reads each poll once.
    pub node_metrics: Option<Arc<Vec<NodeMetrics>>>,
    /// Pod metrics.
    pub pod_metrics: Option<Arc<Vec<PodMetrics>>>,
    /// ResourceSlices (empty where `resource.k8s.io/v1` is not served).
    pub slices: Vec<Arc<crate::dra::ResourceSlice>>,
    /// ResourceClaims.
    pub claims: Vec<Arc<crate::dra::ResourceClaim>>,
    /// ResourceClaimTemplates.
    pub claim_templates: Vec<Arc<crate::dra::ResourceClaimTemplate>>,
    /// DeviceClasses.
    pub device_classes: Vec<Arc<crate::dra::DeviceClass>>,
    /// What each node's gpudash-agent last reported (nodes with an agent pod only).
    pub agents: Vec<Arc<crate::agent::AgentSeen>>,
}

/// A term of `--unified-memory-selector` that is not a selector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad selector term {0:?}: expected key=value, key!=value, key or !key")]
pub struct SelectorError(pub String);

/// Operator settings that change the derivation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Nodes matching this selector are treated as unified-memory boards
    /// (`key=value,key2,!key3` — equality and existence).
    pub unified_selector: Vec<(String, Option<String>, bool)>,
    /// How long a gpudash-agent may be silent before its node's use is shown stale (zero:
    /// [`agent::DEFAULT_STALE_AFTER`]).
    pub agent_stale_after: std::time::Duration,
}

impl Options {
    /// Parses `--unified-memory-selector`.
    pub fn parse_selector(s: &str) -> Result<Vec<(String, Option<String>, bool)>, SelectorError> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (neg, p) = match part.strip_prefix('!') {
                Some(p) => (true, p.trim()),
                None => (false, part),
            };
            let (k, v, eq) = if let Some((k, v)) = p.split_once("!=") {
                (k, Some(v), false)
            } else if let Some((k, v)) = p.split_once('=') {
                (k, Some(v.trim_start_matches('=')), true)
            } else {
                (p, None, !neg)
            };
            let k = k.trim();
            if k.is_empty() || k.contains(char::is_whitespace) {
                return Err(SelectorError(part.to_string()));
            }
            out.push((k.to_string(), v.map(|v| v.trim().to_string()), eq));
        }
        Ok(out)
    }

    /// Whether the selector marks this node as a unified-memory board.
    pub fn matches(&self, node: &Node) -> bool {
        if self.unified_selector.is_empty() {
            return false;
        }
        let l = node::labels(node);
        self.unified_selector.iter().all(|(k, v, eq)| match v {
            Some(v) => (l.get(k) == Some(v)) == *eq,
            None => l.contains_key(k) == *eq,
        })
    }
}

/// A map for the derivation's per-run indexes: foldhash, seeded per process, is several times
/// faster than SipHash on short names, and still not predictable from outside.
pub(crate) type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

pub fn ts(t: &jiff::Timestamp) -> String {
    t.round(jiff::Unit::Second).unwrap_or(*t).to_string()
}

fn metric_bytes(usage: &BTreeMap<String, K8sQuantity>) -> Option<u64> {
    usage.get("memory").and_then(|q| Bytes::parse(&q.0).ok()).map(|b| b.0)
}

/// Does a pending pod name this node (nodeSelector that the node matches, or nominated)?
pub(crate) fn pending_targets(pod: &Pod, node: &Node) -> bool {
    let name = node.metadata.name.as_deref().unwrap_or("");
    if pod.status.as_ref().and_then(|s| s.nominated_node_name.as_deref()) == Some(name) {
        return true;
    }
    let sel = pod.spec.as_ref().and_then(|s| s.node_selector.as_ref());
    match sel {
        Some(sel) if !sel.is_empty() => {
            let l = node::labels(node);
            sel.iter().all(|(k, v)| l.get(k) == Some(v))
        }
        _ => false,
    }
}

/// The newest scheduling event message for a pod (matching uid when both carry one).
fn newest_event<'a>(events: &'a [Arc<Event>], pod: &Pod, reasons: &[&str]) -> Option<&'a Event> {
    let (ns, name) = pods::key(pod);
    let uid = pod.metadata.uid.as_deref();
    events
        .iter()
        .filter(|e| {
            let o = &e.involved_object;
            o.kind.as_deref() == Some("Pod")
                && o.name.as_deref() == Some(name.as_str())
                && o.namespace.as_deref().unwrap_or("") == ns
                && (uid.is_none() || o.uid.is_none() || o.uid.as_deref() == uid)
                && e.reason.as_deref().is_some_and(|r| reasons.contains(&r))
        })
        .max_by_key(|e| event_time(e))
        .map(AsRef::as_ref)
}

/// The most recent time an event says it happened.
pub fn event_time(e: &Event) -> Option<jiff::Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or(e.event_time.as_ref().map(|t| t.0))
        .or(e.first_timestamp.as_ref().map(|t| t.0))
        .or(e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

/// Claims and templates by namespace and name.
pub(crate) struct ClaimIndex<'a> {
    pub(crate) claims: Map<(&'a str, &'a str), &'a crate::dra::ResourceClaim>,
    pub(crate) templates: Map<(&'a str, &'a str), &'a crate::dra::ResourceClaimTemplate>,
}

impl<'a> ClaimIndex<'a> {
    /// Empty: for when no pod names a claim.
    pub(crate) fn empty() -> Self {
        Self { claims: Map::default(), templates: Map::default() }
    }

    pub(crate) fn new(inputs: &'a Inputs) -> Self {
        let key = |m: &'a ObjectMeta| (m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or(""));
        Self {
            claims: inputs.claims.iter().map(|c| (key(&c.metadata), c.as_ref())).collect(),
            templates: inputs.claim_templates.iter().map(|t| (key(&t.metadata), t.as_ref())).collect(),
        }
    }
}

fn pending_pod(pod: &Pod, events: &[Arc<Event>], claims: &ClaimIndex<'_>) -> PendingPod {
    let (namespace, name) = pods::key(pod);
    let cond = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled" && c.status != "True"));
    let since = cond
        .and_then(|c| c.last_transition_time.as_ref())
        .or(pod.metadata.creation_timestamp.as_ref())
        .map(|t| ts(&t.0));
    let message = cond
        .and_then(|c| c.message.clone())
        .filter(|m| !m.is_empty())
        .or_else(|| newest_event(events, pod, &["FailedScheduling"]).and_then(|e| e.message.clone()));
    let scheduler =
        pod.spec.as_ref().and_then(|s| s.scheduler_name.clone()).filter(|s| s != "default-scheduler" && !s.is_empty());
    let parsed = match (&message, &scheduler) {
        (Some(m), None) => scheduler::parse(m),
        _ => scheduler::Parsed::default(),
    };
    let req = pods::effective_requests(pod);
    let gpu_request = req
        .iter()
        .filter(|(k, v)| node::is_accelerator(k) && **v > 0)
        .max_by_key(|(k, _)| node::is_nvidia_gpu(k))
        .map(|(k, v)| GpuRequest { resource: k.clone(), count: pods::units(*v) });
    PendingPod {
        namespace,
        name,
        pending_since: since,
        gpu_request,
        message,
        nodes_total: parsed.nodes_total,
        reasons: parsed.reasons,
        diagnoses: Vec::new(),
        problems: Vec::new(),
        scheduler,
        memory_request_bytes: req.get("memory").map(|m| pods::units(*m)),
        owner: None,
        workload: None,
        claims: dra::pending_claims(pod, claims),
    }
}

/// Derives the ClusterView.
pub fn derive(inputs: &Inputs, opts: &Options, source: Source, revision: u64, now: jiff::Timestamp) -> ClusterView {
    derive_cached(inputs, opts, source, revision, now, &mut Cache::default())
}

/// What the derivation keeps between runs so that one change costs what it touches: each
/// pod's facts, and each node's view with the inputs it was built from (the node object, the
/// pods it holds and their memory use, its pending count). The stores hand out the same `Arc`
/// for an object until it changes, so "unchanged" is a pointer comparison.
#[derive(Debug, Default)]
pub struct Cache {
    /// The pods by address, with their facts, grouped by node.
    pub pods: pods::PodIndex,
    nodes: Map<String, NodeMemo>,
    /// The diagnoses each node's view gives by itself, as last published.
    of_view: diagnose::OfView,
    /// The slices and claims split by node, kept while neither list changed.
    dra: dra::Split,
    /// Memory use from the metrics last read.
    metrics: Use,
    /// Since when each open diagnosis has held (only the open ones: bounded by the view).
    since: Since,
    /// Whether the last run's source was synced: node views built before the first full list
    /// (a pod seen before its ReplicaSet) are not kept past it.
    synced: bool,
    /// Diagnoses history found open at the last heartbeat before this process started, with
    /// the time each was raised; taken over by the first synced derivation that still finds
    /// them, dropped by it otherwise.
    carried: Option<Map<DiagKey, String>>,
}

/// A diagnosis' identity: code, kind, namespace, name.
pub type DiagKey = (String, String, String, String);

/// The identity of a diagnosis, as history keys it.
pub fn diag_key(d: &app::model::Diagnosis) -> DiagKey {
    (d.code.to_string(), d.kind.to_string(), d.namespace.clone().unwrap_or_default(), d.name.clone())
}

impl Cache {
    /// How many node views are kept.
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Hands over the diagnoses history had open when gpudash last stopped (key, raised as
    /// RFC 3339): those the first synced view still finds keep their first time.
    pub fn carry_since(&mut self, open: impl IntoIterator<Item = (DiagKey, String)>) {
        self.carried = Some(open.into_iter().collect());
    }
}

/// Since when each open diagnosis has held, by a hash of its identity (the identity kept too,
/// and compared: a diagnosis that goes on costs a lookup, no copy of its names), with the
/// revision that last found it.
#[derive(Debug, Default)]
struct Since {
    open: Map<u64, (DiagKey, String, u64)>,
    run: u64,
}

/// The identity of a diagnosis, borrowed.
fn diag_id(d: &app::model::Diagnosis) -> (&str, &str, &str, &str) {
    (d.code.as_str(), d.kind.as_str(), d.namespace.as_deref().unwrap_or(""), d.name.as_str())
}

fn same_id(k: &DiagKey, id: (&str, &str, &str, &str)) -> bool {
    (k.0.as_str(), k.1.as_str(), k.2.as_str(), k.3.as_str()) == id
}

/// Gives each diagnosis the time since when it has held, and keeps the times of the open ones
/// for the next run; the pending pods' copies get the same. A diagnosis kept from the last
/// revision already says it (see [`diagnose::OfView`]) and is left as it is.
fn stamp(
    diagnoses: &mut [Arc<app::model::Diagnosis>],
    pending: &mut [PendingPod],
    source: &Source,
    now: &jiff::Timestamp,
    cache: &mut Cache,
) {
    use std::hash::BuildHasher as _;
    let carried = if source.synced { cache.carried.take() } else { None };
    let now_text = ts(now);
    let since = &mut cache.since;
    since.run += 1;
    let run = since.run;
    let hasher = foldhash::fast::FixedState::default();
    for d in diagnoses.iter_mut() {
        let id = diag_id(d);
        let h = hasher.hash_one(id);
        let first = match since.open.get_mut(&h) {
            Some((k, first, seen)) if same_id(k, id) => {
                *seen = run;
                first.clone()
            }
            // Another identity under the same hash (or none): this one starts now, or when
            // history last saw it raised.
            _ => {
                let key = diag_key(d);
                let first = carried.as_ref().and_then(|c| c.get(&key)).cloned().unwrap_or_else(|| now_text.clone());
                since.open.entry(h).or_insert_with(|| (key, first.clone(), run));
                first
            }
        };
        if d.since.as_deref() != Some(first.as_str()) {
            Arc::make_mut(d).since = Some(first);
        }
    }
    since.open.retain(|_, (_, _, seen)| *seen == run);
    for p in pending.iter_mut() {
        for d in &mut p.problems {
            if let Some((_, first, _)) =
                since.open.get(&hasher.hash_one(diag_id(d))).filter(|(k, _, _)| same_id(k, diag_id(d)))
            {
                d.since = Some(first.clone());
            }
        }
    }
}

/// Memory use from one poll of metrics.k8s.io, by node and by pod (namespace, then name), made
/// again only when a new poll arrives (the metrics are the same `Arc` until then).
#[derive(Debug, Default)]
struct Use {
    read_nodes: Option<Arc<Vec<NodeMetrics>>>,
    read_pods: Option<Arc<Vec<PodMetrics>>>,
    nodes: Map<String, Option<u64>>,
    pods: Map<String, Map<String, u64>>,
}

impl Use {
    /// Takes in the metrics of this run; true when they are not the last run's.
    fn update(&mut self, inputs: &Inputs) -> bool {
        fn same<T>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        }
        let nodes_same = same(self.read_nodes.as_ref(), inputs.node_metrics.as_ref());
        let pods_same = same(self.read_pods.as_ref(), inputs.pod_metrics.as_ref());
        if !nodes_same {
            self.nodes = inputs
                .node_metrics
                .iter()
                .flat_map(|v| v.iter())
                .map(|m| (m.metadata.name.clone().unwrap_or_default(), metric_bytes(&m.usage)))
                .collect();
            self.read_nodes = inputs.node_metrics.clone();
        }
        if !pods_same {
            self.pods = Map::default();
            for m in inputs.pod_metrics.iter().flat_map(|v| v.iter()) {
                let used = m.containers.iter().filter_map(|c| metric_bytes(&c.usage)).sum();
                let ns = m.metadata.namespace.clone().unwrap_or_default();
                self.pods.entry(ns).or_default().insert(m.metadata.name.clone().unwrap_or_default(), used);
            }
            self.read_pods = inputs.pod_metrics.clone();
        }
        !(nodes_same && pods_same)
    }

    /// The node's memory use, then each held pod's.
    fn of(&self, node: &str, held: &[Held]) -> Vec<Option<u64>> {
        std::iter::once(self.nodes.get(node).copied().flatten())
            .chain(held.iter().map(|(p, _)| {
                let (ns, name) = (p.metadata.namespace.as_deref().unwrap_or(""), p.metadata.name.as_deref());
                self.pods.get(ns).and_then(|m| m.get(name.unwrap_or(""))).copied()
            }))
            .collect()
    }
}

/// A pod a node holds, with its facts.
type Held = (Arc<Pod>, Arc<pods::Facts>);

/// A node's view and what it was built from.
#[derive(Debug)]
struct NodeMemo {
    node: Arc<Node>,
    /// The version of the set of pods it holds ([`pods::NodePods`]; 0: none).
    held: u64,
    /// The node's memory use, then each held pod's, in `held`'s order.
    usage: Vec<Option<u64>>,
    pending: u32,
    unified: bool,
    extra: Extra,
    view: Arc<NodeView>,
}

/// What other sources than the node object and its pods say about a node: the DRA devices and
/// claims on it, and its agent's last report with whether that is stale.
#[derive(Debug, Default)]
struct Extra {
    /// The node's DRA objects, shared with [`dra::Split`] (none: no slice on the node).
    dra: Option<Arc<dra::NodeDra>>,
    agent: Option<(Arc<crate::agent::AgentSeen>, bool)>,
}

impl Extra {
    fn same(&self, other: &Extra) -> bool {
        let none = dra::NodeDra::default();
        let (a, b) = (self.dra.as_deref().unwrap_or(&none), other.dra.as_deref().unwrap_or(&none));
        a.same(b)
            && match (&self.agent, &other.agent) {
                (None, None) => true,
                (Some((a, sa)), Some((b, sb))) => Arc::ptr_eq(a, b) && sa == sb,
                _ => false,
            }
    }
}

impl NodeMemo {
    fn same(
        &self,
        node: &Arc<Node>,
        held: u64,
        usage: &[Option<u64>],
        pending: u32,
        unified: bool,
        extra: &Extra,
    ) -> bool {
        Arc::ptr_eq(&self.node, node)
            && self.extra.same(extra)
            && self.pending == pending
            && self.unified == unified
            && self.usage == usage
            && self.held == held
    }
}

/// One node's view from its object and the pods it holds.
fn node_view(
    n: &Node,
    held: &[Held],
    usage: &[Option<u64>],
    pending_pods: u32,
    unified: bool,
    extra: &Extra,
    rs: &pods::RsOwners<'_>,
) -> NodeView {
    let Extra { dra, agent } = extra;
    let no_dra = dra::NodeDra::default();
    let dra = dra.as_deref().unwrap_or(&no_dra);
    let name = n.metadata.name.clone().unwrap_or_default();
    let mut resources = node::accelerator_resources(n);
    for (p, f) in held {
        for (k, v) in f.requests.iter() {
            // An extended resource a DRA DeviceClass stands for is shown on the driver's devices.
            if *v > 0 && node::is_accelerator(k) && !resources.iter().any(|r| r == k) && !p.dra_mapped(k) {
                resources.push(k.to_string());
            }
        }
    }
    resources.sort();
    let gpu_resources = resources
        .iter()
        .map(|r| {
            let mut holders: Vec<Holder> = held
                .iter()
                .filter(|(p, _)| !p.dra_mapped(r))
                .filter_map(|(p, f)| {
                    let c = pods::units(*f.requests.get(r)?);
                    (c > 0).then(|| {
                        let (namespace, name) = pods::key(p);
                        Holder {
                            namespace,
                            name,
                            count: c,
                            since: p.metadata.creation_timestamp.as_ref().map(|t| ts(&t.0)),
                            runtime_class: p.spec.as_ref().and_then(|s| s.runtime_class_name.clone()),
                            terminating: p.metadata.deletion_timestamp.is_some(),
                            workload: pods::workload(p, rs),
                        }
                    })
                })
                .collect();
            holders.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
            node::gpu_resource(n, r, holders)
        })
        .chain(dra::resources(dra).into_iter().map(|mut g| {
            // Claims name their pods; the pods on the node say since when and how they run.
            for h in &mut g.holders {
                let named = |p: &Pod| {
                    p.metadata.namespace.as_deref().unwrap_or("") == h.namespace
                        && p.metadata.name.as_deref().unwrap_or("") == h.name
                };
                if let Some((p, _)) = held.iter().find(|(p, _)| named(p)) {
                    h.since = p.metadata.creation_timestamp.as_ref().map(|t| ts(&t.0));
                    h.runtime_class = p.spec.as_ref().and_then(|s| s.runtime_class_name.clone());
                    h.terminating = p.metadata.deletion_timestamp.is_some();
                }
            }
            g
        }))
        .collect();
    let st = n.status.as_ref();
    let mem = |m: Option<&BTreeMap<String, K8sQuantity>>| {
        m.and_then(|m| m.get("memory")).and_then(|q| Bytes::parse(&q.0).ok()).map_or(0, |b| b.0)
    };
    let mut memory = MemoryView {
        capacity_bytes: mem(st.and_then(|s| s.capacity.as_ref())),
        allocatable_bytes: mem(st.and_then(|s| s.allocatable.as_ref())),
        used_bytes: usage.first().copied().flatten(),
        ..MemoryView::default()
    };
    let mut pod_mem = Vec::new();
    let mut namespaces: Vec<String> = Vec::new();
    for (i, (p, f)) in held.iter().enumerate() {
        let req = f.requests.get("memory").map_or(0, |m| pods::units(*m));
        let (lim, unbounded) = f.memory_limit;
        memory.requested_bytes = memory.requested_bytes.saturating_add(req);
        memory.limits_bytes = memory.limits_bytes.saturating_add(lim);
        memory.unbounded_containers += unbounded;
        let (namespace, pname) = pods::key(p);
        if !namespaces.contains(&namespace) {
            namespaces.push(namespace.clone());
        }
        pod_mem.push(PodMemory {
            namespace,
            name: pname,
            requested_bytes: req,
            limit_bytes: (unbounded == 0).then_some(lim),
            used_bytes: usage.get(i + 1).copied().flatten(),
            gpu_memory_bytes: None,
            workload: pods::workload(p, rs),
        });
    }
    pod_mem.sort_by(|a, b| b.requested_bytes.cmp(&a.requested_bytes).then_with(|| a.name.cmp(&b.name)));
    let unified_memory = node::unified_memory(n, unified);
    memory::bars(&mut memory, unified_memory);
    namespaces.sort();
    let (ready, conditions) = node::conditions(n);
    let default_runtime = node::default_runtime(n);
    let gpu_users_outside = gpu_users_outside(held, default_runtime.as_deref());
    let bound: Vec<&Pod> = held.iter().map(|(p, _)| p.as_ref()).collect();
    let mut view = NodeView {
        name,
        ready,
        unified_memory,
        memory,
        gpu_resources,
        pending_pods,
        conditions,
        unschedulable: n.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false),
        arch: st.and_then(|s| s.node_info.as_ref()).map(|i| i.architecture.clone()).unwrap_or_default(),
        gpu_labels: node::gpu_labels(n),
        labels: node::labels(n).iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        pods: pod_mem,
        namespaces,
        default_runtime,
        gpu_users_outside,
        gpu_users_outside_more: 0,
        down: node::down(n, &bound),
        agent: None,
        problems: Vec::new(),
    };
    if let Some((seen, stale)) = agent {
        let uids: Vec<(&str, &str, &str)> = held
            .iter()
            .map(|(p, _)| {
                let m = &p.metadata;
                (m.uid.as_deref().unwrap_or(""), m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or(""))
            })
            .collect();
        self::agent::enrich(&mut view, seen, *stale, &uids);
    }
    view
}

/// Pods on a node that use its GPU without requesting a GPU resource: sure when they name an
/// NVIDIA RuntimeClass, or set `NVIDIA_VISIBLE_DEVICES` where the default runtime is NVIDIA's;
/// possible when the node's default runtime is NVIDIA's (then any container whose image asks
/// for the GPU gets it, and the API cannot tell). System pods and the device plugin are left out.
fn gpu_users_outside(held: &[Held], default_runtime: Option<&str>) -> Vec<GpuUser> {
    let nvidia_default = default_runtime.is_some_and(node::is_nvidia_runtime);
    let mut out: Vec<GpuUser> = held
        .iter()
        .filter(|(p, f)| {
            !p.is_device_plugin()
                && !p.is_agent()
                && !f.requests.iter().any(|(k, v)| *v > 0 && node::is_nvidia_gpu(k))
                // A pod with DRA claims gets its devices through the scheduler.
                && p.spec.as_ref().is_none_or(|s| s.resource_claims.is_empty())
                && p.metadata.namespace.as_deref() != Some("kube-system")
        })
        .filter_map(|(p, _)| {
            let spec = p.spec.as_ref()?;
            let class = spec.runtime_class_name.as_deref().filter(|c| !c.is_empty());
            let env = spec
                .containers
                .iter()
                .any(|c| c.env.0.as_deref().is_some_and(|v| !matches!(v.trim(), "" | "void" | "none")));
            let (sure, evidence) = match class {
                Some(c) if node::is_nvidia_runtime(c) => (true, "runtime-class"),
                Some(_) => return None,
                None if nvidia_default && env => (true, "env"),
                None if nvidia_default => (false, "default-runtime"),
                None => return None,
            };
            let (namespace, name) = pods::key(p);
            Some(GpuUser { namespace, name, sure, evidence: evidence.to_string() })
        })
        .collect();
    out.sort_by(|a, b| b.sure.cmp(&a.sure).then_with(|| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))));
    out
}

/// Gives each node view the diagnoses about it (its card shows them without looking anything
/// up). Diagnoses are computed from the node views, so this comes after; a node whose
/// diagnoses did not change keeps its `Arc` (and the memo keeps the final one).
fn attach_problems(
    nodes: &mut [Arc<NodeView>],
    diagnoses: &[Arc<app::model::Diagnosis>],
    memo: &mut Map<String, NodeMemo>,
) {
    let mut by_node: Map<&str, Vec<Arc<app::model::Diagnosis>>> = Map::default();
    for d in diagnoses.iter().filter(|d| d.kind == app::model::Kind::Node) {
        by_node.entry(d.name.as_str()).or_default().push(d.clone());
    }
    for n in nodes.iter_mut() {
        let problems = by_node.remove(n.name.as_str()).unwrap_or_default();
        // A diagnosis that goes on is the same `Arc`: `Arc`'s equality compares pointers first.
        if n.problems != problems {
            let mut v = NodeView::clone(n);
            v.problems = problems;
            *n = Arc::new(v);
            if let Some(m) = memo.get_mut(&n.name) {
                m.view = n.clone();
            }
        }
    }
}

/// Derives the ClusterView, reusing what `cache` kept from the last run.
pub fn derive_cached(
    inputs: &Inputs,
    opts: &Options,
    source: Source,
    revision: u64,
    now: jiff::Timestamp,
    cache: &mut Cache,
) -> ClusterView {
    if source.synced != cache.synced {
        cache.nodes.clear();
        cache.synced = source.synced;
    }
    let rs_owners = pods::rs_owners(&inputs.replica_sets);
    cache.pods.update(&inputs.pods);
    let index = &cache.pods;
    let new_use = cache.metrics.update(inputs);
    let usage_of = &cache.metrics;

    let unscheduled: Vec<&Arc<Pod>> = index.notable().filter(|p| pods::is_unscheduled(p)).collect();
    // Claims by name, only when a waiting pod names one (8 000 claims cost a millisecond a run).
    let names_claims = |p: &Pod| p.spec.as_ref().is_some_and(|s| !s.resource_claims.is_empty());
    let claim_index =
        if unscheduled.iter().any(|p| names_claims(p)) { ClaimIndex::new(inputs) } else { ClaimIndex::empty() };
    let dra_nodes = cache.dra.update(&inputs.slices, &inputs.claims);
    let mut pending: Vec<(Option<jiff::Timestamp>, PendingPod, &Pod)> = unscheduled
        .into_iter()
        .map(|p| {
            let mut pp = pending_pod(p, &inputs.events, &claim_index);
            pp.owner = pods::workload(p, &rs_owners);
            let t = pp.pending_since.as_deref().and_then(|s| s.parse().ok());
            (t, pp, p.as_ref())
        })
        .collect();
    pending.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| (&a.1.namespace, &a.1.name).cmp(&(&b.1.namespace, &b.1.name))));

    let stale_after =
        if opts.agent_stale_after.is_zero() { agent::DEFAULT_STALE_AFTER } else { opts.agent_stale_after };
    let mut agents: Map<&str, (Arc<crate::agent::AgentSeen>, bool)> =
        inputs.agents.iter().map(|a| (a.node.as_str(), (a.clone(), agent::is_stale(a, now, stale_after)))).collect();
    // Kept in place: a node nothing touched costs a lookup, no copy of its name.
    let memo = &mut cache.nodes;
    let mut nodes: Vec<Arc<NodeView>> = inputs
        .nodes
        .iter()
        .map(|n| {
            let name = n.metadata.name.as_deref().unwrap_or("");
            let on = index.on(name);
            let held_pods = on.map_or(&[][..], |o| o.held.as_slice());
            let held = on.map_or(0, |o| o.version);
            let kept = memo.get_mut(name);
            // Memory use moves only with a new poll or with the pods held.
            let usage = match kept.as_ref() {
                Some(m) if !new_use && m.held == held => None,
                _ => Some(usage_of.of(name, held_pods)),
            };
            let pending_pods =
                u32::try_from(pending.iter().filter(|(_, _, p)| pending_targets(p, n)).count()).unwrap_or(u32::MAX);
            let unified = opts.matches(n);
            let extra = Extra { dra: dra_nodes.get(name).cloned(), agent: agents.remove(name) };
            if let Some(m) = kept
                .as_ref()
                .filter(|m| m.same(n, held, usage.as_deref().unwrap_or(&m.usage), pending_pods, unified, &extra))
            {
                return m.view.clone();
            }
            let usage = match (usage, kept.as_ref()) {
                (Some(u), _) => u,
                (None, Some(m)) => m.usage.clone(),
                (None, None) => usage_of.of(name, held_pods),
            };
            let view = Arc::new(node_view(n, held_pods, &usage, pending_pods, unified, &extra, &rs_owners));
            let m =
                NodeMemo { node: n.clone(), held, usage, pending: pending_pods, unified, extra, view: view.clone() };
            match kept {
                Some(k) => *k = m,
                None => {
                    memo.insert(name.to_string(), m);
                }
            }
            view
        })
        .collect();
    if memo.len() > inputs.nodes.len() {
        let present: std::collections::HashSet<&str> =
            inputs.nodes.iter().map(|n| n.metadata.name.as_deref().unwrap_or("")).collect();
        memo.retain(|name, _| present.contains(name.as_str()));
    }
    nodes.sort_by(|a, b| a.name.cmp(&b.name));

    let (mut pending, waiting): (Vec<PendingPod>, Vec<&Pod>) = pending.into_iter().map(|(_, p, o)| (p, o)).unzip();
    let quotas = quota::quotas(&inputs.quotas, &nodes);
    let (mut diagnoses, blocked) =
        diagnose::diagnose(&cache.of_view, inputs, index, &nodes, &quotas, &mut pending, &waiting, &claim_index, now);
    stamp(&mut diagnoses, &mut pending, &source, &now, cache);
    attach_problems(&mut nodes, &diagnoses, &mut cache.nodes);
    cache.of_view.keep(&nodes);
    let totals = Totals {
        nodes: u32::try_from(nodes.len()).unwrap_or(u32::MAX),
        ready_nodes: u32::try_from(nodes.iter().filter(|n| n.ready).count()).unwrap_or(u32::MAX),
        gpu_allocatable: nodes.iter().flat_map(|n| &n.gpu_resources).map(|g| g.allocatable).sum(),
        gpu_allocated: nodes.iter().flat_map(|n| &n.gpu_resources).map(|g| g.allocated).sum(),
        pending: u32::try_from(pending.len()).unwrap_or(u32::MAX),
        blocked: u32::try_from(blocked.len()).unwrap_or(u32::MAX),
        critical: u32::try_from(diagnoses.iter().filter(|d| d.severity == app::model::Severity::Critical).count())
            .unwrap_or(0),
        warnings: u32::try_from(diagnoses.iter().filter(|d| d.severity == app::model::Severity::Warning).count())
            .unwrap_or(0),
        diagnoses: u32::try_from(diagnoses.len()).unwrap_or(u32::MAX),
    };
    ClusterView { revision, generated_at: ts(&now), source, nodes, pending, diagnoses, totals, blocked, quotas }
}

#[cfg(test)]
mod agent_scenarios;
#[cfg(test)]
mod dra_scenarios;
#[cfg(test)]
pub(crate) mod tests;
