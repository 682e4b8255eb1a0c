//! The view model: what the server derives from the cluster and every view renders. These are
//! the JSON API v1 types (`GET /api/v1/cluster`); their field names are a stable interface.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

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

/// Memory of one node (bytes). On unified-memory boards this pool is also the GPU's memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct MemoryView {
    /// `status.capacity.memory`.
    pub capacity_bytes: u64,
    /// `status.allocatable.memory`.
    pub allocatable_bytes: u64,
    /// Sum of effective memory requests of the pods holding resources on the node.
    pub requested_bytes: u64,
    /// Sum of memory limits; containers without a limit are counted in `unbounded_containers`.
    pub limits_bytes: u64,
    /// Working-set use from metrics.k8s.io; null when metrics are not available (never 0).
    pub used_bytes: Option<u64>,
    /// Containers on the node with no memory limit (they can use the whole board).
    #[serde(default)]
    pub unbounded_containers: u32,
}

/// How a GPU resource is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    /// One pod per GPU.
    #[default]
    None,
    /// Time-slicing replicas: no memory or fault isolation, no proportional compute.
    TimeSlicing,
    /// CUDA MPS.
    Mps,
    /// Multi-Instance GPU slices.
    Mig,
}

/// A pod holding units of a GPU resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Holder {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Units held.
    pub count: u64,
    /// When the pod was created (RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// The pod's runtimeClassName.
    #[serde(default)]
    pub runtime_class: Option<String>,
    /// The pod is being deleted (Terminating): it still holds its units until it is gone.
    #[serde(default)]
    pub terminating: bool,
}

/// One GPU extended resource on one node.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct GpuResource {
    /// Resource name (`nvidia.com/gpu`, `nvidia.com/mig-1g.5gb`, …).
    pub resource: String,
    /// GPU product from `nvidia.com/gpu.product`.
    pub product: Option<String>,
    /// Physical GPUs behind this resource, when known.
    pub physical_gpus: Option<u64>,
    /// Replicas each physical GPU advertises (1 when not shared).
    pub replicas_per_gpu: u64,
    /// Sharing mode.
    pub sharing: Sharing,
    /// `status.capacity`.
    pub capacity: u64,
    /// `status.allocatable`.
    pub allocatable: u64,
    /// Units held by pods.
    pub allocated: u64,
    /// The pods holding units.
    pub holders: Vec<Holder>,
    /// Whether it is known which physical GPU each held unit is on. The API does not say for
    /// time-sliced replicas on a node with more than one GPU.
    #[serde(default)]
    pub placement_known: bool,
    /// Units out of service: `capacity − allocatable` when the device plugin took GPUs it found
    /// unhealthy (Xid errors, fallen off the bus) out of the allocatable count.
    #[serde(default)]
    pub out_of_service: u64,
}

/// A pod that uses a node's GPU without the scheduler counting it (no `nvidia.com/gpu`
/// request): through an NVIDIA runtime class, `NVIDIA_VISIBLE_DEVICES`, or a node whose default
/// runtime is NVIDIA's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct GpuUser {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Sure (the spec says so) or only possible (the node's default runtime gives every
    /// container the GPU when its image asks for it).
    pub sure: bool,
    /// What says so: `runtime-class`, `env` or `default-runtime` (not read by the browser).
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub evidence: String,
}

/// A node that stopped reporting (Ready Unknown) or reports not ready (Ready False).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct NodeDown {
    /// The Ready condition's status: `Unknown` (no contact) or `False`.
    pub status: String,
    /// Since when (the Ready condition's last transition, RFC 3339).
    pub since: Option<String>,
    /// The Ready condition's reason (`NodeStatusUnknown`, `KubeletNotReady`, …).
    pub reason: Option<String>,
    /// When its pods will be evicted by the `node.kubernetes.io/unreachable` or `not-ready`
    /// taint (`since` + the shortest `tolerationSeconds` of its pods), if they tolerate it for
    /// a bounded time.
    pub evict_at: Option<String>,
}

/// A node condition, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct ConditionView {
    /// Condition type (`Ready`, `MemoryPressure`, …).
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Whether this condition's state is bad (Ready not True, a pressure True).
    pub bad: bool,
    /// Reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Message.
    #[serde(default)]
    pub message: Option<String>,
}

/// One pod's share of a node's memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct PodMemory {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Effective memory request.
    pub requested_bytes: u64,
    /// Memory limit; null when a container has none (unbounded).
    pub limit_bytes: Option<u64>,
    /// Working set from metrics.k8s.io.
    pub used_bytes: Option<u64>,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct NodeView {
    /// Node name.
    pub name: String,
    /// Ready condition is True.
    pub ready: bool,
    /// CPU and GPU share one memory pool (Jetson/Tegra).
    pub unified_memory: bool,
    /// Memory figures.
    pub memory: MemoryView,
    /// GPU resources.
    pub gpu_resources: Vec<GpuResource>,
    /// Pending pods that name this node (nodeSelector hostname or nominated).
    #[serde(default)]
    pub pending_pods: u32,
    /// Conditions.
    #[serde(default)]
    pub conditions: Vec<ConditionView>,
    /// `spec.unschedulable`.
    #[serde(default)]
    pub unschedulable: bool,
    /// CPU architecture.
    #[serde(default)]
    pub arch: String,
    /// Labels that matter to GPU scheduling (product, count, replicas, strategy, …).
    #[serde(default)]
    pub gpu_labels: Vec<(String, String)>,
    /// Every label (for filters).
    #[serde(default)]
    pub labels: Vec<(String, String)>,
    /// Memory per pod on the node.
    #[serde(default)]
    pub pods: Vec<PodMemory>,
    /// Namespaces of pods on this node (for filters).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// The container runtime K3s gives pods without a runtimeClassName, when the node's
    /// `k3s.io/node-args` set one (`--default-runtime nvidia`).
    #[serde(default)]
    pub default_runtime: Option<String>,
    /// Pods that use the GPU without the scheduler counting them.
    #[serde(default)]
    pub gpu_users_outside: Vec<GpuUser>,
    /// Set when the node is down (Ready Unknown or False). Not read by the browser: the card
    /// shows the node's diagnosis, which says it all.
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub down: Option<NodeDown>,
}

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
    pub reason: String,
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
    pub diagnoses: Vec<String>,
    /// The scheduler, when not the default one (its messages are shown raw).
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Memory request, for the pending page.
    #[serde(default)]
    pub memory_request_bytes: Option<u64>,
}

/// How bad a diagnosis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    #[default]
    Info,
    /// Will hurt.
    Warning,
    /// Workloads are not running.
    Critical,
}

/// A diagnosis: a stable code, the object it concerns, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Diagnosis {
    /// Stable code (`insufficient-gpu`, …).
    pub code: String,
    /// Severity.
    pub severity: Severity,
    /// Kind of the object (`Pod`, `Node`, `ReplicaSet`, `Cluster`).
    pub kind: String,
    /// Namespace of the object.
    pub namespace: Option<String>,
    /// Name of the object.
    pub name: String,
    /// One sentence that says what is wrong and what to do.
    pub message: String,
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
    /// Diagnoses, most severe first.
    pub diagnoses: Vec<Diagnosis>,
    /// Totals.
    #[serde(default)]
    pub totals: Totals,
}

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
    pub suggestions: Vec<String>,
    /// Input error; when set, nothing else is meaningful.
    pub error: Option<FitError>,
}

/// What changed between two revisions: what the live stream sends after the first full view,
/// so that a change on one node costs one node's worth of bytes, not the whole cluster's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ViewDelta {
    /// The revision this applies to.
    pub base: u64,
    /// The revision it produces.
    pub revision: u64,
    /// As in [`ClusterView`].
    pub generated_at: String,
    /// Replaced whole.
    pub source: Source,
    /// Replaced whole.
    pub totals: Totals,
    /// The pending list, from the previous one.
    pub pending: Vec<Piece<PendingPod>>,
    /// The diagnoses, from the previous list.
    pub diagnoses: Vec<Piece<Diagnosis>>,
    /// Nodes added or changed.
    pub nodes_changed: Vec<Arc<NodeView>>,
    /// Nodes removed, by name.
    pub nodes_removed: Vec<String>,
}

impl ViewDelta {
    /// The delta from `old` to `new` (both with nodes sorted by name).
    pub fn between(old: &ClusterView, new: &ClusterView) -> Self {
        let mut changed = Vec::new();
        let mut removed = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < old.nodes.len() || j < new.nodes.len() {
            match (old.nodes.get(i), new.nodes.get(j)) {
                (Some(a), Some(b)) if a.name == b.name => {
                    if a != b {
                        changed.push(b.clone());
                    }
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.name < b.name => {
                    removed.push(a.name.clone());
                    i += 1;
                }
                (_, Some(b)) => {
                    changed.push(b.clone());
                    j += 1;
                }
                (Some(a), None) => {
                    removed.push(a.name.clone());
                    i += 1;
                }
                (None, None) => break,
            }
        }
        Self {
            base: old.revision,
            revision: new.revision,
            generated_at: new.generated_at.clone(),
            source: new.source.clone(),
            totals: new.totals.clone(),
            pending: Piece::diff(&old.pending, &new.pending, |p| format!("{}/{}", p.namespace, p.name)),
            diagnoses: Piece::diff(&old.diagnoses, &new.diagnoses, |d| {
                format!("{}/{}/{}/{}", d.code, d.kind, d.namespace.as_deref().unwrap_or(""), d.name)
            }),
            nodes_changed: changed,
            nodes_removed: removed,
        }
    }

    /// Applies to `view`; false (and `view` untouched) when `view` is not at `base`.
    pub fn apply(self, view: &mut ClusterView) -> bool {
        if view.revision != self.base {
            return false;
        }
        let (Some(pending), Some(diagnoses)) =
            (Piece::rebuild(&view.pending, self.pending), Piece::rebuild(&view.diagnoses, self.diagnoses))
        else {
            return false;
        };
        view.nodes.retain(|n| !self.nodes_removed.contains(&n.name));
        for n in self.nodes_changed {
            match view.nodes.binary_search_by(|x| x.name.cmp(&n.name)) {
                Ok(i) => view.nodes[i] = n,
                Err(i) => view.nodes.insert(i, n),
            }
        }
        view.revision = self.revision;
        view.generated_at = self.generated_at;
        view.source = self.source;
        view.totals = self.totals;
        view.pending = pending;
        view.diagnoses = diagnoses;
        true
    }
}

/// A fingerprint of a value, for keying rows: two rows with the same fingerprint are taken to
/// be the same (FNV-1a over the value's `Hash`; small enough for the browser bundle).
pub fn fingerprint<T: std::hash::Hash + ?Sized>(t: &T) -> u64 {
    struct Fnv(u64);
    impl std::hash::Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    t.hash(&mut h);
    std::hash::Hasher::finish(&h)
}

/// One piece of a list sent as a change to the previous list: a run of items the receiver
/// already has, or a new item. A list of a few hundred diagnoses that did not change travels
/// as one `{"Keep":[0,200]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece<T> {
    /// `len` items from position `from` of the previous list.
    Keep(u32, u32),
    /// An item the previous list does not have (as it is now).
    Put(T),
}

impl<T: Clone + PartialEq> Piece<T> {
    /// The pieces that turn `old` into `new`; `key` identifies an item across the two.
    pub fn diff(old: &[T], new: &[T], key: impl Fn(&T) -> String) -> Vec<Self> {
        let index: std::collections::HashMap<String, usize> =
            old.iter().enumerate().map(|(i, t)| (key(t), i)).collect();
        let mut out: Vec<Self> = Vec::new();
        for t in new {
            let at = index.get(&key(t)).copied().filter(|&i| old[i] == *t);
            match (at.and_then(|i| u32::try_from(i).ok()), out.last_mut()) {
                (Some(i), Some(Self::Keep(from, len))) if *from + *len == i => *len += 1,
                (Some(i), _) => out.push(Self::Keep(i, 1)),
                (None, _) => out.push(Self::Put(t.clone())),
            }
        }
        out
    }

    /// Builds the new list from the previous one; `None` when a piece points outside it.
    pub fn rebuild(old: &[T], pieces: Vec<Self>) -> Option<Vec<T>> {
        let mut out = Vec::with_capacity(old.len());
        for p in pieces {
            match p {
                Self::Keep(from, len) => {
                    let (from, len) = (from as usize, len as usize);
                    out.extend_from_slice(old.get(from..from.checked_add(len)?)?);
                }
                Self::Put(t) => out.push(t),
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, ready: bool) -> Arc<NodeView> {
        Arc::new(NodeView { name: name.into(), ready, ..NodeView::default() })
    }

    #[test]
    fn a_delta_turns_the_old_view_into_the_new_one() {
        let old = ClusterView {
            revision: 4,
            nodes: vec![node("a", true), node("b", true), node("d", true)],
            ..ClusterView::default()
        };
        let new = ClusterView {
            revision: 5,
            nodes: vec![node("a", true), node("b", false), node("c", true)],
            totals: Totals { nodes: 3, ..Totals::default() },
            ..ClusterView::default()
        };
        let d = ViewDelta::between(&old, &new);
        assert_eq!(d.nodes_changed.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), vec!["b", "c"]);
        assert_eq!(d.nodes_removed, vec!["d"]);
        let mut v = old.clone();
        assert!(d.clone().apply(&mut v));
        assert_eq!(v, new);
        assert!(!d.apply(&mut v), "a delta applies only to its base revision");
    }

    fn pod(name: &str, reason: &str) -> PendingPod {
        PendingPod {
            namespace: "ml".into(),
            name: name.into(),
            reasons: vec![ReasonCount { reason: reason.into(), nodes: Some(1) }],
            ..PendingPod::default()
        }
    }

    #[test]
    fn lists_travel_as_kept_runs_and_new_items() {
        let old = vec![pod("a", "x"), pod("b", "x"), pod("c", "x"), pod("d", "x")];
        // b changed, c removed, e added, order otherwise kept.
        let new = vec![pod("a", "x"), pod("b", "y"), pod("d", "x"), pod("e", "x")];
        let pieces = Piece::diff(&old, &new, |p| p.name.clone());
        assert_eq!(
            pieces,
            vec![Piece::Keep(0, 1), Piece::Put(pod("b", "y")), Piece::Keep(3, 1), Piece::Put(pod("e", "x"))]
        );
        assert_eq!(Piece::rebuild(&old, pieces), Some(new.clone()));
        let same = Piece::diff(&new, &new, |p| p.name.clone());
        assert_eq!(same, vec![Piece::Keep(0, 4)]);
        // A piece outside the receiver's list is refused, not a panic.
        assert_eq!(Piece::rebuild(&old, vec![Piece::<PendingPod>::Keep(3, 2)]), None);
        assert_eq!(Piece::rebuild(&old, vec![Piece::<PendingPod>::Keep(u32::MAX, u32::MAX)]), None);
    }

    #[test]
    fn a_delta_carries_list_changes_and_refuses_a_wrong_base_list() {
        let old = ClusterView { revision: 1, pending: vec![pod("a", "x"), pod("b", "x")], ..ClusterView::default() };
        let new = ClusterView { revision: 2, pending: vec![pod("b", "x"), pod("c", "x")], ..ClusterView::default() };
        let d = ViewDelta::between(&old, &new);
        let mut v = old.clone();
        assert!(d.clone().apply(&mut v));
        assert_eq!(v, new);
        let mut short = ClusterView { revision: 1, ..ClusterView::default() };
        assert!(!d.apply(&mut short), "a delta whose runs do not fit the receiver's list is refused");
        assert!(short.pending.is_empty());
    }
}
