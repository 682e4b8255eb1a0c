//! The pure derivation: Kubernetes objects and a clock in, the ClusterView out. No I/O here —
//! everything is a function of its arguments and is unit-tested with real object shapes.

pub mod agent;
mod diagnose;
pub mod dra;
mod dra_devices;
mod events;
mod fork;
pub mod hami;
mod inputs;
mod load;
pub mod memory;
pub mod node;
mod node_view;
mod pending;
pub mod pods;
pub mod quota;
pub mod scheduler;
mod since;
pub mod strategy;

pub(crate) use diagnose::sentences as diagnosis_sentences;
pub use diagnose::HELD_NOT_RUNNING_AFTER;
pub use fork::{Fork, InTurn, SPLIT_FROM};
pub use inputs::{ContainerMetrics, Inputs, NodeMetrics, Options, PodMetrics, SelectorError};
pub use load::from_kubectl_yaml;
use node_view::{attach_problems, node_views, NodeMemo, OnNodes, Use};
use pending::pending_pod;
pub(crate) use pending::{event_time, ClaimIndex};
pub use since::{diag_key, DiagKey};
use since::{stamp, Since};

use std::collections::HashMap;
use std::sync::Arc;

use gpudash_model::model::{ClusterView, PendingPod, Source, Totals};

use crate::pod::Pod;

/// A map for the derivation's per-run indexes: foldhash, seeded per process, is several times
/// faster than SipHash on short names, and still not predictable from outside.
pub(crate) type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Sentences said for many objects in one run, kept once: an equal one (words and form) said
/// before is handed out again — its `Arc`s, no text copied — instead of kept a second time.
/// 10,000 pods waiting for the same reason held 10,000 copies of their reasons and of their
/// insufficient-gpu sentence, both languages each (~1 KiB a pod, in the old view and the new).
/// One lives for one run: it holds no more than that run's sentences.
#[derive(Default)]
pub(crate) struct Shared(std::collections::HashSet<gpudash_model::i18n::Said, foldhash::fast::RandomState>);

impl Shared {
    /// `said`, or the equal one said before.
    pub(crate) fn said(&mut self, said: gpudash_model::i18n::Said) -> gpudash_model::i18n::Said {
        if let Some(kept) = self.0.get(&said) {
            return kept.clone();
        }
        self.0.insert(said.clone());
        said
    }
}

pub fn ts(t: &jiff::Timestamp) -> String {
    t.round(jiff::Unit::Second).unwrap_or(*t).to_string()
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
    /// The events by address, with what their messages name.
    events: events::EventIndex,
    nodes: Map<String, NodeMemo>,
    /// The diagnoses each node's view gives by itself, as last published.
    of_view: diagnose::OfView,
    /// The slices and claims split by node, kept while neither list changed.
    dra: dra::Split,
    /// Memory use from the metrics last read.
    metrics: Use,
    /// Since when each open diagnosis has held (only the open ones: bounded by the view).
    since: Since,
    /// Since when each GPU holder's devices have been measured under the idle line (see
    /// `diagnose::after::Idle`): only holders idle now, so bounded by the view.
    idle: diagnose::IdleSince,
    /// Whether the last run's source was synced: node views built before the first full list
    /// (a pod seen before its ReplicaSet) are not kept past it.
    synced: bool,
    /// Diagnoses history found open at the last heartbeat before this process started, with
    /// the time each was raised; taken over by the first synced derivation that still finds
    /// them, dropped by it otherwise.
    carried: Option<Map<DiagKey, String>>,
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

/// Derives the ClusterView, reusing what `cache` kept from the last run.
pub fn derive_cached(
    inputs: &Inputs,
    opts: &Options,
    source: Source,
    revision: u64,
    now: jiff::Timestamp,
    cache: &mut Cache,
) -> ClusterView {
    derive_forked(inputs, opts, source, revision, now, cache, &InTurn)
}

/// Derives the ClusterView as [`derive_cached`] does, doing large independent parts (many
/// nodes' views to rebuild) through `fork`: the same view, sooner where `fork` has a thread.
pub fn derive_forked(
    inputs: &Inputs,
    opts: &Options,
    source: Source,
    revision: u64,
    now: jiff::Timestamp,
    cache: &mut Cache,
    fork: &impl Fork,
) -> ClusterView {
    if source.synced != cache.synced {
        cache.nodes.clear();
        cache.synced = source.synced;
    }
    let rs_owners = pods::rs_owners(&inputs.replica_sets);
    cache.pods.update(&inputs.pods);
    cache.events.update(&inputs.events);
    let index = &cache.pods;
    let new_use = cache.metrics.update(inputs);
    let usage_of = &cache.metrics;

    let unscheduled: Vec<&Arc<Pod>> = index.notable().filter(|p| pods::is_unscheduled(p)).collect();
    // Claims by name, only when a waiting pod names one (8 000 claims cost a millisecond a run).
    let names_claims = |p: &Pod| p.spec.as_ref().is_some_and(|s| !s.resource_claims.is_empty());
    let claim_index =
        if unscheduled.iter().any(|p| names_claims(p)) { ClaimIndex::new(inputs) } else { ClaimIndex::empty() };
    let dra_nodes = cache.dra.update(&inputs.slices, &inputs.claims);
    let mut reasons = Shared::default();
    let mut pending: Vec<(Option<jiff::Timestamp>, PendingPod, &Pod)> = unscheduled
        .into_iter()
        .map(|p| {
            let mut pp = pending_pod(p, &inputs.events, &claim_index);
            for r in &mut pp.reasons {
                r.reason = reasons.said(std::mem::take(&mut r.reason));
            }
            pp.owner = pods::workload(p, &rs_owners);
            let t = pp.pending_since.as_deref().and_then(|s| s.parse().ok());
            (t, pp, p.as_ref())
        })
        .collect();
    drop(reasons);
    pending.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| (&a.1.namespace, &a.1.name).cmp(&(&b.1.namespace, &b.1.name))));

    let waiting_pods: Vec<&Pod> = pending.iter().map(|(_, _, p)| *p).collect();
    let on_nodes = OnNodes { index, usage: usage_of, new_use, waiting: &waiting_pods, dra: dra_nodes, rs: &rs_owners };
    let (mut nodes, objects) = node_views(inputs, opts, &on_nodes, now, &mut cache.nodes, fork);

    let (mut pending, waiting): (Vec<PendingPod>, Vec<&Pod>) = pending.into_iter().map(|(_, p, o)| (p, o)).unzip();
    let quotas = quota::quotas(&inputs.quotas, &nodes);
    let idle = cache.idle.update(&nodes, now, opts.held_idle_after);
    let (mut diagnoses, blocked, cards) = diagnose::diagnose(
        &cache.of_view,
        inputs,
        (index, &cache.events),
        (&nodes, &objects),
        &quotas,
        &mut pending,
        &waiting,
        &claim_index,
        diagnose::Timing { now, held_after: opts.held_not_running_after, idle: &idle },
    );
    stamp(&mut diagnoses, &mut pending, &source, &now, cache);
    attach_problems(&mut nodes, (&diagnoses, &cards), &mut cache.nodes);
    cache.of_view.keep(&nodes);
    let totals = Totals {
        nodes: u32::try_from(nodes.len()).unwrap_or(u32::MAX),
        ready_nodes: u32::try_from(nodes.iter().filter(|n| n.ready).count()).unwrap_or(u32::MAX),
        gpu_allocatable: nodes.iter().flat_map(|n| &n.gpu_resources).map(|g| g.allocatable).sum(),
        gpu_allocated: nodes.iter().flat_map(|n| &n.gpu_resources).map(|g| g.allocated).sum(),
        pending: u32::try_from(pending.len()).unwrap_or(u32::MAX),
        blocked: u32::try_from(blocked.len()).unwrap_or(u32::MAX),
        critical: u32::try_from(
            diagnoses.iter().filter(|d| d.severity == gpudash_model::model::Severity::Critical).count(),
        )
        .unwrap_or(0),
        warnings: u32::try_from(
            diagnoses.iter().filter(|d| d.severity == gpudash_model::model::Severity::Warning).count(),
        )
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
