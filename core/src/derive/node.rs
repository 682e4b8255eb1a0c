//! One node's GPU resources (time-slicing, MPS, MIG, renamed shared resources, other vendors)
//! and memory (unified on Jetson/Tegra boards).

use std::collections::BTreeMap;

use gpudash_model::model::{ConditionView, GpuResource, Holder, NodeDown, Sharing, Slot, SlotState};
use k8s_openapi::api::core::v1::Node;

use crate::pod::Pod;

use crate::quantity::GpuCount;

/// The node label or annotation that overrides unified-memory detection (`true`/`false`).
pub const UNIFIED_OVERRIDE: &str = "gpudash.dev/unified-memory";

/// The node annotation in which K3s records the agent's flags (a JSON list of strings).
pub const K3S_NODE_ARGS: &str = "k3s.io/node-args";

/// Whether a RuntimeClass or containerd handler name is one of NVIDIA's (`nvidia`, and the
/// family K3s and the GPU Operator add: `nvidia-cdi`, `nvidia-legacy`, `nvidia-experimental`).
pub fn is_nvidia_runtime(name: &str) -> bool {
    name == "nvidia" || name.starts_with("nvidia-")
}

/// The runtime K3s gives pods that name no RuntimeClass: `--default-runtime` in the node's
/// `k3s.io/node-args` (either `--default-runtime X` or `--default-runtime=X`).
pub fn default_runtime(node: &Node) -> Option<String> {
    let raw = node.metadata.annotations.as_ref()?.get(K3S_NODE_ARGS)?;
    let args: Vec<String> = serde_json::from_str(raw).ok()?;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix("--default-runtime=") {
            return Some(v.to_string()).filter(|v| !v.is_empty());
        }
        if a == "--default-runtime" {
            return it.next().cloned().filter(|v| !v.is_empty());
        }
    }
    None
}

/// The seconds the API server's DefaultTolerationSeconds admission gives every pod on an
/// unreachable or not-ready node before eviction.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// Why a node is down, and when the pods it holds will be evicted; `None` while Ready is True.
pub fn down(node: &Node, pods: &[&Pod]) -> Option<NodeDown> {
    let ready =
        node.status.as_ref().and_then(|s| s.conditions.as_ref()).and_then(|c| c.iter().find(|c| c.type_ == "Ready"))?;
    if ready.status == "True" {
        return None;
    }
    let taint_key =
        if ready.status == "Unknown" { "node.kubernetes.io/unreachable" } else { "node.kubernetes.io/not-ready" };
    let taint = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .and_then(|t| t.iter().find(|t| t.key == taint_key && t.effect == "NoExecute"));
    let since = ready.last_transition_time.as_ref().map(|t| t.0);
    // Eviction counts from when the NoExecute taint was added (else from the transition).
    let start = taint.and_then(|t| t.time_added.as_ref()).map(|t| t.0).or(since);
    let seconds = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let tolerations = p.spec.as_ref().and_then(|s| s.tolerations.as_ref());
            let matching = tolerations.into_iter().flatten().find(|t| {
                t.effect.as_deref().is_none_or(|e| e == "NoExecute")
                    && (t.key.as_deref() == Some(taint_key)
                        || (t.key.is_none() && t.operator.as_deref() == Some("Exists")))
            });
            match matching {
                // Tolerated for ever (DaemonSet pods): never evicted.
                Some(t) => t.toleration_seconds,
                // No toleration: the admission default (or at once, if it was switched off).
                None => Some(DEFAULT_TOLERATION_SECONDS),
            }
        })
        .min();
    let evict_at = match (start, seconds) {
        (Some(t), Some(s)) => t.checked_add(jiff::SignedDuration::from_secs(s.max(0))).ok().map(|t| super::ts(&t)),
        _ => None,
    };
    Some(NodeDown {
        status: ready.status.clone(),
        since: since.map(|t| super::ts(&t)),
        reason: ready.reason.clone(),
        evict_at,
    })
}

/// Whether an extended resource is an accelerator gpudash shows.
pub fn is_accelerator(name: &str) -> bool {
    if super::hami::is_companion(name) {
        // HAMi's vGPU memory and cores: amounts of a card `nvidia.com/gpu` counts, not GPUs.
        return false;
    }
    name.starts_with("nvidia.com/")
        || name.starts_with("amd.com/")
        || name.starts_with("gpu.intel.com/")
        || name.starts_with("habana.ai/")
        || name.starts_with("aws.amazon.com/neuron")
        || name.starts_with("google.com/tpu")
        || name.starts_with("xilinx.com/")
        || (name.contains('/') && name.to_ascii_lowercase().contains("gpu"))
}

/// Whether a resource is an NVIDIA GPU resource (whole, shared, or MIG slice).
pub fn is_nvidia_gpu(name: &str) -> bool {
    name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" || name.starts_with("nvidia.com/mig-")
}

pub(crate) fn labels(node: &Node) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    node.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

fn label<'a>(node: &'a Node, k: &str) -> Option<&'a str> {
    labels(node).get(k).map(String::as_str)
}

fn count_label(node: &Node, k: &str) -> Option<u64> {
    label(node, k).and_then(|v| v.trim().parse::<u64>().ok())
}

/// `status.capacity` and `status.allocatable` of a resource, in whole units.
pub fn amounts(node: &Node, resource: &str) -> (u64, u64) {
    let get = |m: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
        m.and_then(|m| m.get(resource)).and_then(|q| GpuCount::parse(&q.0).ok()).map_or(0, |c| c.0)
    };
    let st = node.status.as_ref();
    (get(st.and_then(|s| s.capacity.as_ref())), get(st.and_then(|s| s.allocatable.as_ref())))
}

/// Every accelerator resource the node advertises, in name order.
pub fn accelerator_resources(node: &Node) -> Vec<String> {
    let st = node.status.as_ref();
    let mut names: Vec<String> = st
        .into_iter()
        .flat_map(|s| s.capacity.iter().flatten().chain(s.allocatable.iter().flatten()))
        .map(|(k, _)| k.clone())
        .filter(|k| is_accelerator(k))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn replicas(node: &Node) -> u64 {
    // 0 and 1 both mean "not shared"; never "0 GPUs".
    count_label(node, "nvidia.com/gpu.replicas").filter(|r| *r > 1).unwrap_or(1)
}

/// Whether the node shares its GPUs through MPS (GPU feature discovery's
/// `nvidia.com/gpu.sharing-strategy=mps`, from the device plugin's `sharing.mps` config).
pub fn is_mps(node: &Node) -> bool {
    strategy(node) == Some(Sharing::Mps)
}

fn strategy(node: &Node) -> Option<Sharing> {
    match label(node, "nvidia.com/gpu.sharing-strategy")? {
        "time-slicing" => Some(Sharing::TimeSlicing),
        "mps" => Some(Sharing::Mps),
        "none" => Some(Sharing::None),
        _ => None,
    }
}

/// Describes one GPU resource of a node; `allocated` and `holders` come from the pods.
pub fn gpu_resource(node: &Node, resource: &str, holders: Vec<Holder>) -> GpuResource {
    let (capacity, allocatable) = amounts(node, resource);
    let allocated = holders.iter().map(|h| h.count).sum();
    let product = label(node, "nvidia.com/gpu.product").map(str::to_string);
    let gpu_count = count_label(node, "nvidia.com/gpu.count");
    let mig_single = label(node, "nvidia.com/mig.strategy") == Some("single")
        && product.as_deref().is_some_and(|p| p.contains("-MIG-"));
    let (sharing, physical, replicas_per_gpu, product) = if let Some(profile) = resource.strip_prefix("nvidia.com/mig-")
    {
        let p = label(node, &format!("nvidia.com/mig-{profile}.product")).map(str::to_string).or(product);
        (Sharing::Mig, None, 1, p)
    } else if resource == "nvidia.com/gpu" && mig_single {
        (Sharing::Mig, gpu_count, 1, product)
    } else if (resource == "nvidia.com/gpu" || resource == "nvidia.com/gpu.shared")
        && gpu_count.is_none()
        && label(node, "nvidia.com/gpu.replicas").is_none()
        && strategy(node).is_none()
        && is_tegra(node)
    {
        // A Jetson without GPU feature discovery (the device plugin's chart installs none
        // unless asked): the board has exactly one integrated GPU, so N units are N
        // time-slicing replicas of it.
        let units = capacity.max(allocatable);
        if units > 1 {
            (Sharing::TimeSlicing, Some(1), units, product)
        } else {
            (Sharing::None, Some(1), 1, product)
        }
    } else if resource == "nvidia.com/gpu" || resource == "nvidia.com/gpu.shared" {
        let (sharing, physical, reps) = plain_gpu_sharing(node, resource, capacity, gpu_count, product.as_deref());
        (sharing, physical, reps, product)
    } else {
        (Sharing::None, None, 1, None)
    };
    let placement_known = match sharing {
        Sharing::Mig | Sharing::Dra => true,
        Sharing::None => physical.is_some() || !is_nvidia_gpu(resource),
        Sharing::TimeSlicing | Sharing::Mps => physical == Some(1),
        // Set where HAMi's annotations are read (`hami::place`).
        Sharing::Vgpu => false,
    };
    let mut g = GpuResource {
        resource: resource.to_string(),
        product,
        physical_gpus: physical,
        replicas_per_gpu,
        sharing,
        capacity,
        allocatable,
        allocated,
        holders,
        placement_known,
        out_of_service: capacity.saturating_sub(allocatable),
        slots: Vec::new(),
        rows: Vec::new(),
        devices: Vec::new(),
        profile: mig_profile(resource),
    };
    g.slots = slots(&g);
    g
}

/// How `nvidia.com/gpu` (or `.shared`) units are shared on a node with feature-discovery labels
/// or none: the sharing, the physical GPU count where it is known, and the replicas per GPU.
fn plain_gpu_sharing(
    node: &Node,
    resource: &str,
    capacity: u64,
    gpu_count: Option<u64>,
    product: Option<&str>,
) -> (Sharing, Option<u64>, u64) {
    let reps = replicas(node);
    let shared_signal =
        reps > 1 || resource == "nvidia.com/gpu.shared" || product.is_some_and(|p| p.ends_with("-SHARED"));
    let sharing = match strategy(node) {
        Some(Sharing::None) if shared_signal && reps > 1 => Sharing::TimeSlicing,
        Some(s) => s,
        None if shared_signal => Sharing::TimeSlicing,
        None => Sharing::None,
    };
    if sharing == Sharing::None {
        // Not shared: each unit is a whole GPU (with MIG in mixed mode `nvidia.com/gpu.count`
        // also counts the partitioned GPUs, so the capacity is the count here). Without any
        // feature-discovery label the units may as well be time-slicing replicas: the
        // physical count is unknown, not `capacity`.
        let gfd = gpu_count.is_some()
            || product.is_some()
            || label(node, "nvidia.com/gpu.replicas").is_some()
            || strategy(node).is_some();
        (Sharing::None, gfd.then_some(capacity), 1)
    } else {
        let physical = gpu_count.or_else(|| (reps > 1).then(|| capacity.div_ceil(reps)));
        (sharing, physical, reps)
    }
}

/// The MIG profile a resource's units are (`1g.5gb` for `nvidia.com/mig-1g.5gb`).
pub fn mig_profile(resource: &str) -> Option<String> {
    resource.strip_prefix("nvidia.com/mig-").filter(|p| !p.is_empty()).map(str::to_string)
}

/// The most slots drawn for one resource (a node advertising thousands of units is drawn by
/// its caption; the grid would be unreadable anyway).
const MAX_SLOTS: usize = 4096;

/// Lays out a resource's units: holders first (each for its count; beyond allocatable they are
/// `over`, the device plugin having shrunk under running pods), then free units up to
/// allocatable, then units out of service up to capacity. One row per physical GPU where the
/// replicas' placement is known, else one row.
pub fn slots(g: &GpuResource) -> Vec<Vec<Slot>> {
    let alloc = usize::try_from(g.allocatable).unwrap_or(MAX_SLOTS).min(MAX_SLOTS);
    let total = usize::try_from(g.capacity).unwrap_or(MAX_SLOTS).min(MAX_SLOTS);
    let mut flat: Vec<Slot> = Vec::new();
    for (i, h) in g.holders.iter().enumerate() {
        for _ in 0..h.count {
            if flat.len() >= MAX_SLOTS {
                break;
            }
            let state = if flat.len() >= alloc {
                SlotState::Over
            } else if h.terminating {
                SlotState::Terminating
            } else {
                SlotState::Held
            };
            flat.push(Slot { state, holder: u32::try_from(i).ok(), label: None });
        }
    }
    while flat.len() < alloc {
        flat.push(Slot { state: SlotState::Free, holder: None, label: None });
    }
    while flat.len() < total {
        flat.push(Slot { state: SlotState::Out, holder: None, label: None });
    }
    let per_gpu = usize::try_from(g.replicas_per_gpu.max(1)).unwrap_or(1);
    let by_gpu = g.placement_known
        && g.physical_gpus.is_some_and(|p| p > 0)
        && matches!(g.sharing, Sharing::TimeSlicing | Sharing::Mps);
    if by_gpu && !flat.is_empty() {
        flat.chunks(per_gpu).map(<[Slot]>::to_vec).collect()
    } else {
        vec![flat]
    }
}

/// Signals that the node carries an NVIDIA GPU, whether or not it advertises one.
pub fn looks_like_gpu_node(node: &Node) -> bool {
    let l = labels(node);
    l.get("nvidia.com/gpu.present").is_some_and(|v| v == "true")
        || l.contains_key("nvidia.com/gpu.count")
        || l.get("nvidia.com/gpu.deploy.device-plugin").is_some_and(|v| v == "true")
        || is_tegra(node)
}

/// Whether the node is a Jetson/Tegra board (one integrated GPU, unified memory).
pub fn is_tegra(node: &Node) -> bool {
    let info = node.status.as_ref().and_then(|s| s.node_info.as_ref());
    let arm64 = info.is_some_and(|i| i.architecture == "arm64") || label(node, "kubernetes.io/arch") == Some("arm64");
    let tegra_kernel = info.is_some_and(|i| i.kernel_version.contains("tegra"));
    let dt_label = labels(node).iter().any(|(k, v)| {
        ["nvidia-tegra", "nvidia-jetson"].iter().any(|w| contains_ignore_case(k, w) || contains_ignore_case(v, w))
    });
    let product = label(node, "nvidia.com/gpu.product")
        .is_some_and(|p| ["orin", "xavier", "jetson", "tegra", "thor"].iter().any(|w| contains_ignore_case(p, w)));
    (arm64 && tegra_kernel) || dt_label || product
}

/// Whether the node's GPU is a unified-memory superchip that is not a Tegra: the DGX Spark's
/// GB10 (NVML answers its memory "Not Supported": it has none of its own; the board's 128 GB
/// is the GPU's). Grace Hopper and Grace Blackwell servers (GH200, GB200) have HBM of their own
/// and are not.
pub fn is_unified_superchip(node: &Node) -> bool {
    label(node, "nvidia.com/gpu.product").is_some_and(|p| {
        let p = p.strip_prefix("NVIDIA-").or_else(|| p.strip_prefix("NVIDIA ")).unwrap_or(p);
        p.eq_ignore_ascii_case("GB10") || p.to_ascii_uppercase().starts_with("GB10-")
    })
}

/// Whether `text` holds `word` (lower case ASCII) in any case, without a lower-cased copy
/// (every node's labels are read on every revision).
fn contains_ignore_case(text: &str, word: &str) -> bool {
    text.as_bytes().windows(word.len()).any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
}

/// Whether the node's memory is shared by CPU and GPU: the override label or annotation, then
/// the operator's selector, then Jetson/Tegra signals and the DGX Spark's GB10.
pub fn unified_memory(node: &Node, selector_match: bool) -> bool {
    let ann = node.metadata.annotations.as_ref().and_then(|a| a.get(UNIFIED_OVERRIDE));
    match label(node, UNIFIED_OVERRIDE).or(ann.map(String::as_str)) {
        Some("true") => true,
        Some("false") => false,
        _ => selector_match || is_tegra(node) || is_unified_superchip(node),
    }
}

/// Ready, and the node's conditions as shown.
pub fn conditions(node: &Node) -> (bool, Vec<ConditionView>) {
    let mut ready = false;
    let mut out = Vec::new();
    for c in node.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
        let bad = if c.type_ == "Ready" {
            ready = c.status == "True";
            !ready
        } else {
            c.status == "True"
        };
        out.push(ConditionView {
            type_: c.type_.clone(),
            status: c.status.clone(),
            bad,
            reason: c.reason.clone(),
            message: c.message.clone(),
        });
    }
    (ready, out)
}

/// Labels that matter to GPU scheduling, in a stable order.
pub fn gpu_labels(node: &Node) -> Vec<(String, String)> {
    labels(node)
        .iter()
        .filter(|(k, _)| {
            k.starts_with("nvidia.com/gpu.")
                || k.starts_with("nvidia.com/mig")
                || k.as_str() == UNIFIED_OVERRIDE
                || k.as_str() == "kubernetes.io/arch"
                || k.as_str() == "node.kubernetes.io/instance-type"
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: &str) -> Node {
        serde_yaml::from_str(yaml).expect("fixture")
    }

    fn res(n: &Node, r: &str) -> GpuResource {
        gpu_resource(n, r, Vec::new())
    }

    #[test]
    fn time_sliced_jetson_reports_replicas_and_one_physical_gpu() {
        let n = node(
            r#"
apiVersion: v1
kind: Node
metadata: {name: orin, labels: {nvidia.com/gpu.count: "1", nvidia.com/gpu.replicas: "4", nvidia.com/gpu.sharing-strategy: time-slicing, nvidia.com/gpu.product: NVIDIA-Jetson-AGX-Orin-SHARED, kubernetes.io/arch: arm64}}
status:
  capacity: {nvidia.com/gpu: "4", memory: 64335836Ki}
  allocatable: {nvidia.com/gpu: "4"}
  nodeInfo: {architecture: arm64, kernelVersion: 5.15.148-tegra, bootID: "", containerRuntimeVersion: "", kubeProxyVersion: "", kubeletVersion: "", machineID: "", operatingSystem: linux, osImage: "", systemUUID: ""}
"#,
        );
        let g = res(&n, "nvidia.com/gpu");
        assert_eq!((g.sharing, g.physical_gpus, g.replicas_per_gpu, g.capacity), (Sharing::TimeSlicing, Some(1), 4, 4));
        assert!(g.placement_known);
        assert!(unified_memory(&n, false));
    }

    #[test]
    fn tegra_signals_are_read_in_any_case_and_only_where_they_are() {
        let with =
            |labels: &str| node(&format!("apiVersion: v1\nkind: Node\nmetadata: {{name: a, labels: {{{labels}}}}}\n"));
        // The device-tree model as GPU feature discovery or a site labels it, in the case it comes in.
        assert!(is_tegra(&with("example.com/model: NVIDIA-Jetson-Orin-Nano")));
        assert!(is_tegra(&with("NVIDIA-TEGRA/board: p3768")));
        assert!(is_tegra(&with("nvidia.com/gpu.product: Orin")));
        assert!(is_tegra(&with("nvidia.com/gpu.product: NVIDIA-AGX-XAVIER")));
        assert!(!is_tegra(&with("nvidia.com/gpu.product: Tesla-T4, example.com/model: nvidia-jets")));
        assert!(!is_tegra(&with("a: b")));
        assert!(!contains_ignore_case("", "tegra") && !contains_ignore_case("teg", "tegra"));
    }

    #[test]
    fn slots_put_holders_first_mark_units_held_beyond_allocatable_and_units_out_of_service() {
        let n = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.count: \"2\"}}\nstatus: {capacity: {nvidia.com/gpu: \
            \"3\"}, allocatable: {nvidia.com/gpu: \"1\"}}\n");
        let h = |name: &str, count: u64, terminating: bool| Holder {
            name: name.into(),
            count,
            terminating,
            ..Holder::default()
        };
        let g = gpu_resource(&n, "nvidia.com/gpu", vec![h("a", 1, true), h("b", 1, false)]);
        let states: Vec<(SlotState, Option<u32>)> = g.slots.concat().iter().map(|s| (s.state, s.holder)).collect();
        assert_eq!(states, vec![(SlotState::Terminating, Some(0)), (SlotState::Over, Some(1)), (SlotState::Out, None)]);
        let free = gpu_resource(&n, "nvidia.com/gpu", Vec::new());
        assert_eq!(
            free.slots.concat().iter().map(|s| s.state).collect::<Vec<_>>(),
            vec![SlotState::Free, SlotState::Out, SlotState::Out]
        );
    }

    #[test]
    fn time_sliced_replicas_are_drawn_per_gpu_only_where_placement_is_known() {
        let one = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.count: \"1\", nvidia.com/gpu.replicas: \
            \"4\"}}\nstatus: {capacity: {nvidia.com/gpu: \"4\"}, allocatable: {nvidia.com/gpu: \"4\"}}\n");
        assert_eq!(res(&one, "nvidia.com/gpu").slots.iter().map(Vec::len).collect::<Vec<_>>(), vec![4]);
        let two = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.count: \"2\", nvidia.com/gpu.replicas: \
            \"2\"}}\nstatus: {capacity: {nvidia.com/gpu: \"4\"}, allocatable: {nvidia.com/gpu: \"4\"}}\n");
        let g = res(&two, "nvidia.com/gpu");
        assert!(!g.placement_known);
        assert_eq!(g.slots.len(), 1, "replicas of two GPUs, placement unknown: one row");
    }

    #[test]
    fn replicas_zero_or_one_mean_not_shared_never_zero_gpus() {
        for r in ["0", "1"] {
            let n = node(&format!("apiVersion: v1\nkind: Node\nmetadata: {{name: a, labels: {{nvidia.com/gpu.count: \"2\", nvidia.com/gpu.replicas: \
                \"{r}\"}}}}\nstatus: {{capacity: {{nvidia.com/gpu: \"2\"}}, allocatable: {{nvidia.com/gpu: \"2\"}}}}\n"));
            let g = res(&n, "nvidia.com/gpu");
            assert_eq!((g.sharing, g.physical_gpus, g.replicas_per_gpu), (Sharing::None, Some(2), 1), "replicas {r}");
        }
    }

    #[test]
    fn sharing_is_inferred_without_the_strategy_label() {
        let by_replicas = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.count: \"2\", nvidia.com/gpu.replicas: \
            \"3\"}}\nstatus: {capacity: {nvidia.com/gpu: \"6\"}}\n");
        let g = res(&by_replicas, "nvidia.com/gpu");
        assert_eq!((g.sharing, g.physical_gpus, g.placement_known), (Sharing::TimeSlicing, Some(2), false));
        let renamed = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.count: \"1\", nvidia.com/gpu.replicas: \"4\", \
            nvidia.com/gpu.product: Tesla-T4-SHARED}}\nstatus: {capacity: {nvidia.com/gpu: \"0\", nvidia.com/gpu.shared: \"4\"}}\n");
        assert_eq!(res(&renamed, "nvidia.com/gpu.shared").sharing, Sharing::TimeSlicing);
        assert_eq!(res(&renamed, "nvidia.com/gpu").capacity, 0);
        let mps = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.replicas: \"2\", nvidia.com/gpu.sharing-strategy: \
            mps}}\nstatus: {capacity: {nvidia.com/gpu: \"2\"}}\n");
        assert_eq!(res(&mps, "nvidia.com/gpu").sharing, Sharing::Mps);
    }

    #[test]
    fn mig_slices_are_mig_in_both_strategies() {
        let mixed = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/mig.strategy: mixed, nvidia.com/gpu.product: \
            NVIDIA-A100-PCIE-40GB}}\nstatus: {capacity: {nvidia.com/gpu: \"1\", nvidia.com/mig-1g.5gb: \"7\"}}\n");
        assert_eq!(accelerator_resources(&mixed), vec!["nvidia.com/gpu", "nvidia.com/mig-1g.5gb"]);
        assert_eq!(res(&mixed, "nvidia.com/mig-1g.5gb").sharing, Sharing::Mig);
        assert_eq!(res(&mixed, "nvidia.com/gpu").sharing, Sharing::None);
        let single = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/mig.strategy: single, nvidia.com/gpu.count: \"1\", \
            nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb}}\nstatus: {capacity: {nvidia.com/gpu: \"7\"}}\n");
        let g = res(&single, "nvidia.com/gpu");
        assert_eq!((g.sharing, g.capacity), (Sharing::Mig, 7));
    }

    #[test]
    fn whole_gpus_count_the_capacity_even_when_mixed_mig_counts_more() {
        let mixed = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/mig.strategy: mixed, nvidia.com/gpu.count: \"2\", \
            nvidia.com/gpu.product: NVIDIA-A100-PCIE-40GB}}\nstatus: {capacity: {nvidia.com/gpu: \"1\", nvidia.com/mig-1g.5gb: \"7\"}}\n");
        assert_eq!(res(&mixed, "nvidia.com/gpu").physical_gpus, Some(1));
    }

    #[test]
    fn other_vendors_are_listed_generically() {
        let n = node("apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {amd.com/gpu: \"2\", gpu.intel.com/i915: \"1\", \
            hugepages-2Mi: \"0\", cpu: \"4\", example.com/dongle: \"1\"}}\n");
        assert_eq!(accelerator_resources(&n), vec!["amd.com/gpu", "gpu.intel.com/i915"]);
        assert_eq!(res(&n, "amd.com/gpu").physical_gpus, None);
    }

    #[test]
    fn unified_memory_can_be_forced_either_way() {
        let off = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {nvidia.com/gpu.product: Orin, gpudash.dev/unified-memory: \"false\"}}\n");
        assert!(!unified_memory(&off, true));
        let on = node(
            "apiVersion: v1\nkind: Node\nmetadata: {name: a, annotations: {gpudash.dev/unified-memory: \"true\"}}\n",
        );
        assert!(unified_memory(&on, false));
        let plain = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {kubernetes.io/arch: arm64}}\n");
        assert!(!unified_memory(&plain, false));
        assert!(unified_memory(&plain, true));
        let dt = node("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {feature.node.kubernetes.io/system-device_tree.compatible: \
            nvidia-jetson-orin}}\n");
        assert!(unified_memory(&dt, false));
    }
}
