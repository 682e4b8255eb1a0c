//! One node's view from its object, the pods it holds, their memory use and what the DRA
//! driver and the node's agent say — and the memo that rebuilds it only when one of those
//! changed.

mod usage;

use std::sync::Arc;

use gpudash_model::model::{GpuUser, Holder, NodeView};
use k8s_openapi::api::core::v1::Node;

use super::fork::{map_split, Fork};
use super::{agent, dra, node, pods, ts, Inputs, Map, Options};
use crate::pod::Pod;

use usage::memory_of;
pub(super) use usage::Use;

/// A pod a node holds, with its facts.
pub(super) type Held = (Arc<Pod>, Arc<pods::Facts>);

/// A node's view and what it was built from.
#[derive(Debug)]
pub(super) struct NodeMemo {
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
pub(super) struct Extra {
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
    pub(super) fn same(
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
pub(super) fn node_view(
    n: &Node,
    held: &[Held],
    usage: &[Option<u64>],
    pending_pods: u32,
    unified: bool,
    extra: &Extra,
    rs: &pods::RsOwners<'_>,
) -> NodeView {
    let Extra { dra, agent } = extra;
    let gpu_resources = gpu_resources(n, held, dra.as_deref(), rs);
    let name = n.metadata.name.clone().unwrap_or_default();
    let st = n.status.as_ref();
    let unified_memory = node::unified_memory(n, unified);
    let (memory, pod_mem, namespaces) = memory_of(n, held, usage, unified_memory, rs);
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

/// The node's GPU resources with who holds each: the device plugins' extended resources (and
/// any accelerator a held pod asks for that the node does not list), then the DRA driver's
/// devices, whose claims name their pods.
fn gpu_resources(
    n: &Node,
    held: &[Held],
    dra: Option<&dra::NodeDra>,
    rs: &pods::RsOwners<'_>,
) -> Vec<gpudash_model::model::GpuResource> {
    let no_dra = dra::NodeDra::default();
    let dra = dra.unwrap_or(&no_dra);
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
    let plugin = resources.iter().map(|r| {
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
                        share_permille: None,
                    }
                })
            })
            .collect();
        holders.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        node::gpu_resource(n, r, holders)
    });
    let driver = dra::resources(dra).into_iter().map(|mut g| {
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
    });
    let mut all: Vec<_> = plugin.chain(driver).collect();
    // A HAMi node says which card each vGPU is on, with its memory and cores.
    super::hami::apply(n, &mut all, held);
    all
}

/// What every node's view is built from beside its object: the pods by node, their memory
/// use (and whether a new poll came), the pods still waiting, the DRA objects by node, the
/// ReplicaSets' owners.
#[derive(Clone, Copy)]
pub(super) struct OnNodes<'a> {
    pub(super) index: &'a pods::PodIndex,
    pub(super) usage: &'a Use,
    pub(super) new_use: bool,
    pub(super) waiting: &'a [&'a Pod],
    pub(super) dra: &'a Map<String, Arc<dra::NodeDra>>,
    pub(super) rs: &'a pods::RsOwners<'a>,
}

/// What a node's view is rebuilt from, when it is.
struct Build<'a> {
    /// The node's place in the input's order.
    at: usize,
    node: &'a Arc<Node>,
    held_pods: &'a [Held],
    held: u64,
    usage: Vec<Option<u64>>,
    pending: u32,
    unified: bool,
    extra: Extra,
}

/// Every node's view, sorted by name, with its object in the same order: a node whose inputs
/// did not change keeps the memo's `Arc`; the memo is updated and forgets the nodes that are
/// gone. The views to rebuild are built through `fork` (in two halves when there are many).
pub(super) fn node_views<'i>(
    inputs: &'i Inputs,
    opts: &Options,
    on: &OnNodes<'_>,
    now: jiff::Timestamp,
    memo: &mut Map<String, NodeMemo>,
    fork: &impl Fork,
) -> (Vec<Arc<NodeView>>, Vec<&'i Node>) {
    let stale_after =
        if opts.agent_stale_after.is_zero() { agent::DEFAULT_STALE_AFTER } else { opts.agent_stale_after };
    let mut agents: Map<&str, (Arc<crate::agent::AgentSeen>, bool)> =
        inputs.agents.iter().map(|a| (a.node.as_str(), (a.clone(), agent::is_stale(a, now, stale_after)))).collect();
    let OnNodes { index, usage: usage_of, new_use, waiting, dra: dra_nodes, rs: rs_owners } = *on;
    let aims = super::pending::Aims::of(waiting);
    // Each node's view when kept (a node nothing touched costs a lookup, no copy of its
    // name); what to build it from otherwise.
    let mut views: Vec<Option<Arc<NodeView>>> = Vec::with_capacity(inputs.nodes.len());
    let mut builds: Vec<Build<'_>> = Vec::new();
    for (at, n) in inputs.nodes.iter().enumerate() {
        let name = n.metadata.name.as_deref().unwrap_or("");
        let on = index.on(name);
        let held_pods = on.map_or(&[][..], |o| o.held.as_slice());
        let held = on.map_or(0, |o| o.version);
        let kept = memo.get(name);
        // Memory use moves only with a new poll or with the pods held.
        let usage = match kept {
            Some(m) if !new_use && m.held == held => None,
            _ => Some(usage_of.of(name, held_pods)),
        };
        let pending = aims.count(n);
        let unified = opts.matches(n);
        let extra = Extra { dra: dra_nodes.get(name).cloned(), agent: agents.remove(name) };
        if let Some(m) =
            kept.filter(|m| m.same(n, held, usage.as_deref().unwrap_or(&m.usage), pending, unified, &extra))
        {
            views.push(Some(m.view.clone()));
            continue;
        }
        let usage = match (usage, kept) {
            (Some(u), _) => u,
            (None, Some(m)) => m.usage.clone(),
            (None, None) => usage_of.of(name, held_pods),
        };
        views.push(None);
        builds.push(Build { at, node: n, held_pods, held, usage, pending, unified, extra });
    }
    let built = map_split(fork, &builds, |b| {
        Arc::new(node_view(b.node, b.held_pods, &b.usage, b.pending, b.unified, &b.extra, rs_owners))
    });
    // Each built view into its node's place, and the memo.
    for (b, view) in builds.into_iter().zip(built) {
        let Build { at, node, held, usage, pending, unified, extra, .. } = b;
        let m = NodeMemo { node: node.clone(), held, usage, pending, unified, extra, view: view.clone() };
        let name = node.metadata.name.as_deref().unwrap_or("");
        match memo.get_mut(name) {
            Some(k) => *k = m,
            None => {
                memo.insert(name.to_string(), m);
            }
        }
        views[at] = Some(view);
    }
    let mut nodes: Vec<(Arc<NodeView>, &Node)> =
        views.into_iter().zip(&inputs.nodes).filter_map(|(v, n)| Some((v?, n.as_ref()))).collect();
    if memo.len() > inputs.nodes.len() {
        let present: std::collections::HashSet<&str> =
            inputs.nodes.iter().map(|n| n.metadata.name.as_deref().unwrap_or("")).collect();
        memo.retain(|name, _| present.contains(name.as_str()));
    }
    nodes.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    nodes.into_iter().unzip()
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
/// `cards` are the short forms of what the node decided about pods bound to it (a card names
/// the pod that holds a unit without running, was OOM-killed, refused or evicted there).
pub(super) fn attach_problems(
    nodes: &mut [Arc<NodeView>],
    (diagnoses, cards): (&[Arc<gpudash_model::model::Diagnosis>], &[Arc<gpudash_model::model::Diagnosis>]),
    memo: &mut Map<String, NodeMemo>,
) {
    // The nodes' diagnoses by node name, each node's in the order of `diagnoses` (a stable
    // sort), walked beside the nodes (sorted by name): no list is built for a node whose
    // diagnoses are those it had.
    let mut by_node: Vec<(&str, &Arc<gpudash_model::model::Diagnosis>)> = diagnoses
        .iter()
        .filter(|d| d.kind == gpudash_model::model::Kind::Node)
        .map(|d| (d.name.as_str(), d))
        .chain(cards.iter().filter_map(|d| d.node.as_deref().map(|n| (n, d))))
        .collect();
    by_node.sort_by(|a, b| a.0.cmp(b.0).then_with(|| b.1.severity.cmp(&a.1.severity)));
    let mut rest = by_node.as_slice();
    // Stands in the memo for a view being changed (allocated once, when one is).
    let mut spare: Option<Arc<NodeView>> = None;
    for n in nodes.iter_mut() {
        let skip = rest.iter().take_while(|d| d.0 < n.name.as_str()).count();
        let run = rest[skip..].iter().take_while(|d| d.0 == n.name).count();
        let (own, after) = rest[skip..].split_at(run);
        rest = after;
        // A diagnosis that goes on is the same `Arc`: `Arc`'s equality compares pointers first.
        if !n.problems.iter().eq(own.iter().map(|d| d.1)) {
            let mut kept = memo.get_mut(&n.name);
            // A view built in this run is held by the memo and here alone: the memo lets go
            // of it first, so that it is changed in place, not copied (a thousand copies of
            // whole views in the first run). One the published view still holds is copied.
            if let Some(m) = kept.as_deref_mut().filter(|m| Arc::ptr_eq(&m.view, n)) {
                m.view = spare.get_or_insert_with(Arc::default).clone();
            }
            Arc::make_mut(n).problems = own.iter().map(|d| Arc::clone(d.1)).collect();
            if let Some(m) = kept {
                m.view = n.clone();
            }
        }
    }
}
