//! The what-if check's form, verdicts and input errors (server-rendered; not in the browser
//! bundle).

use serde::{Deserialize, Serialize};

/// The what-if form's fields (also echoed back so the form keeps what was typed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FitInput {
    /// A pasted Pod or Deployment (YAML or JSON); when set, the other fields are ignored.
    #[serde(default)]
    pub yaml: String,
    /// GPU resource name (default `nvidia.com/gpu`).
    #[serde(default)]
    pub gpu_resource: String,
    /// GPU units per replica.
    #[serde(default)]
    pub gpu_count: String,
    /// CPU request (`500m`).
    #[serde(default)]
    pub cpu_request: String,
    /// CPU limit.
    #[serde(default)]
    pub cpu_limit: String,
    /// Memory request (`2Gi`).
    #[serde(default)]
    pub memory_request: String,
    /// Memory limit.
    #[serde(default)]
    pub memory_limit: String,
    /// `key=value` per line or comma-separated.
    #[serde(default)]
    pub node_selector: String,
    /// `key=value:Effect`, `key:Effect` or `key` (Exists) per line.
    #[serde(default)]
    pub tolerations: String,
    /// runtimeClassName.
    #[serde(default)]
    pub runtime_class: String,
    /// Replicas (default 1).
    #[serde(default)]
    pub replicas: String,
    /// Namespace (default `default`): whose ResourceQuotas admit it.
    #[serde(default)]
    pub namespace: String,
}

/// Unified-memory headroom on one board after placing one replica (negative: overcommitted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Headroom {
    /// The board's allocatable memory.
    pub board_bytes: u64,
    /// Allocatable minus all requests including the new pod.
    pub after_requests_bytes: i64,
    /// Allocatable minus all limits including the new pod (unbounded limits count as the board).
    pub after_limits_bytes: i64,
    /// The board's RAM really free now, as its gpudash-agent last read it (tegrastats: models'
    /// GPU memory and the system included), before the new pod; null without an agent.
    #[serde(default)]
    pub board_free_bytes: Option<u64>,
}

/// The verdict for one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct NodeFit {
    /// Node name.
    pub node: String,
    /// One replica fits.
    pub fits: bool,
    /// The scheduler's reasons when it does not.
    pub reasons: Vec<String>,
    /// How many replicas the node could take.
    pub capacity_for: u32,
    /// For unified-memory boards.
    pub headroom: Option<Headroom>,
}

/// A precise input error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FitError {
    /// The field (`spec.containers[0].resources.limits.memory`, `memory_request`, `yaml`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// The answer to "will my next model fit?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FitResult {
    /// Scheduler-style summary (`0/6 nodes are available: …`).
    pub summary: String,
    /// Replicas asked for.
    pub replicas: u32,
    /// Replicas that could be placed, greedily, one after the other.
    pub placeable: u32,
    /// Per node, by name.
    pub nodes: Vec<NodeFit>,
    /// What would make it fit.
    pub suggestions: Vec<crate::i18n::Said>,
    /// Input error; when set, nothing else is meaningful.
    pub error: Option<FitError>,
    /// When the pasted Deployment or DaemonSet already runs here: whether its rollout, with the
    /// strategy given, can complete while its old pods hold what they hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateFit>,
}

/// The what-if answer for an update of a workload that already runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct UpdateFit {
    /// Whether the rollout can finish by itself.
    pub completes: bool,
    /// The workload's pods running now (holding what they hold until the rollout removes them).
    pub old_pods: u32,
    /// Why, with the strategy as written and as the controller rounds it, and the fix.
    pub message: crate::i18n::Said,
}
