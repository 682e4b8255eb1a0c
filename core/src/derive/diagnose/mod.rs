//! Diagnoses: the silent failures of GPU scheduling on K3s, each with a stable code, a severity
//! and one sentence that says what to do. One function per code, grouped by what they look at:
//! nodes and their GPUs ([`nodes`]), pods waiting for the scheduler ([`waiting`]), runtimes and
//! RuntimeClasses ([`runtime`]).

mod after;
mod after_said;
mod agent;
mod agent_said;
mod down_said;
mod dra;
mod dra_said;
mod memory_said;
mod nodes;
mod nodes_said;
mod plugin_said;
mod quota;
mod quota_said;
mod rollout;
mod rollout_said;
mod runtime;
mod runtime_said;
mod terminating;
mod terminating_said;
mod vgpu;
mod vgpu_said;
mod waiting;
mod waiting_said;

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

use gpudash_model::i18n::Said;
use gpudash_model::model::{Code, Diagnosis, Kind, NodeView, PendingPod, QuotaView, Severity};
use k8s_openapi::api::core::v1::Node;

pub use after::{Idle, IdleSince, HELD_NOT_RUNNING_AFTER};

use super::{node, pods, Inputs};
use crate::pod::Pod;

fn diag(code: Code, severity: Severity, kind: Kind, namespace: Option<&str>, name: &str, message: Said) -> Diagnosis {
    // A node's diagnosis concerns that node; a bound pod's gets its node from `on_node`.
    let node = (kind == Kind::Node).then(|| name.to_string());
    Diagnosis {
        code,
        severity,
        kind,
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
        message,
        link: None,
        node,
        since: None,
    }
}

/// A diagnosis about a bound pod names its node (the alert's `node` label); the function that
/// finds it has the pod at hand.
fn on_node(mut d: Diagnosis, node: Option<&str>) -> Diagnosis {
    d.node = node.map(str::to_string);
    d
}

/// Names for a sentence: the first five, then how many more.
fn list(names: &[String]) -> Said {
    let s = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    let more = names.len().saturating_sub(5);
    if more > 0 {
        gpudash_model::say!("{s} and {more} more", "{s} ほか {more} 件")
    } else {
        Said::same(s)
    }
}

/// Sentences joined: `; ` in English, `。` in Japanese.
fn join(parts: &[Said]) -> Said {
    Said::join(parts, "; ", "。")
}

/// What every diagnosis reads: the node objects with their views, the device-plugin pod of each
/// node, and the pods waiting for the scheduler with their objects.
pub(super) struct Ctx<'a> {
    inputs: &'a Inputs,
    /// The pods by node and the notable ones.
    index: &'a pods::PodIndex,
    /// The events the runtime diagnoses read: all of them where one names a runtime, else none.
    runtime_events: &'a [Arc<k8s_openapi::api::core::v1::Event>],
    nodes: &'a [Arc<NodeView>],
    /// Each node object with its view.
    pairs: Vec<(&'a Node, &'a NodeView)>,
    /// The NVIDIA device-plugin pod bound to each node.
    plugins: super::Map<&'a str, &'a Pod>,
    /// Namespaces that run device-plugin pods anywhere (where its DaemonSet lives).
    plugin_namespaces: BTreeSet<&'a str>,
    /// The MPS control daemon's pod on each node that has one.
    mps_daemons: super::Map<&'a str, &'a Pod>,
    /// The pod object of each pending entry, in order.
    waiting: &'a [&'a Pod],
    /// Claims and templates by namespace and name (empty when no waiting pod names one).
    claims: &'a super::ClaimIndex<'a>,
    /// The derivation's time (for how long something has lasted).
    now: jiff::Timestamp,
    /// Seconds a pod may hold GPU units without running before it is said to.
    held_after: i64,
}

impl Ctx<'_> {
    /// Whether the cluster hands out GPUs through DRA: a GPU DeviceClass exists and no
    /// device plugin runs anywhere (the GPU Operator's DRA mode).
    fn dra_mode(&self) -> bool {
        self.plugin_namespaces.is_empty() && self.inputs.device_classes.iter().any(|c| super::dra::is_gpu_class(c))
    }
}

impl<'a> Ctx<'a> {
    /// The view of a node by name (views are sorted by name).
    fn view(&self, name: &str) -> Option<&'a NodeView> {
        self.nodes.binary_search_by(|v| v.name.as_str().cmp(name)).ok().map(|i| self.nodes[i].as_ref())
    }

    /// A pod holding resources on `node`, by namespace and name: among the pods of that node,
    /// not among every pod of the cluster.
    fn held_on(&self, node: &Node, ns: &str, name: &str) -> Option<&'a Arc<Pod>> {
        let here = self.index.on(node.metadata.name.as_deref().unwrap_or(""))?;
        here.held
            .iter()
            .map(|(p, _)| p)
            .find(|p| p.metadata.namespace.as_deref() == Some(ns) && p.metadata.name.as_deref() == Some(name))
    }

    /// Whether a pending pod could go to this node as far as its node selector or nomination
    /// says (a pod that names no node could go to any).
    fn could_target(pod: &Pod, n: &Node) -> bool {
        Self::could_aim(super::pending::aim(pod), n)
    }

    /// [`Self::could_target`] from what the pod names a node by.
    fn could_aim(aim: super::pending::Aim<'_>, n: &Node) -> bool {
        aim == (None, None) || super::pending::aims_at(aim, n)
    }
}

/// Every sentence the diagnoses say, from their catalogues.
pub(crate) fn sentences() -> impl Iterator<Item = &'static gpudash_model::i18n::Sentence> {
    [
        after_said::ALL,
        agent_said::ALL,
        down_said::ALL,
        dra_said::ALL,
        memory_said::ALL,
        nodes_said::ALL,
        plugin_said::ALL,
        quota_said::ALL,
        rollout_said::ALL,
        runtime_said::ALL,
        terminating_said::ALL,
        vgpu_said::ALL,
        waiting_said::ALL,
    ]
    .into_iter()
    .flatten()
}

/// The codes found from one node's view alone (its GPU users, memory and sharing).
const OF_VIEW: [Code; 3] = [Code::GpuUsedOutsideScheduler, Code::UnifiedMemoryOvercommit, Code::GpuTimeSliceContention];

/// The diagnoses that follow from one node's view alone, kept per node with the view they were
/// found on, as they were published (linked and stamped): a node whose view did not change
/// gives the same `Arc`s again, with no sentence formatted, compared or copied. A thousand
/// nodes' worth of them cost most of a revision before.
#[derive(Debug, Default)]
pub struct OfView(super::Map<String, (Arc<NodeView>, Vec<Arc<Diagnosis>>)>);

impl OfView {
    /// Keeps what the published views say about themselves (`nodes` sorted by name, each with
    /// its problems attached).
    pub(super) fn keep(&mut self, nodes: &[Arc<NodeView>]) {
        for n in nodes {
            if self.0.get(n.name.as_str()).is_some_and(|(v, _)| Arc::ptr_eq(v, n)) {
                continue;
            }
            let own = n.problems.iter().filter(|d| OF_VIEW.contains(&d.code)).cloned().collect();
            self.0.insert(n.name.clone(), (n.clone(), own));
        }
        if self.0.len() != nodes.len() {
            self.0.retain(|name, _| nodes.binary_search_by(|n| n.name.as_str().cmp(name)).is_ok());
        }
    }

    /// The view-only diagnoses of a node: kept ones when its view is the one they were found
    /// on, new ones (not linked, not stamped) otherwise.
    fn of(&self, view: &Arc<NodeView>, out: &mut Vec<Arc<Diagnosis>>) {
        if let Some((v, kept)) = self.0.get(view.name.as_str()) {
            if Arc::ptr_eq(v, view) {
                out.extend(kept.iter().cloned());
                return;
            }
        }
        let mut found = Vec::new();
        nodes::gpu_used_outside_scheduler(view, &mut found);
        nodes::unified_memory_overcommit(view, &mut found);
        nodes::gpu_time_slice_contention(view, &mut found);
        out.extend(found.into_iter().map(Arc::new));
    }
}

/// The derivation's time and what the after-binding diagnoses weigh against it.
pub struct Timing<'a> {
    /// Now.
    pub now: jiff::Timestamp,
    /// How long a holder may not run (zero: the default).
    pub held_after: std::time::Duration,
    /// The holders idle for longer than the options allow.
    pub idle: &'a [Idle],
}

/// Computes every diagnosis; adds the codes that concern each pending pod to it, and returns
/// the workloads a GPU quota keeps from creating pods, and the short forms of the diagnoses
/// about pods that their nodes' cards show. `nodes` are the views sorted by name,
/// each with its object in the same order; `waiting` holds the pod object of each entry of
/// `pending`, in the same order.
#[allow(clippy::too_many_arguments)]
pub fn diagnose(
    of_view: &OfView,
    inputs: &Inputs,
    (index, events): (&pods::PodIndex, &super::events::EventIndex),
    (nodes, objects): (&[Arc<NodeView>], &[&Node]),
    quotas: &[QuotaView],
    pending: &mut [PendingPod],
    waiting: &[&Pod],
    claims: &super::ClaimIndex<'_>,
    Timing { now, held_after, idle }: Timing<'_>,
) -> (Vec<Arc<Diagnosis>>, Vec<PendingPod>, Vec<Arc<Diagnosis>>) {
    // The views and their objects, in one order (the views' by name).
    let pairs = objects.iter().copied().zip(nodes.iter().map(AsRef::as_ref)).collect();
    let (plugins, plugin_namespaces, mps_daemons) = device_plugins(index);
    let runtime_events = if events.names_runtime() { &inputs.events[..] } else { &[] };
    let held_after = if held_after.is_zero() { HELD_NOT_RUNNING_AFTER } else { held_after.as_secs().max(1) as i64 };
    let cx = Ctx {
        inputs,
        index,
        runtime_events,
        nodes,
        pairs,
        plugins,
        plugin_namespaces,
        mps_daemons,
        waiting,
        claims,
        now,
        held_after,
    };
    let mut out = Vec::new();
    let troubled = nodes::device_plugin_and_health(&cx, pending, &mut out);
    nodes::gpu_node_down(&cx, &mut out);
    agent::agent_missing_or_stale(&cx, &mut out);
    nodes::gpu_memory_beyond_limit(&cx, &mut out);
    let stalled = after::stalled(&cx);
    waiting::insufficient_gpu(&cx, &troubled, &stalled, pending, &mut out);
    waiting::shared_gpu_request_too_large(pending, &mut out);
    waiting::insufficient_memory(&cx, pending, &mut out);
    vgpu::memory_shares(&cx, pending, &mut out);
    waiting::gpu_node_cordoned(&cx, pending, &mut out);
    runtime::runtimeclass_missing(&cx, &mut out);
    runtime::runtime_handler_missing(&cx, &mut out);
    runtime::gpu_pod_without_runtimeclass(&cx, &mut out);
    runtime::shared_gpu_admission_refused(&cx, &mut out);
    dra::deviceclass_missing(&cx, pending, &mut out);
    dra::claim_unreserved(&cx, &mut out);
    dra::dual_allocator(&cx, &mut out);
    let mut cards = Vec::new();
    after::after_binding(&cx, &stalled, pending, (&mut out, &mut cards));
    after::held_idle(&cx, idle, pending, &mut out);
    let blocked = quota::gpu_quota_exhausted(&cx, quotas, &mut out);
    let found: Vec<Arc<Diagnosis>> = out.into_iter().map(Arc::new).collect();
    let mut own = Vec::new();
    for view in nodes {
        of_view.of(view, &mut own);
    }
    let mut out = in_order(found, own);
    link(&cx, pending, &blocked, &mut out);
    tell_pending(&cx, pending, &out);
    after::tell_pending(&cx, &stalled, pending, &out);
    (out, blocked, cards.into_iter().map(Arc::new).collect())
}

/// The diagnoses found and those of the nodes' views (`own`, node by node, the nodes sorted by
/// name), in [`order`] — stable: two alike in all four (one code on two resources of a node)
/// keep the order they were found in, as one stable sort of `found` then `own` gives.
/// `own` names its nodes with no namespace, so ordered by severity and code alone it is in the
/// whole order (checked; sorted whole where not) and is merged in, without comparing a
/// thousand names.
fn in_order(mut found: Vec<Arc<Diagnosis>>, mut own: Vec<Arc<Diagnosis>>) -> Vec<Arc<Diagnosis>> {
    found.sort_by(|a, b| order(a, b));
    own.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| code_order(a, b)));
    if !own.is_sorted_by(|a, b| order(a, b) != Ordering::Greater) {
        own.sort_by(|a, b| order(a, b));
    }
    let mut out = Vec::with_capacity(found.len() + own.len());
    let mut own = own.into_iter().peekable();
    for d in found {
        // Ties go to those found first.
        while let Some(o) = own.next_if(|o| order(o, &d) == Ordering::Less) {
            out.push(o);
        }
        out.push(d);
    }
    out.extend(own);
    out
}

/// The order of diagnoses: the most severe first, then by code, namespace and name.
fn order(a: &Diagnosis, b: &Diagnosis) -> Ordering {
    b.severity
        .cmp(&a.severity)
        .then_with(|| code_order(a, b))
        .then_with(|| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)))
}

/// Diagnoses by code (as written); most neighbours share theirs, and equal variants need no
/// text compared.
fn code_order(a: &Diagnosis, b: &Diagnosis) -> Ordering {
    if a.code == b.code {
        Ordering::Equal
    } else {
        a.code.as_str().cmp(b.code.as_str())
    }
}

/// The device plugin's pod on each node (where two run on one node, the first by name, every
/// time), the namespaces it runs in, and the MPS control daemon's pod on each node.
type Plugins<'a> = (super::Map<&'a str, &'a Pod>, BTreeSet<&'a str>, super::Map<&'a str, &'a Pod>);

fn device_plugins(index: &pods::PodIndex) -> Plugins<'_> {
    let mut plugins: super::Map<&str, &Pod> = super::Map::default();
    let mut mps: super::Map<&str, &Pod> = super::Map::default();
    let mut plugin_namespaces = BTreeSet::new();
    for p in index.notable().filter(|p| p.is_device_plugin()) {
        let Some(n) = pods::node_of(p) else {
            if !p.is_mps_daemon() {
                plugin_namespaces.insert(p.metadata.namespace.as_deref().unwrap_or(""));
            }
            continue;
        };
        let map = if p.is_mps_daemon() {
            &mut mps
        } else {
            plugin_namespaces.insert(p.metadata.namespace.as_deref().unwrap_or(""));
            &mut plugins
        };
        let e = map.entry(n).or_insert(p.as_ref());
        if (&p.metadata.namespace, &p.metadata.name) < (&e.metadata.namespace, &e.metadata.name) {
            *e = p.as_ref();
        }
    }
    (plugins, plugin_namespaces, mps)
}

/// Gives each pending pod the diagnoses about it, and — where it waits for a GPU claim — those
/// of the nodes it could go to whose DRA driver is missing (the reason its claim waits).
fn tell_pending(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &[Arc<Diagnosis>]) {
    let driver_missing: Vec<&Arc<Diagnosis>> = out.iter().filter(|d| d.code == Code::DraDriverMissing).collect();
    let gpu_classes = dra::gpu_classes(cx);
    // The pods' diagnoses by namespace and name: one pass, not one per pending pod (10,000
    // Pending pods with a diagnosis each were 10^8 comparisons a revision).
    let mut of_pod: std::collections::HashMap<(&str, &str), Vec<&Arc<Diagnosis>>> = std::collections::HashMap::new();
    for d in out.iter().filter(|d| d.kind == Kind::Pod) {
        of_pod.entry((d.namespace.as_deref().unwrap_or(""), d.name.as_str())).or_default().push(d);
    }
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        let own = of_pod.get(&(p.namespace.as_str(), p.name.as_str()));
        // Shared with the view's list, not copied (10,000 Pending pods held 10,000 copies).
        p.problems = own.into_iter().flatten().map(|d| Arc::clone(d)).collect();
        if !dra::waits_for_gpu_claim(p, &gpu_classes) {
            continue;
        }
        for d in &driver_missing {
            let node = cx.inputs.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(d.name.as_str()));
            if node.is_some_and(|n| Ctx::could_target(pod, n)) {
                p.problems.push(Arc::clone(d));
                if !p.diagnoses.contains(&d.code) {
                    p.diagnoses.push(d.code.clone());
                }
            }
        }
    }
}

/// Where each diagnosis's object is shown: a node's page; a pod's entry on the pending page,
/// or the page of the node it runs on; a blocked workload's entry on the pending page. A
/// diagnosis kept from the last revision (a node's, see [`OfView`]) is linked already.
fn link(cx: &Ctx<'_>, pending: &[PendingPod], blocked: &[PendingPod], out: &mut [Arc<Diagnosis>]) {
    use gpudash_model::url::percent_encode as enc;
    let mut bound: Option<super::Map<(&str, &str), &str>> = None;
    let mut claim_nodes: Option<super::Map<(&str, &str), &str>> = None;
    for d in out.iter_mut().filter(|d| d.link.is_none()) {
        let link = match d.kind {
            Kind::Node => Some(format!("/nodes/{}", enc(&d.name))),
            // A claim is shown on the node whose device it holds.
            Kind::ResourceClaim => {
                let claims = claim_nodes.get_or_insert_with(|| {
                    let mut m = super::Map::default();
                    for n in cx.nodes {
                        for c in n.gpu_resources.iter().flat_map(|g| &g.devices).flat_map(|v| &v.claims) {
                            m.insert((c.namespace.as_str(), c.name.as_str()), n.name.as_str());
                        }
                    }
                    m
                });
                let ns = d.namespace.as_deref().unwrap_or("");
                claims.get(&(ns, d.name.as_str())).map(|n| format!("/nodes/{}", enc(n)))
            }
            Kind::Pod => {
                let ns = d.namespace.as_deref().unwrap_or("");
                if pending.iter().any(|p| p.namespace == ns && p.name == d.name) {
                    Some(format!("/pending#pod-{}-{}", enc(ns), enc(&d.name)))
                } else if let Some(n) = d.node.as_deref() {
                    // The node it is bound to, as the diagnosis says: no walk over every pod.
                    Some(format!("/nodes/{}", enc(n)))
                } else {
                    let bound = bound.get_or_insert_with(|| {
                        cx.inputs
                            .pods
                            .iter()
                            .filter_map(|p| {
                                let n = pods::node_of(p)?;
                                Some((
                                    (
                                        p.metadata.namespace.as_deref().unwrap_or(""),
                                        p.metadata.name.as_deref().unwrap_or(""),
                                    ),
                                    n,
                                ))
                            })
                            .collect()
                    });
                    bound.get(&(ns, d.name.as_str())).map(|n| format!("/nodes/{}", enc(n)))
                }
            }
            // A workload a quota blocks is listed beside the pending pods.
            _ => {
                let ns = d.namespace.as_deref().unwrap_or("");
                blocked
                    .iter()
                    .any(|b| b.namespace == ns && b.name == d.name)
                    .then(|| format!("/pending#pod-{}-{}", enc(ns), enc(&d.name)))
            }
        };
        if link.is_some() {
            Arc::make_mut(d).link = link;
        }
    }
}

/// Whether a pending pod waits for an NVIDIA GPU resource.
fn wants_nvidia_gpu(p: &PendingPod) -> bool {
    p.gpu_request.as_ref().is_some_and(|g| node::is_nvidia_gpu(&g.resource))
}

#[cfg(test)]
mod after_tests;
#[cfg(test)]
mod rollout_tests;
#[cfg(test)]
mod tests;
