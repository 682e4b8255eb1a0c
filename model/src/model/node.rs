//! One node as the views show it: its GPU resources with their holders and slots, its memory
//! (unified on Jetson), its conditions, and what is wrong with it.

use serde::{Deserialize, Serialize};

use super::{DeviceView, Diagnosis};

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
    /// What the bars are drawn against: allocatable, else capacity.
    #[serde(default)]
    pub board_bytes: u64,
    /// Use, requests and limits in thousandths of `board_bytes` (capped at 1000); use is null
    /// when unknown.
    #[serde(default)]
    pub used_permille: Option<u32>,
    /// See `used_permille`.
    #[serde(default)]
    pub requested_permille: u32,
    /// See `used_permille`.
    #[serde(default)]
    pub limits_permille: u32,
    /// How far limits exceed a unified-memory board (0 when they do not, and on other nodes):
    /// the one rule behind both the card's warning and `unified-memory-overcommit`.
    #[serde(default)]
    pub overcommit_bytes: u64,
    /// The board's RAM in use as its gpudash-agent read it (tegrastats on Jetson: everything
    /// the CPU and the GPU hold, system included); null without an agent.
    #[serde(default)]
    pub board_used_bytes: Option<u64>,
    /// `board_used_bytes` in thousandths of `board_bytes` (capped at 1000).
    #[serde(default)]
    pub board_used_permille: Option<u32>,
    /// The board's RAM free as its agent read it (tegrastats' total less its use): what a new
    /// model really has, beside what requests say; null without an agent. (Not read by the
    /// browser: only the server-rendered node page shows it.)
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub board_free_bytes: Option<u64>,
    /// The board's RAM by who holds it, where the agent reads GPU memory per process (nvmap on
    /// Jetson): null elsewhere. (Not read by the browser, as `board_free_bytes`.)
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub split: Option<BoardSplit>,
}

/// A unified-memory board's RAM by who holds it: the GPU memory of its pods' processes, the
/// pods' own (cgroup) memory, the rest in use (the system, and GPU memory outside pods), free.
/// The four add up to `total_bytes`; each is also given in thousandths of it for the bar.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct BoardSplit {
    /// RAM the kernel manages (tegrastats' total).
    pub total_bytes: u64,
    /// GPU memory held by the pods' processes (nvmap).
    pub gpu_pods_bytes: u64,
    /// The pods' working sets from metrics.k8s.io; null when metrics are not available.
    pub other_pods_bytes: Option<u64>,
    /// In use by everything else: the system, and GPU memory of processes outside any pod.
    pub system_bytes: u64,
    /// Of which GPU memory held outside any pod.
    pub gpu_outside_bytes: u64,
    /// Free.
    pub free_bytes: u64,
    /// `NvMapMemUsed`: all GPU memory nvmap holds on the board, when `/proc/meminfo` says.
    pub nvmap_used_bytes: Option<u64>,
    /// Thousandths of `total_bytes`: GPU memory of pods, pods' own, the rest in use, free.
    pub permille: [u32; 4],
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
    /// Devices a Dynamic Resource Allocation driver publishes (exact placement from claims).
    Dra,
    /// HAMi vGPU (Project-HAMi): each unit a vGPU with its own memory (and compute) share of
    /// one card, placed by HAMi's scheduler, which writes where into the pod's annotations.
    Vgpu,
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
    /// The workload it belongs to, `Kind/name` (`Deployment/detector`, `Job/warmup`,
    /// `StatefulSet/llm`; a ReplicaSet not made by a Deployment as itself), none for a bare pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// The pod is being deleted (Terminating): it still holds its units until it is gone.
    #[serde(default)]
    pub terminating: bool,
    /// Thousandths of one GPU it holds in all, where the sharing mode gives each pod a share of
    /// its own (HAMi vGPU: its cores %, else its memory over the card's); null where each unit
    /// is the resource's share. Not read by the browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub share_permille: Option<u32>,
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
    /// The units as the grid draws them: one row per physical GPU when placement is known,
    /// else one row; holders first (each for its count), then free, then out of service.
    #[serde(default)]
    pub slots: Vec<Vec<Slot>>,
    /// What each row of `slots` is, when the derivation knows (`GPU 0 · NVIDIA A100 80GB PCIe`
    /// for a DRA device); empty when rows are just numbered.
    #[serde(default)]
    pub rows: Vec<crate::i18n::Said>,
    /// The devices of a DRA driver on this node, each with its claims and pods (not read by the
    /// browser: the card draws `slots`; the node page shows them whole).
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub devices: Vec<DeviceView>,
    /// The MIG profile each unit is (`1g.5gb` for `nvidia.com/mig-1g.5gb`); none otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

/// A node's gpudash-agent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct AgentView {
    /// When its report was last had (RFC 3339); null when it never answered.
    pub seen_at: Option<String>,
    /// Not heard from for longer than three pulls: what it said last is shown, marked stale.
    pub stale: bool,
    /// Why the last pull failed (not read by the browser).
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub error: Option<String>,
    /// The board's GPU busy %, as the agent measured it, on a node that advertises no GPU
    /// resource to show it on (a Jetson without the device plugin): the GPU works while
    /// Kubernetes counts none. Null elsewhere (a GPU's busy % is on its device and row). Not
    /// read by the browser: a live page's first load has no room left for it (the JSON API and
    /// the node page's board memory carry it).
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub gpu_busy_percent: Option<u32>,
}

/// One unit of a GPU resource as drawn.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Slot {
    /// What it is.
    pub state: SlotState,
    /// Index into the resource's `holders` (held slots only).
    #[serde(default)]
    pub holder: Option<u32>,
    /// What the slot is, when the derivation names it (a MIG profile, a share of a device's
    /// memory, a claim that no pod uses).
    #[serde(default)]
    pub label: Option<crate::i18n::Said>,
}

/// What a slot is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SlotState {
    /// Held by a pod.
    Held,
    /// Held beyond allocatable (the device plugin shrank under running pods).
    Over,
    /// Held by a pod that is being deleted.
    Terminating,
    /// Free.
    #[default]
    Free,
    /// Out of service: the device plugin found the GPU unhealthy.
    Out,
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
    /// GPU memory its processes hold (nvmap on Jetson, by the node's agent); null when not read.
    /// (Not read by the browser: the node page is server-rendered.)
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub gpu_memory_bytes: Option<u64>,
    /// Its workload (as `Holder::workload`), for history's GPU-hours reports. Not sent: every
    /// pod of a large site would add to each client's first view; the holders carry theirs.
    #[serde(skip)]
    pub workload: Option<String>,
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
    /// Pods that use the GPU without the scheduler counting them (a card lists the first
    /// [`CARD_OUTSIDE`]).
    #[serde(default)]
    pub gpu_users_outside: Vec<GpuUser>,
    /// How many more than listed (a card's; the whole node lists them all). Not in the browser's
    /// build: the card's gpu-used-outside-scheduler diagnosis gives the count.
    #[cfg(not(feature = "hydrate"))]
    #[serde(default)]
    pub gpu_users_outside_more: u32,
    /// Set when the node is down (Ready Unknown or False). Not read by the browser: the card
    /// shows the node's diagnosis, which says it all.
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub down: Option<NodeDown>,
    /// Its gpudash-agent, when one runs on it.
    #[serde(default)]
    pub agent: Option<AgentView>,
    /// The diagnoses about this node, most severe first (what its card shows); the same
    /// `Arc`s as the view's list.
    #[serde(default)]
    pub problems: Vec<std::sync::Arc<Diagnosis>>,
}

impl NodeView {
    /// Whether the node passes the overview's filters: a namespace among its pods', a node
    /// label (`key=value`, or `key` for any value).
    pub fn matches(&self, ns: Option<&str>, label: Option<&str>) -> bool {
        let ns_ok = ns.is_none_or(|ns| self.namespaces.iter().any(|x| x == ns));
        let label_ok = label.is_none_or(|l| match l.split_once('=') {
            Some((k, v)) => self.labels.iter().any(|(lk, lv)| lk == k.trim() && lv == v.trim()),
            None => self.labels.iter().any(|(lk, _)| lk == l.trim()),
        });
        ns_ok && label_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AsCard, CARD_OUTSIDE};

    #[test]
    fn a_card_lists_the_first_pods_using_a_gpu_outside_the_scheduler_and_counts_the_rest() {
        let users: Vec<GpuUser> =
            (0..20).map(|i| GpuUser { namespace: "ml".into(), name: format!("p{i}"), ..GpuUser::default() }).collect();
        let n = NodeView { gpu_users_outside: users, ..NodeView::default() };
        let card = n.card();
        assert_eq!(
            (card.gpu_users_outside.len(), card.gpu_users_outside_more),
            (CARD_OUTSIDE, 20 - CARD_OUTSIDE as u32)
        );
        assert_eq!(card.gpu_users_outside[0].name, "p0");
        // Written as a card, the same; a card of a card does not count the rest twice.
        assert_eq!(serde_json::to_value(AsCard(&n)).ok(), serde_json::to_value(&card).ok());
        assert_eq!(card.card().gpu_users_outside_more, card.gpu_users_outside_more);
    }

    #[test]
    fn filters_match_namespaces_and_labels() {
        let n = NodeView {
            namespaces: vec!["vision".into()],
            labels: vec![("line".into(), "press-3".into())],
            ..NodeView::default()
        };
        assert!(n.matches(None, None));
        assert!(n.matches(Some("vision"), Some("line=press-3")));
        assert!(n.matches(None, Some("line")));
        assert!(!n.matches(Some("ml"), None));
        assert!(!n.matches(None, Some("line=press-4")));
    }
}
