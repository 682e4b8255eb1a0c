//! Dynamic Resource Allocation in the view: each GPU driver's devices on a node (from the
//! ResourceSlices of each pool's newest generation), the claims allocated each device, and the
//! pods those claims are reserved for; the claims of pending pods. Pure: objects in, view out.

use app::i18n::Said;
use std::sync::Arc;

use app::model::{DeviceClaimRef, DeviceView, GpuResource, Holder, PendingClaim, PodRef, Sharing, Slot, SlotState};

use super::Map;
use crate::dra::{Device, DeviceClass, ResourceClaim, ResourceSlice};
use crate::pod::Pod;
use crate::quantity::Bytes;

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

/// A device of one driver on the node, with what was allocated on it.
struct Dev<'a> {
    pool: &'a str,
    d: &'a Device,
    /// (claim, share) allocated it.
    uses: Vec<(&'a ResourceClaim, Option<&'a str>, Option<u64>)>,
}

/// A name's natural sort key: digit runs compare as numbers (`gpu-2` before `gpu-10`).
fn natural(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for ch in s.chars() {
        match (ch.to_digit(10), num) {
            (Some(d), Some(n)) => num = Some(n.saturating_mul(10).saturating_add(u64::from(d))),
            (Some(d), None) => num = Some(u64::from(d)),
            (None, Some(n)) => {
                out.push((std::mem::take(&mut text), n));
                num = None;
                text.push(ch);
            }
            (None, None) => text.push(ch),
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

fn bytes_text(b: u64) -> String {
    app::units::bytes(b)
}

/// The GPU resources a node's DRA drivers offer, one entry per driver.
pub fn resources(dra: &NodeDra) -> Vec<GpuResource> {
    let mut drivers: Vec<&str> = dra.slices.iter().map(|s| s.spec.driver.as_str()).collect();
    drivers.sort_unstable();
    drivers.dedup();
    drivers.into_iter().map(|driver| driver_resource(dra, driver)).collect()
}

fn driver_resource(dra: &NodeDra, driver: &str) -> GpuResource {
    let mut devs: Vec<Dev<'_>> = dra
        .slices
        .iter()
        .filter(|s| s.spec.driver == driver)
        .flat_map(|s| s.spec.devices.iter().map(move |d| (s.spec.pool.name.as_str(), d)))
        .map(|(pool, d)| Dev { pool, d, uses: Vec::new() })
        .collect();
    devs.sort_by_cached_key(|d| natural(&d.d.name));
    for c in &dra.claims {
        for r in c.results().iter().filter(|r| r.driver == driver) {
            if let Some(dev) = devs.iter_mut().find(|d| d.pool == r.pool && d.d.name == r.device) {
                let mem = r
                    .consumed_capacity
                    .as_ref()
                    .and_then(|m| m.get("memory"))
                    .and_then(|q| Bytes::parse(&q.0).ok())
                    .map(|b| b.0);
                dev.uses.push((c.as_ref(), r.share_id.as_deref(), mem));
            }
        }
    }
    // Parents: a partition names its GPU by `parentUUID` (NVIDIA) or `parentIndex`.
    let parent_of = |d: &Device| -> Option<String> {
        let by_uuid = d.text(driver, "parentUUID").and_then(|u| {
            devs.iter().find(|p| p.d.text(driver, "uuid").as_deref() == Some(u.as_str())).map(|p| p.d.name.clone())
        });
        by_uuid.or_else(|| {
            let i = d.text(driver, "parentIndex")?;
            devs.iter()
                .find(|p| {
                    p.d.name != d.name
                        && p.d.text(driver, "index").as_deref() == Some(i.as_str())
                        && p.d.text(driver, "parentIndex").is_none()
                })
                .map(|p| p.d.name.clone())
        })
    };
    let parents: Vec<Option<String>> = devs.iter().map(|d| parent_of(d.d)).collect();

    // Holders: the pods of every claim on these devices, with how many devices (or shares).
    let mut holders: Vec<Holder> = Vec::new();
    for dev in &devs {
        for (c, _, _) in &dev.uses {
            let ns = c.metadata.namespace.clone().unwrap_or_default();
            for p in c.pods() {
                match holders.iter_mut().find(|h| h.namespace == ns && h.name == p) {
                    Some(h) => h.count += 1,
                    None => holders.push(Holder {
                        namespace: ns.clone(),
                        name: p.to_string(),
                        count: 1,
                        ..Holder::default()
                    }),
                }
            }
        }
    }
    holders.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let holder_index = |c: &ResourceClaim| -> Option<u32> {
        let ns = c.metadata.namespace.as_deref().unwrap_or("");
        let p = c.pods().next()?;
        holders.iter().position(|h| h.namespace == ns && h.name == p).and_then(|i| u32::try_from(i).ok())
    };
    let claim_name = |c: &ResourceClaim| {
        format!("{}/{}", c.metadata.namespace.as_deref().unwrap_or(""), c.metadata.name.as_deref().unwrap_or(""))
    };
    let used_slot = |c: &ResourceClaim, label: Option<String>| {
        let holder = holder_index(c);
        // A claim several pods share: the slot names the first and says how many.
        let pods = c.pods().count();
        let label: Option<Said> = match (pods > 1, label) {
            (true, Some(l)) => Some(app::say!("{l} · {pods} pods", "{l} · Pod {pods} 個")),
            (true, None) => Some(app::say!("{pods} pods share it", "Pod {pods} 個で共有")),
            (false, l) => l.map(Said::same),
        };
        let claim = claim_name(c);
        let label = match (holder, label) {
            (Some(_), l) => l,
            (None, Some(l)) => {
                let (le, lj) = (&l.en, &l.ja);
                Some(app::say!("{le} · claim {claim} · no pod", "{lj} · claim {claim} · Pod なし"))
            }
            (None, None) => Some(app::say!("claim {claim} · no pod", "claim {claim} · Pod なし")),
        };
        Slot { state: SlotState::Held, holder, label }
    };

    let mut slots = Vec::new();
    let mut rows = Vec::new();
    for (i, dev) in devs.iter().enumerate() {
        if parents[i].is_some() {
            continue;
        }
        let children: Vec<usize> =
            (0..devs.len()).filter(|j| parents[*j].as_deref() == Some(dev.d.name.as_str())).collect();
        let shared = dev.d.allow_multiple_allocations == Some(true);
        let mut row = Vec::new();
        if !dev.uses.is_empty() && shared {
            let total = dev.d.memory_bytes();
            let mut consumed = 0u64;
            for (c, _, mem) in &dev.uses {
                consumed = consumed.saturating_add(mem.unwrap_or(0));
                row.push(used_slot(c, mem.map(bytes_text)));
            }
            if let Some(left) = total.map(|t| t.saturating_sub(consumed)).filter(|l| *l > 0) {
                let left = bytes_text(left);
                row.push(Slot {
                    state: SlotState::Free,
                    holder: None,
                    label: Some(app::say!("{left} free", "空き {left}")),
                });
            }
        } else if let Some((c, _, _)) = dev.uses.first() {
            row.push(used_slot(c, None));
        } else if !children.is_empty() {
            for j in children {
                let child = &devs[j];
                let profile = child.d.text(driver, "profile").unwrap_or_else(|| child.d.name.clone());
                row.push(match child.uses.first() {
                    Some((c, _, _)) => used_slot(c, Some(profile)),
                    None => Slot { state: SlotState::Free, holder: None, label: Some(Said::same(profile)) },
                });
            }
        } else {
            let label = shared.then(|| app::say!("shareable", "共有可"));
            row.push(Slot { state: SlotState::Free, holder: None, label });
        }
        // `GPU 0`, naming the device too when its name does not say the same.
        let title = match dev.d.text(driver, "index") {
            Some(ix) if dev.d.name == format!("gpu-{ix}") => format!("GPU {ix}"),
            Some(ix) => format!("GPU {ix} · {}", dev.d.name),
            None => dev.d.name.clone(),
        };
        rows.push(Said::same(title));
        slots.push(row);
    }

    let devices: Vec<DeviceView> = devs
        .iter()
        .zip(&parents)
        .map(|(dev, parent)| {
            let mut pods: Vec<PodRef> = Vec::new();
            for (c, _, _) in &dev.uses {
                let ns = c.metadata.namespace.clone().unwrap_or_default();
                for p in c.pods() {
                    let r = PodRef { namespace: ns.clone(), name: p.to_string(), replicas: Vec::new() };
                    if !pods.contains(&r) {
                        pods.push(r);
                    }
                }
            }
            DeviceView {
                name: dev.d.name.clone(),
                type_: dev.d.text(driver, "type"),
                product: dev.d.text(driver, "productName"),
                uuid: dev.d.text(driver, "uuid"),
                memory_bytes: dev.d.memory_bytes(),
                parent: parent.clone(),
                shared: dev.d.allow_multiple_allocations == Some(true),
                claims: dev
                    .uses
                    .iter()
                    .map(|(c, share, _)| DeviceClaimRef {
                        namespace: c.metadata.namespace.clone().unwrap_or_default(),
                        name: c.metadata.name.clone().unwrap_or_default(),
                        share_id: share.map(str::to_string),
                    })
                    .collect(),
                holders: pods,
                busy_percent: None,
                memory_used_bytes: None,
            }
        })
        .collect();
    let mut products: Vec<&str> =
        devices.iter().filter(|d| d.parent.is_none()).filter_map(|d| d.product.as_deref()).collect();
    products.dedup();
    let capacity = devices.len() as u64;
    let allocated = devs.iter().filter(|d| !d.uses.is_empty()).count() as u64;
    GpuResource {
        resource: driver.to_string(),
        product: (products.len() == 1).then(|| products[0].to_string()),
        physical_gpus: Some(slots.len() as u64),
        replicas_per_gpu: 1,
        sharing: Sharing::Dra,
        capacity,
        allocatable: capacity,
        allocated,
        holders,
        placement_known: true,
        out_of_service: 0,
        slots,
        rows,
        devices,
        profile: None,
    }
}

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
