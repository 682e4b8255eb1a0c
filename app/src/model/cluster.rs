//! The whole view at one revision: where it comes from, its nodes, pending pods, diagnoses
//! and totals (`GET /api/v1/cluster`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Diagnosis, NodeView, PendingPod, QuotaView};

/// Where the data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SourceMode {
    /// A real cluster.
    #[default]
    Cluster,
    /// The built-in simulator (`gpudash serve --demo`).
    Demo,
}

/// Progress of the first sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SyncProgress {
    /// Kinds whose first list is complete.
    pub kinds_synced: u32,
    /// Kinds watched.
    pub kinds_total: u32,
    /// Objects received so far.
    pub objects: u64,
}

/// The state of the connection to the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Source {
    /// Cluster or simulated.
    pub mode: SourceMode,
    /// Whether every watcher has completed its first list.
    pub synced: bool,
    /// When the watch went down (RFC 3339), or null while it is live.
    pub stale_since: Option<String>,
    /// The last watch error, if the watch is down.
    #[serde(default)]
    pub error: Option<String>,
    /// Where the cluster is (API server URL), for the status line.
    #[serde(default)]
    pub server: String,
    /// Progress of the first sync.
    #[serde(default)]
    pub progress: SyncProgress,
}

/// Totals for the top of the overview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Totals {
    /// Nodes.
    pub nodes: u32,
    /// Ready nodes.
    pub ready_nodes: u32,
    /// GPU units allocatable, all GPU resources together.
    pub gpu_allocatable: u64,
    /// GPU units allocated.
    pub gpu_allocated: u64,
    /// Pending pods.
    pub pending: u32,
    /// Critical diagnoses.
    pub critical: u32,
    /// Warning diagnoses.
    pub warnings: u32,
    /// Workloads a quota keeps from creating pods.
    #[serde(default)]
    pub blocked: u32,
}

/// Everything the dashboard shows, at one revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClusterView {
    /// Increases with every change.
    pub revision: u64,
    /// When it was derived (RFC 3339).
    pub generated_at: String,
    /// Connection state.
    pub source: Source,
    /// Nodes, by name. Shared: a derivation reuses the views of nodes nothing touched, and
    /// comparing two views skips those by pointer.
    pub nodes: Vec<Arc<NodeView>>,
    /// Pending pods, longest waiting first.
    pub pending: Vec<PendingPod>,
    /// Diagnoses, most severe first. Shared: one that still holds is the same `Arc` from
    /// revision to revision (and on its node's card), so comparing and diffing skip it by pointer.
    pub diagnoses: Vec<Arc<Diagnosis>>,
    /// Workloads that cannot create their pods (a ResourceQuota refused them), shaped like
    /// pending pods: for the operator both are a model that is not running.
    #[serde(default)]
    pub blocked: Vec<PendingPod>,
    /// GPU-related ResourceQuota entries, by namespace (server-rendered `/quotas`: not read by
    /// the browser).
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub quotas: Vec<QuotaView>,
    /// Totals.
    #[serde(default)]
    pub totals: Totals,
}
