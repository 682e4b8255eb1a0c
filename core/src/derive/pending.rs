//! A Pending pod as the derivation first reads it: since when, the scheduler's message (from
//! its condition, else its newest FailedScheduling event, or HAMi's FilteringFailed) parsed, what GPU it asks for, its
//! DRA claims; and which nodes a pending pod names.

use std::sync::Arc;

use gpudash_model::model::{GpuRequest, PendingPod};
use k8s_openapi::api::core::v1::{Event, Node};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{dra, node, pods, scheduler, ts, Inputs, Map};
use crate::pod::Pod;

/// Does a pending pod's aim (see [`aim`]) name this node: nominated to it, or a node selector
/// it matches?
pub(crate) fn aims_at((nominated, selector): Aim<'_>, node: &Node) -> bool {
    let name = node.metadata.name.as_deref().unwrap_or("");
    if nominated == Some(name) {
        return true;
    }
    selector.is_some_and(|sel| {
        let l = node::labels(node);
        sel.iter().all(|(k, v)| l.get(k) == Some(v))
    })
}

/// What a pending pod names a node by: its nomination and its node selector.
pub(crate) type Aim<'a> = (Option<&'a str>, Option<&'a std::collections::BTreeMap<String, String>>);

/// What a pending pod names a node by (all that [`aims_at`] reads).
pub(crate) fn aim(pod: &Pod) -> Aim<'_> {
    (
        pod.status.as_ref().and_then(|s| s.nominated_node_name.as_deref()),
        pod.spec.as_ref().and_then(|s| s.node_selector.as_ref()).filter(|s| !s.is_empty()),
    )
}

/// The pending pods that name a node, grouped by what they name it by, with how many name it
/// so: how many pending pods name each node costs one test a group, not one a pod (twenty pods
/// of one workload waiting on a thousand nodes were twenty thousand tests a revision).
pub(crate) struct Aims<'a>(Map<Aim<'a>, u32>);

impl<'a> Aims<'a> {
    pub(crate) fn of(waiting: &[&'a Pod]) -> Self {
        let mut groups: Map<Aim<'a>, u32> = Map::default();
        for a in waiting.iter().map(|p| aim(p)).filter(|a| *a != (None, None)) {
            *groups.entry(a).or_default() += 1;
        }
        Aims(groups)
    }

    /// How many pending pods name this node.
    pub(crate) fn count(&self, node: &Node) -> u32 {
        self.0.iter().filter(|(a, _)| aims_at(**a, node)).map(|(_, n)| n).sum()
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

pub(super) fn pending_pod(pod: &Pod, events: &[Arc<Event>], claims: &ClaimIndex<'_>) -> PendingPod {
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
        // HAMi's scheduler says why in its own event (`FilteringFailed`) when its filter passes
        // no node.
        .or_else(|| {
            newest_event(events, pod, &["FailedScheduling", "FilteringFailed"]).and_then(|e| e.message.clone())
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_yaml::from_str(yaml).expect("fixture")
    }

    fn node(name: &str, labels: &str) -> Node {
        serde_yaml::from_str(&format!("metadata: {{name: {name}, labels: {{{labels}}}}}")).expect("fixture")
    }

    #[test]
    fn pods_grouped_by_their_aim_count_as_each_pod_does() {
        let jetson = pod("metadata: {name: a}\nspec: {containers: [], nodeSelector: {kind: jetson}}");
        let both = pod("metadata: {name: b}\nspec: {containers: [], nodeSelector: {kind: jetson, zone: \"1\"}}");
        let nominated = pod("metadata: {name: c}\nspec: {containers: []}\nstatus: {nominatedNodeName: n2}");
        let nominated_jetson =
            pod("metadata: {name: d}\nspec: {containers: [], nodeSelector: {kind: jetson}}\nstatus: {nominatedNodeName: n3}");
        let anywhere = pod("metadata: {name: e}\nspec: {containers: [], nodeSelector: {}}");
        let waiting = [&jetson, &jetson, &both, &nominated, &nominated, &nominated_jetson, &anywhere, &jetson];
        let aims = Aims::of(&waiting);
        assert_eq!(aims.0.len(), 4, "four distinct aims; the pod that names no node is in none");
        let nodes = [
            node("n1", "kind: jetson, zone: \"1\""),
            node("n2", "kind: x86"),
            node("n3", "kind: x86"),
            node("n4", "kind: jetson"),
            node("n5", ""),
        ];
        let each: Vec<u32> =
            nodes.iter().map(|n| waiting.iter().filter(|p| aims_at(aim(p), n)).count() as u32).collect();
        assert_eq!(each, vec![5, 2, 1, 4, 0]);
        assert_eq!(nodes.iter().map(|n| aims.count(n)).collect::<Vec<_>>(), each);
    }
}
