//! GPU quotas per namespace: the GPU-related entries of each ResourceQuota (`requests.<r>`,
//! `limits.<r>`, the bare `<r>`, and DRA's `<class>.deviceclass.resource.k8s.io/devices`),
//! scoped quotas included, with the cluster's free units each namespace could use.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use gpudash_model::model::{NodeView, QuotaView};
use k8s_openapi::api::core::v1::ResourceQuota;

use super::memory::permille;
use super::node;
use crate::quantity::GpuCount;

/// The suffix of a quota key that limits the devices of a DRA DeviceClass.
pub const DEVICE_CLASS_SUFFIX: &str = ".deviceclass.resource.k8s.io/devices";

/// The GPU resource (or DeviceClass) a quota key limits, if the key is GPU-related.
pub fn gpu_key(key: &str) -> Option<(String, bool)> {
    if let Some(class) = key.strip_suffix(DEVICE_CLASS_SUFFIX) {
        return (!class.is_empty()).then(|| (class.to_string(), true));
    }
    let res = key.strip_prefix("requests.").or_else(|| key.strip_prefix("limits.")).unwrap_or(key);
    node::is_accelerator(res).then(|| (res.to_string(), false))
}

/// Free units of each GPU resource on nodes that can take a pod now (ready, not cordoned).
pub fn cluster_free(nodes: &[Arc<NodeView>]) -> HashMap<&str, u64> {
    let mut free: HashMap<&str, u64> = HashMap::new();
    for n in nodes.iter().filter(|n| n.ready && !n.unschedulable && n.down.is_none()) {
        for g in &n.gpu_resources {
            *free.entry(g.resource.as_str()).or_default() += g.allocatable.saturating_sub(g.allocated);
        }
    }
    free
}

/// Whole units of a quota amount; `None` for a value that is not one.
fn units(q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity) -> Option<u64> {
    GpuCount::parse(&q.0).ok().map(|c| c.0)
}

/// One GPU-related entry of a ResourceQuota, with its amounts read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuEntry<'a> {
    /// The key as written (`requests.nvidia.com/gpu`).
    pub key: &'a str,
    /// The GPU resource or DeviceClass it limits.
    pub resource: String,
    /// Whether it limits a DRA DeviceClass.
    pub device_class: bool,
    /// `status.hard`, else `spec.hard` (what the controller will enforce once it has synced).
    pub hard: u64,
    /// `status.used`; 0 while the quota controller has not counted (what it would report).
    pub used: u64,
}

/// The GPU-related entries of a quota. An amount that is not a whole number leaves its entry
/// out: never a 0 read as full or empty. Shared by the view and the what-if check.
pub fn gpu_entries(q: &ResourceQuota) -> Vec<GpuEntry<'_>> {
    let status = q.status.as_ref();
    let hard = status.and_then(|s| s.hard.as_ref()).or(q.spec.as_ref().and_then(|s| s.hard.as_ref()));
    let used = status.and_then(|s| s.used.as_ref());
    hard.into_iter()
        .flatten()
        .filter_map(|(key, h)| {
            let (resource, device_class) = gpu_key(key)?;
            let used = match used.and_then(|u| u.get(key)) {
                Some(u) => units(u)?,
                None => 0,
            };
            Some(GpuEntry { key, resource, device_class, hard: units(h)?, used })
        })
        .collect()
}

/// A quota's scopes as kubectl describes them (`BestEffort`, `PriorityClass In (high)`).
fn scopes(q: &ResourceQuota) -> Vec<String> {
    let spec = q.spec.as_ref();
    let mut out: Vec<String> = spec.and_then(|s| s.scopes.clone()).unwrap_or_default();
    for e in
        spec.and_then(|s| s.scope_selector.as_ref()).and_then(|s| s.match_expressions.as_ref()).into_iter().flatten()
    {
        let values = e.values.as_ref().map(|v| format!(" ({})", v.join(", "))).unwrap_or_default();
        out.push(format!("{} {}{values}", e.scope_name, e.operator));
    }
    out
}

/// Every GPU-related quota entry, by namespace, quota and key.
pub fn quotas(quotas: &[Arc<ResourceQuota>], nodes: &[Arc<NodeView>]) -> Vec<QuotaView> {
    // Most clusters have no GPU quota: then this costs nothing per revision.
    if quotas.is_empty() {
        return Vec::new();
    }
    let free = cluster_free(nodes);
    let mut holders: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for n in nodes {
        for g in &n.gpu_resources {
            for h in &g.holders {
                holders.entry((h.namespace.as_str(), g.resource.as_str())).or_default().push(h.name.clone());
            }
        }
    }
    let mut out = Vec::new();
    for q in quotas {
        let namespace = q.metadata.namespace.clone().unwrap_or_default();
        let name = q.metadata.name.clone().unwrap_or_default();
        let scopes = scopes(q);
        for GpuEntry { key, resource: gpu_resource, device_class, hard, used } in gpu_entries(q) {
            let mut pods = holders.get(&(namespace.as_str(), gpu_resource.as_str())).cloned().unwrap_or_default();
            pods.sort();
            pods.dedup();
            out.push(QuotaView {
                namespace: namespace.clone(),
                name: name.clone(),
                resource: key.to_string(),
                hard,
                used,
                cluster_free: (!device_class).then(|| free.get(gpu_resource.as_str()).copied().unwrap_or(0)),
                gpu_resource,
                device_class,
                scopes: scopes.clone(),
                used_permille: if hard == 0 { 1000 } else { permille(used, hard) },
                full: used >= hard,
                pods,
            });
        }
    }
    out.sort_by(|a, b| (&a.namespace, &a.name, &a.resource).cmp(&(&b.namespace, &b.name, &b.resource)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_amount_leaves_the_entry_out_rather_than_showing_zero() {
        let q: ResourceQuota = serde_yaml::from_str(
            "metadata: {name: q, namespace: a}\nstatus: {hard: {requests.nvidia.com/gpu: \"1.5\", nvidia.com/gpu: \"2\"}, used: {nvidia.com/gpu: lots}}\n",
        )
        .unwrap_or_default();
        assert!(quotas(&[Arc::new(q)], &[]).is_empty());
        let fresh: ResourceQuota =
            serde_yaml::from_str("metadata: {name: q, namespace: a}\nspec: {hard: {requests.nvidia.com/gpu: \"2\"}}\n")
                .unwrap_or_default();
        let v = quotas(&[Arc::new(fresh)], &[]);
        assert_eq!((v[0].hard, v[0].used, v[0].full), (2, 0, false), "not counted yet: nothing in use");
    }

    #[test]
    fn gpu_keys_in_every_form_and_nothing_else() {
        assert_eq!(gpu_key("requests.nvidia.com/gpu"), Some(("nvidia.com/gpu".into(), false)));
        assert_eq!(gpu_key("limits.nvidia.com/gpu.shared"), Some(("nvidia.com/gpu.shared".into(), false)));
        assert_eq!(gpu_key("nvidia.com/mig-1g.5gb"), Some(("nvidia.com/mig-1g.5gb".into(), false)));
        assert_eq!(
            gpu_key("gpu.nvidia.com.deviceclass.resource.k8s.io/devices"),
            Some(("gpu.nvidia.com".into(), true))
        );
        for other in [
            "requests.memory",
            "limits.cpu",
            "pods",
            "count/pods",
            "requests.storage",
            ".deviceclass.resource.k8s.io/devices",
        ] {
            assert_eq!(gpu_key(other), None, "{other}");
        }
    }
}
