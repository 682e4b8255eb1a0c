//! What the derivation is given: the watched objects, the metrics polled, the agents' reports,
//! and the operator's settings that change it.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Node, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use super::node;
use crate::pod::Pod;

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
    /// How long a pod may hold GPU units without running before `gpu-held-not-running` says so
    /// (zero: [`crate::derive::HELD_NOT_RUNNING_AFTER`]).
    pub held_not_running_after: std::time::Duration,
    /// How long a holder's GPU may stay under 5 % busy (as its node's agent measures it) while
    /// a pod waits for that resource before `gpu-held-idle` says so (zero: two hours).
    pub held_idle_after: std::time::Duration,
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
