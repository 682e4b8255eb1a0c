//! GPU quotas per namespace: each GPU-related entry of a ResourceQuota, hard against used, and
//! the cluster's free units the namespace could use if its quota allowed.

use serde::{Deserialize, Serialize};

/// One GPU-related entry of a ResourceQuota.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct QuotaView {
    /// Namespace.
    pub namespace: String,
    /// The ResourceQuota's name.
    pub name: String,
    /// The quota key as written (`requests.nvidia.com/gpu`, `nvidia.com/gpu`,
    /// `limits.nvidia.com/gpu.shared`, `gpu.nvidia.com.deviceclass.resource.k8s.io/devices`).
    pub resource: String,
    /// `status.hard` (else `spec.hard`), in units.
    pub hard: u64,
    /// `status.used`, in units (0 when the quota controller has not counted yet).
    pub used: u64,
    /// The GPU resource or DeviceClass it limits (`nvidia.com/gpu`; `gpu.nvidia.com` for a
    /// DeviceClass entry).
    #[serde(default)]
    pub gpu_resource: String,
    /// Whether it limits a DRA DeviceClass (`<class>.deviceclass.resource.k8s.io/devices`).
    #[serde(default)]
    pub device_class: bool,
    /// The quota's scopes (`BestEffort`, `PriorityClass In (high)`, …): it counts only the pods
    /// they select.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `used` in thousandths of `hard` (capped at 1000; 1000 when `hard` is 0).
    #[serde(default)]
    pub used_permille: u32,
    /// `used >= hard`: no further pod asking for it is admitted.
    #[serde(default)]
    pub full: bool,
    /// Free units of `gpu_resource` on ready, schedulable nodes: what the namespace could use if
    /// its quota allowed (null for DeviceClass entries, which gpudash does not count yet).
    #[serde(default)]
    pub cluster_free: Option<u64>,
    /// The namespace's pods holding `gpu_resource` (`name` each).
    #[serde(default)]
    pub pods: Vec<String>,
}

impl QuotaView {
    /// Whether the quota page's namespace filter (`?ns=`) keeps it.
    pub fn in_namespace(&self, ns: Option<&str>) -> bool {
        ns.is_none_or(|n| self.namespace == n)
    }
}
