//! Dynamic Resource Allocation in the view: each GPU driver's devices on a node (from the
//! ResourceSlices of each pool's newest generation), the claims allocated each device, and the
//! pods those claims are reserved for; the claims of pending pods. Pure: objects in, view out.

use std::sync::Arc;

use gpudash_model::model::PendingClaim;

use super::Map;
use crate::dra::{DeviceClass, ResourceClaim, ResourceSlice};
use crate::pod::Pod;

/// Whether a driver publishes GPUs (or another accelerator) rather than, say, NICs or the
/// IMEX channels of `compute-domain.nvidia.com`.
pub fn is_gpu_driver(driver: &str) -> bool {
    let d = driver.to_ascii_lowercase();
    !d.starts_with("compute-domain") && (d.contains("gpu") || d.contains("tpu") || d.contains("npu"))
}

/// Whether a DeviceClass hands out GPUs: named after a GPU driver or selecting one.
pub fn is_gpu_class(c: &DeviceClass) -> bool {
    is_gpu_driver(c.name())
        || c.spec.selectors.iter().filter_map(|s| s.cel.as_ref()).any(|e| {
            e.expression.split("device.driver").skip(1).any(|rest| {
                let lit = rest.split(['\'', '"']).nth(1).unwrap_or("");
                is_gpu_driver(lit)
            })
        })
}

/// The DRA objects that concern one node: its slices (newest pool generation only) and the
/// claims allocated any of their devices, as `Arc`s so that the node memo can compare them by
/// address.
#[derive(Debug, Default, Clone)]
pub struct NodeDra {
    /// Slices on the node.
    pub slices: Vec<Arc<ResourceSlice>>,
    /// Claims allocated a device of those slices.
    pub claims: Vec<Arc<ResourceClaim>>,
}

impl NodeDra {
    /// Whether both hold the same objects (by address).
    pub fn same(&self, other: &NodeDra) -> bool {
        self.slices.len() == other.slices.len()
            && self.claims.len() == other.claims.len()
            && self.slices.iter().zip(&other.slices).all(|(a, b)| Arc::ptr_eq(a, b))
            && self.claims.iter().zip(&other.claims).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// The newest generation of each (driver, pool).
fn generations(slices: &[Arc<ResourceSlice>]) -> Map<(&str, &str), i64> {
    let mut newest: Map<(&str, &str), i64> = Map::default();
    for s in slices {
        let k = (s.spec.driver.as_str(), s.spec.pool.name.as_str());
        let g = newest.entry(k).or_insert(s.spec.pool.generation);
        *g = (*g).max(s.spec.pool.generation);
    }
    newest
}

/// The slices that count: a GPU driver's, on a node, of its pool's newest generation (older
/// slices are being replaced).
fn newest_slices(slices: &[Arc<ResourceSlice>]) -> Vec<&Arc<ResourceSlice>> {
    let newest = generations(slices);
    slices
        .iter()
        .filter(|s| {
            let k = (s.spec.driver.as_str(), s.spec.pool.name.as_str());
            s.spec.node_name.as_deref().is_some_and(|n| !n.is_empty())
                && newest.get(&k) == Some(&s.spec.pool.generation)
                && is_gpu_driver(&s.spec.driver)
        })
        .collect()
}

/// The node of each (driver, pool) that counts.
fn pool_nodes(slices: &[Arc<ResourceSlice>]) -> Map<(&str, &str), &str> {
    newest_slices(slices)
        .into_iter()
        .map(|s| ((s.spec.driver.as_str(), s.spec.pool.name.as_str()), s.spec.node_name.as_deref().unwrap_or("")))
        .collect()
}

/// Splits the cluster's slices and claims by node.
pub fn by_node<'a>(slices: &'a [Arc<ResourceSlice>], claims: &[Arc<ResourceClaim>]) -> Map<&'a str, NodeDra> {
    if slices.is_empty() {
        return Map::default();
    }
    let mut out: Map<&str, NodeDra> = Map::with_capacity_and_hasher(slices.len(), Default::default());
    for s in newest_slices(slices) {
        out.entry(s.spec.node_name.as_deref().unwrap_or("")).or_default().slices.push(s.clone());
    }
    let pool_node = pool_nodes(slices);
    for c in claims {
        let mut nodes: Vec<&str> =
            c.results().iter().filter_map(|r| pool_node.get(&(r.driver.as_str(), r.pool.as_str())).copied()).collect();
        nodes.dedup();
        for n in nodes {
            if let Some(d) = out.get_mut(n) {
                d.claims.push(c.clone());
            }
        }
    }
    // The stores' order is not stable; the memo compares by address.
    for d in out.values_mut() {
        d.slices.sort_by_key(|s| Arc::as_ptr(s) as usize);
        d.claims.sort_by_key(|c| Arc::as_ptr(c) as usize);
        d.claims.dedup_by(|a, b| Arc::ptr_eq(a, b));
    }
    out
}

/// [`by_node`] kept between derivations. A revision in which only pods or nodes changed costs
/// a pointer comparison per slice and claim; one in which some claims changed re-splits those
/// claims only and rebuilds the nodes they were or are on (the split of 8 000 claims was a
/// fifth of a revision at `dra1000`; docs/benchmarks.md). A change to the slices splits all
/// again. The `Arc`s are held, so an address is never reused while it is a key. The result is
/// [`by_node`]'s (each node's claims by address, once each), which a test holds it to.
#[derive(Debug, Default)]
pub struct Split {
    slices: Vec<Arc<ResourceSlice>>,
    claims: Vec<Arc<ResourceClaim>>,
    /// The node of each (driver, pool) of the newest generations.
    pool_node: Map<(String, String), String>,
    /// Each claim (by address) and the nodes it is allocated devices on.
    placed: std::collections::HashMap<usize, (Arc<ResourceClaim>, Vec<String>), super::pods::AddrHash>,
    by_node: Map<String, Arc<NodeDra>>,
}

impl Split {
    /// The split of these slices and claims.
    pub fn update(
        &mut self,
        slices: &[Arc<ResourceSlice>],
        claims: &[Arc<ResourceClaim>],
    ) -> &Map<String, Arc<NodeDra>> {
        fn same<T>(kept: &[Arc<T>], now: &[Arc<T>]) -> bool {
            kept.len() == now.len() && kept.iter().zip(now).all(|(a, b)| Arc::ptr_eq(a, b))
        }
        let addr = |c: &Arc<ResourceClaim>| Arc::as_ptr(c) as usize;
        if !same(&self.slices, slices) {
            self.by_node = by_node(slices, claims).into_iter().map(|(n, d)| (n.to_string(), Arc::new(d))).collect();
            self.pool_node = pool_nodes(slices)
                .into_iter()
                .map(|((d, p), n)| ((d.to_string(), p.to_string()), n.to_string()))
                .collect();
            self.placed = claims.iter().map(|c| (addr(c), (c.clone(), self.nodes_of(c)))).collect();
            self.slices = slices.to_vec();
            self.claims = claims.to_vec();
            return &self.by_node;
        }
        if same(&self.claims, claims) {
            return &self.by_node;
        }
        // Which claims came and went, and the nodes they touch.
        let now: std::collections::HashSet<usize, super::pods::AddrHash> = claims.iter().map(addr).collect();
        let mut touched: Vec<String> = Vec::new();
        self.placed.retain(|a, (_, nodes)| {
            let keep = now.contains(a);
            if !keep {
                touched.extend(nodes.iter().cloned());
            }
            keep
        });
        let mut added: Vec<(Arc<ResourceClaim>, Vec<String>)> = Vec::new();
        for c in claims {
            if self.placed.contains_key(&addr(c)) {
                continue;
            }
            let nodes = self.nodes_of(c);
            touched.extend(nodes.iter().cloned());
            self.placed.insert(addr(c), (c.clone(), nodes.clone()));
            added.push((c.clone(), nodes));
        }
        touched.sort_unstable();
        touched.dedup();
        // A touched node keeps its claims that stay and gains the new ones placed on it.
        for n in touched {
            let Some(old) = self.by_node.get(&n) else { continue };
            let mut on: Vec<Arc<ResourceClaim>> =
                old.claims.iter().filter(|c| now.contains(&addr(c))).cloned().collect();
            on.extend(added.iter().filter(|(_, nodes)| nodes.contains(&n)).map(|(c, _)| c.clone()));
            on.sort_by_key(|c| Arc::as_ptr(c) as usize);
            let fresh = NodeDra { slices: old.slices.clone(), claims: on };
            self.by_node.insert(n, Arc::new(fresh));
        }
        self.claims = claims.to_vec();
        &self.by_node
    }

    /// The nodes whose devices a claim is allocated (once each).
    fn nodes_of(&self, c: &ResourceClaim) -> Vec<String> {
        let mut out: Vec<String> = c
            .results()
            .iter()
            .filter_map(|r| self.pool_node.get(&(r.driver.clone(), r.pool.clone())).cloned())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
use super::dra_devices::natural;
pub use super::dra_devices::resources;

/// The claims of a pending pod and their state.
pub(crate) fn pending_claims(pod: &Pod, index: &super::ClaimIndex<'_>) -> Vec<PendingClaim> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    let class = |spec: &crate::dra::ClaimSpec| spec.device_classes().find(|c| !c.is_empty()).map(str::to_string);
    pod.claims()
        .into_iter()
        .map(|(entry, claim, template)| {
            let found = claim.and_then(|c| index.claims.get(&(ns, c)).copied());
            let device_class = found
                .and_then(|c| class(&c.spec))
                .or_else(|| template.and_then(|t| index.templates.get(&(ns, t))).and_then(|t| class(&t.spec.spec)));
            let state = match found {
                None => "missing",
                Some(c) if c.allocated() => "allocated",
                Some(_) => "pending",
            };
            PendingClaim { name: claim.unwrap_or(entry).to_string(), device_class, state: state.to_string() }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_drivers_and_classes_are_told_from_others() {
        assert!(is_gpu_driver("gpu.nvidia.com"));
        assert!(is_gpu_driver("gpu.intel.com"));
        assert!(!is_gpu_driver("compute-domain.nvidia.com"));
        assert!(!is_gpu_driver("dra.net"));
        let class: DeviceClass = serde_json::from_str(
            r#"{"metadata": {"name": "a100-class"}, "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}"#,
        )
        .unwrap_or_default();
        assert!(is_gpu_class(&class));
        let nic: DeviceClass = serde_json::from_str(
            r#"{"metadata": {"name": "rdma"}, "spec": {"selectors": [{"cel": {"expression": "device.driver == \"dra.net\""}}]}}"#,
        )
        .unwrap_or_default();
        assert!(!is_gpu_class(&nic));
    }

    #[test]
    fn devices_sort_in_natural_order() {
        let mut v = vec!["gpu-10", "gpu-2", "gpu-0", "gpu-0-mig-19-4-1", "gpu-0-mig-9-0-1"];
        v.sort_by_key(|a| natural(a));
        assert_eq!(v, ["gpu-0", "gpu-0-mig-9-0-1", "gpu-0-mig-19-4-1", "gpu-2", "gpu-10"]);
    }
}
