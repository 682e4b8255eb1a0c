//! A pod waiting for the scheduler: its request, the scheduler's reasons and what to do.

use serde::{Deserialize, Serialize};

use super::{Code, Diagnosis};

/// A GPU request of a pending pod.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct GpuRequest {
    /// Resource name.
    pub resource: String,
    /// Units.
    pub count: u64,
}

/// One normalised scheduler reason with its node count.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct ReasonCount {
    /// Normalised reason (`Insufficient nvidia.com/gpu`, `node(s) had untolerated taint(s)`).
    pub reason: crate::i18n::Said,
    /// Whether `reason` is the scheduler's own words, not one gpudash knows (then the same in
    /// every language).
    #[serde(default)]
    pub verbatim: bool,
    /// Nodes that gave this reason; null when the message does not count them.
    pub nodes: Option<u32>,
}

/// A pod waiting to be scheduled.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct PendingPod {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Since when (RFC 3339).
    pub pending_since: Option<String>,
    /// Its GPU request, if any.
    pub gpu_request: Option<GpuRequest>,
    /// The raw scheduler message.
    pub message: Option<String>,
    /// `N` of `0/N nodes are available`.
    pub nodes_total: Option<u32>,
    /// Reasons with node counts.
    pub reasons: Vec<ReasonCount>,
    /// Diagnosis codes that concern this pod.
    pub diagnoses: Vec<Code>,
    /// The diagnoses that concern this pod, whole (what the pending page shows).
    #[serde(default)]
    pub problems: Vec<std::sync::Arc<Diagnosis>>,
    /// The scheduler, when not the default one (its messages are shown raw).
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Memory request, for the pending page.
    #[serde(default)]
    pub memory_request_bytes: Option<u64>,
    /// The workload a Pending pod belongs to (`Deployment/detector`; see `Holder::workload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// For a workload that cannot create its pods (see `ClusterView.blocked`): its kind
    /// (`ReplicaSet`, `Job`, `StatefulSet`, `DaemonSet`); null for a pod.
    #[serde(default)]
    pub workload: Option<String>,
    /// Its Dynamic Resource Allocation claims and their state.
    #[serde(default)]
    pub claims: Vec<PendingClaim>,
}

/// A claim of a pending pod.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct PendingClaim {
    /// The ResourceClaim's name (the pod's entry name while a template's claim is not made).
    pub name: String,
    /// The DeviceClass it asks for.
    pub device_class: Option<String>,
    /// `missing` (no such claim yet), `pending` (not allocated) or `allocated`.
    pub state: String,
}
