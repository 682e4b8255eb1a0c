//! A GPU device as a node's page lists it: what its DRA driver publishes (or the kubelet hands
//! out), the claims allocated it and the pods using it.

use serde::{Deserialize, Serialize};

/// One device a DRA driver publishes on a node.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct DeviceView {
    /// Its name in the pool (`gpu-0`, `gpu-0-mig-1g10gb-0`).
    pub name: String,
    /// The driver's `type` attribute (`gpu`, `mig`, `vfio`, …).
    #[serde(rename = "type")]
    pub type_: Option<String>,
    /// `productName`.
    pub product: Option<String>,
    /// `uuid`.
    pub uuid: Option<String>,
    /// `capacity.memory`.
    pub memory_bytes: Option<u64>,
    /// The device this one is a partition of (a MIG device's GPU), by name.
    pub parent: Option<String>,
    /// Whether several claims may each hold a share (consumable capacity).
    pub shared: bool,
    /// The claims allocated this device (one per share on a shared device).
    pub claims: Vec<DeviceClaimRef>,
    /// The pods using it (through claims, or as the kubelet handed it out).
    pub holders: Vec<PodRef>,
    /// How busy it is, percent, as the node's agent measured it; null when unknown.
    #[serde(default)]
    pub busy_percent: Option<u32>,
    /// Its memory in use, as the node's agent measured it (dcgm-exporter's framebuffer used);
    /// null when unknown (on Jetson the GPU's memory is the board's: see `memory`).
    #[serde(default)]
    pub memory_used_bytes: Option<u64>,
}

/// A claim allocated a device.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct DeviceClaimRef {
    /// Namespace.
    pub namespace: String,
    /// Claim name.
    pub name: String,
    /// The share it holds of a shared device.
    pub share_id: Option<String>,
}

/// A pod, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct PodRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The time-slicing replicas of the device it holds, by index (`GPU-…::2` → 2), as the
    /// kubelet handed them out; empty for a whole device or a DRA claim.
    #[serde(default)]
    pub replicas: Vec<u32>,
}
