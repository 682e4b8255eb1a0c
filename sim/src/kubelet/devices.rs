//! The devices a simulated node's NVIDIA device plugin advertises, named as the plugin names
//! them, and the kubelet's hand-out of them to containers — remembered, as the kubelet's
//! checkpoint remembers them, so a pod keeps its replicas for as long as it lives.
//!
//! IDs: a GPU is `GPU-<uuid>` (a Jetson's integrated GPU `tegra`), a time-sliced replica
//! `<GPU>::<n>`, a MIG device `MIG-<uuid>`. UUIDs are made from the node's name, so every run
//! of a scenario gives the same ones. With time-slicing, a new container gets replicas of the
//! GPU with the fewest held (the plugin's spread), lowest replica first.

use std::collections::BTreeMap;

use serde_json::Value;

/// One resource's devices on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertised {
    /// `nvidia.com/gpu`, …
    pub resource: String,
    /// Every device ID, in order (GPU 0's replicas first).
    pub ids: Vec<String>,
    /// How many of them are healthy (the first `healthy`; the rest were taken out of service).
    pub healthy: usize,
}

/// FNV-1a, then a 64-bit finaliser, so that names differing in one character share no digits.
pub(crate) fn fnv(s: &str) -> u64 {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    let h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A UUID-shaped name made from `seed`.
fn uuid(seed: &str) -> String {
    let (a, b) = (fnv(seed), fnv(&format!("{seed}#")));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

fn count(v: &Value) -> usize {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(0),
        _ => 0,
    }
}

/// Whether the node is a Jetson board (the plugin names its GPU `tegra`).
pub(super) fn jetson(node: &Value) -> bool {
    let kernel = node.pointer("/status/nodeInfo/kernelVersion").and_then(Value::as_str).unwrap_or("");
    let product = node.pointer("/metadata/labels/nvidia.com~1gpu.product").and_then(Value::as_str).unwrap_or("");
    kernel.contains("tegra") || product.contains("Jetson")
}

/// What the device plugin advertises on `node` (from its capacity, allocatable and labels).
pub fn advertised(node: &Value) -> Vec<Advertised> {
    let name = node.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
    let label = |k: &str| node.pointer(&format!("/metadata/labels/{}", k.replace('/', "~1"))).map(count);
    let empty = serde_json::Map::new();
    let capacity = node.pointer("/status/capacity").and_then(Value::as_object).unwrap_or(&empty);
    let allocatable = node.pointer("/status/allocatable").and_then(Value::as_object);
    let mut out = Vec::new();
    for (resource, q) in capacity.iter().filter(|(r, _)| r.starts_with("nvidia.com/")) {
        let cap = count(q);
        let healthy = allocatable.and_then(|a| a.get(resource)).map_or(cap, count).min(cap);
        let ids: Vec<String> = if let Some(profile) = resource.strip_prefix("nvidia.com/mig-") {
            (0..cap).map(|i| format!("MIG-{}", uuid(&format!("{name}/{profile}/{i}")))).collect()
        } else {
            let gpus = if jetson(node) { 1 } else { label("nvidia.com/gpu.count").filter(|&n| n > 0).unwrap_or(cap) };
            let replicas = (cap / gpus.max(1)).max(1);
            let base = |g: usize| {
                if jetson(node) {
                    "tegra".to_string()
                } else {
                    format!("GPU-{}", uuid(&format!("{name}/{g}")))
                }
            };
            (0..gpus)
                .flat_map(|g| (0..replicas).map(move |r| (g, r)))
                .take(cap)
                .map(|(g, r)| if replicas > 1 { format!("{}::{r}", base(g)) } else { base(g) })
                .collect()
        };
        out.push(Advertised { resource: resource.clone(), ids, healthy });
    }
    out
}

/// The physical device a replica ID belongs to.
fn physical(id: &str) -> &str {
    id.split_once("::").map_or(id, |(p, _)| p)
}

/// A container, by pod and container name.
pub type ContainerKey = (String, String, String);

/// A container's name and, per resource, the device IDs it holds.
pub type ContainerHeld = (String, Vec<(String, Vec<String>)>);

/// What the kubelet handed out on one node: per container, per resource, the IDs.
#[derive(Debug, Default, Clone)]
pub struct Handed {
    held: BTreeMap<ContainerKey, Vec<(String, Vec<String>)>>,
}

/// The extended-resource limits of each container of a pod bound to `node` and still running.
fn wants(pod: &Value, node: &str) -> Vec<(String, Vec<(String, usize)>)> {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("");
    if pod.pointer("/spec/nodeName").and_then(Value::as_str) != Some(node) || matches!(phase, "Succeeded" | "Failed") {
        return Vec::new();
    }
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array).cloned().unwrap_or_default();
    containers
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap_or("").to_string();
            let limits = c.pointer("/resources/limits").and_then(Value::as_object);
            let nvidia = limits.into_iter().flatten().filter(|(r, _)| r.starts_with("nvidia.com/"));
            (name, nvidia.map(|(r, q)| (r.clone(), count(q))).filter(|(_, n)| *n > 0).collect())
        })
        .collect()
}

impl Handed {
    /// Brings the hand-out up to date with the pods: containers gone give their devices back,
    /// new ones get free devices (oldest pod first).
    pub fn update(&mut self, node: &str, devices: &[Advertised], pods: &[&Value]) {
        let mut pods: Vec<&Value> = pods.to_vec();
        let created =
            |p: &Value| p.pointer("/metadata/creationTimestamp").and_then(Value::as_str).unwrap_or("").to_string();
        pods.sort_by_key(|p| (created(p), p["metadata"]["namespace"].to_string(), p["metadata"]["name"].to_string()));
        let mut wanted: Vec<(ContainerKey, Vec<(String, usize)>)> = Vec::new();
        for p in pods {
            let ns = p.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("").to_string();
            let name = p.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string();
            for (c, w) in wants(p, node).into_iter().filter(|(_, w)| !w.is_empty()) {
                wanted.push(((ns.clone(), name.clone(), c), w));
            }
        }
        self.held.retain(|k, _| wanted.iter().any(|(w, _)| w == k));
        for (key, want) in wanted {
            if self.held.contains_key(&key) {
                continue;
            }
            let mut got = Vec::new();
            for (resource, n) in want {
                let ids = self.pick(devices, &resource, n);
                got.push((resource, ids));
            }
            self.held.insert(key, got);
        }
    }

    fn pick(&self, devices: &[Advertised], resource: &str, n: usize) -> Vec<String> {
        let Some(adv) = devices.iter().find(|d| d.resource == resource) else { return Vec::new() };
        let taken: Vec<&String> =
            self.held.values().flatten().filter(|(r, _)| r == resource).flat_map(|(_, ids)| ids).collect();
        let mut picked: Vec<String> = Vec::new();
        for _ in 0..n {
            let held_on = |gpu: &str| {
                taken
                    .iter()
                    .map(|s| s.as_str())
                    .chain(picked.iter().map(String::as_str))
                    .filter(|t| physical(t) == gpu)
                    .count()
            };
            let free = adv.ids[..adv.healthy].iter().filter(|id| !taken.contains(id) && !picked.contains(id));
            // The GPU with the fewest replicas held, then the lowest replica on it.
            let Some(next) = free.min_by_key(|id| held_on(physical(id))) else { break };
            picked.push(next.clone());
        }
        picked
    }

    /// Per pod (namespace, name), per container, the devices held.
    pub fn by_pod(&self) -> BTreeMap<(String, String), Vec<ContainerHeld>> {
        let mut out: BTreeMap<(String, String), Vec<_>> = BTreeMap::new();
        for ((ns, pod, c), held) in &self.held {
            out.entry((ns.clone(), pod.clone())).or_default().push((c.clone(), held.clone()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(name: &str, cap: u64, alloc: u64, count: Option<&str>, kernel: &str) -> Value {
        let mut labels = json!({});
        if let Some(c) = count {
            labels["nvidia.com/gpu.count"] = json!(c);
        }
        json!({"metadata": {"name": name, "labels": labels},
               "status": {"capacity": {"nvidia.com/gpu": cap.to_string(), "cpu": "8"},
                          "allocatable": {"nvidia.com/gpu": alloc.to_string()},
                          "nodeInfo": {"kernelVersion": kernel}}})
    }

    fn pod(name: &str, node: &str, created: &str, gpus: u64) -> Value {
        json!({"metadata": {"namespace": "ml", "name": name, "creationTimestamp": created},
               "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": gpus.to_string()}}}]},
               "status": {"phase": "Running"}})
    }

    #[test]
    fn time_sliced_replicas_spread_over_gpus_and_stay_put() {
        let n = node("gpu-a", 8, 8, Some("2"), "6.1.0");
        let adv = advertised(&n);
        assert_eq!(adv[0].ids.len(), 8);
        assert!(adv[0].ids[0].starts_with("GPU-") && adv[0].ids[0].ends_with("::0"), "{:?}", adv[0].ids);
        assert_ne!(physical(&adv[0].ids[0]), physical(&adv[0].ids[4]));
        let (a, b, c) = (
            pod("a", "gpu-a", "2026-01-01T00:00:00Z", 1),
            pod("b", "gpu-a", "2026-01-01T00:00:01Z", 1),
            pod("c", "gpu-a", "2026-01-01T00:00:02Z", 2),
        );
        let mut h = Handed::default();
        h.update("gpu-a", &adv, &[&c, &a, &b]);
        let by = h.by_pod();
        let ids = |p: &str| by[&("ml".to_string(), p.to_string())][0].1[0].1.clone();
        assert_eq!(ids("a"), vec![adv[0].ids[0].clone()]);
        assert_eq!(ids("b"), vec![adv[0].ids[4].clone()], "the second pod goes to the other GPU");
        assert_eq!(ids("c").len(), 2);
        // a leaves; b keeps its replica.
        h.update("gpu-a", &adv, &[&b, &c]);
        assert_eq!(h.by_pod()[&("ml".to_string(), "b".to_string())][0].1[0].1, vec![adv[0].ids[4].clone()]);
        assert_eq!(h.by_pod().len(), 2);
    }

    #[test]
    fn a_jetson_is_tegra_and_out_of_service_units_are_not_handed_out() {
        let n = node("orin", 4, 2, None, "5.15.148-tegra");
        let adv = advertised(&n);
        assert_eq!(adv[0].ids, ["tegra::0", "tegra::1", "tegra::2", "tegra::3"]);
        assert_eq!(adv[0].healthy, 2);
        let pods: Vec<Value> =
            (0..3).map(|i| pod(&format!("p{i}"), "orin", &format!("2026-01-01T00:00:0{i}Z"), 1)).collect();
        let mut h = Handed::default();
        h.update("orin", &adv, &pods.iter().collect::<Vec<_>>());
        let held: usize =
            h.by_pod().values().flat_map(|c| c.iter().flat_map(|(_, r)| r.iter().map(|(_, ids)| ids.len()))).sum();
        assert_eq!(held, 2, "only the healthy replicas are handed out");
    }
}
