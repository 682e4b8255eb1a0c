//! What each watched object loses on arrival: the fields gpudash never reads (managed fields,
//! most annotations, images, volume lists, pod template noise), so the stores stay small.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Node, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::ResourceExt;

use crate::pod::Pod;

pub(crate) fn strip_node(n: &mut Node) {
    n.managed_fields_mut().clear();
    if let Some(a) = n.metadata.annotations.as_mut() {
        a.retain(|k, _| {
            k == crate::derive::node::UNIFIED_OVERRIDE
                || k == crate::derive::node::K3S_NODE_ARGS
                || k == crate::derive::hami::NODE_REGISTER
        });
    }
    if let Some(s) = n.status.as_mut() {
        s.images = None;
        s.volumes_attached = None;
        s.volumes_in_use = None;
        // A kubelet's status report renews these without changing anything gpudash shows.
        for c in s.conditions.iter_mut().flatten() {
            c.last_heartbeat_time = None;
        }
    }
}

/// Pods arrive projected ([`crate::pod`]); [`Pod::strip`] drops the rest that is never read.
pub(crate) fn strip_pod(p: &mut Pod) {
    p.strip();
}

pub(crate) fn strip_event(e: &mut Event) {
    e.managed_fields_mut().clear();
}

pub(crate) fn strip_rs(r: &mut ReplicaSet) {
    r.managed_fields_mut().clear();
    // The Deployment controller's own annotations (revision, desired and max replicas) say how
    // a rollout surges; the rest is the workload's.
    if let Some(a) = r.metadata.annotations.as_mut() {
        a.retain(|k, _| k.starts_with("deployment.kubernetes.io/"));
    }
    if let Some(t) = r.spec.as_mut().and_then(|s| s.template.as_mut()) {
        t.metadata = None;
        if let Some(ps) = t.spec.as_mut() {
            ps.volumes = None;
            for c in &mut ps.containers {
                c.env = None;
                c.command = None;
                c.args = None;
            }
        }
    }
}

/// A Deployment keeps its strategy, replicas, progress deadline and status (the rollout's
/// conditions); its pod template is the ReplicaSets' business.
pub(crate) fn strip_deploy(d: &mut Deployment) {
    d.managed_fields_mut().clear();
    if let Some(a) = d.metadata.annotations.as_mut() {
        a.retain(|k, _| k.starts_with("deployment.kubernetes.io/"));
    }
    if let Some(s) = d.spec.as_mut() {
        s.template = Default::default();
    }
}

/// A DaemonSet keeps its update strategy and status counts.
pub(crate) fn strip_ds(d: &mut DaemonSet) {
    d.managed_fields_mut().clear();
    d.metadata.annotations = None;
    if let Some(s) = d.spec.as_mut() {
        s.template = Default::default();
    }
}

pub(crate) fn strip_rc(r: &mut RuntimeClass) {
    r.managed_fields_mut().clear();
}

pub(crate) fn strip_quota(q: &mut ResourceQuota) {
    q.managed_fields_mut().clear();
    q.metadata.annotations = None;
}
