//! What the kubelet's pod-resources API says, as the agent reports it: which device IDs the
//! kubelet handed each pod, and which it can hand out (the client is [`crate::kubelet`]).
//!
//! With time-slicing the NVIDIA device plugin's IDs are `<GPU-UUID>::<replica>`; a whole GPU is
//! its UUID, a MIG device its `MIG-…` UUID, a Jetson's integrated GPU `tegra` (`tegra::<n>`
//! when time-sliced).

use serde::{Deserialize, Serialize};

/// The default socket (K3s runs the kubelet with its default root directory).
pub const DEFAULT_SOCKET: &str = "/var/lib/kubelet/pod-resources/kubelet.sock";

/// Device IDs of one resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Devices {
    /// `nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`, …
    pub resource: String,
    /// The IDs, as the device plugin named them.
    pub ids: Vec<String>,
}

/// The devices one pod's containers were handed (containers merged: gpudash shows pods).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodDevices {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Per resource, the IDs its containers hold.
    pub devices: Vec<Devices>,
}

/// What the kubelet said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Allocation {
    /// Every device the kubelet can hand out, per resource (accelerators only).
    pub allocatable: Vec<Devices>,
    /// Pods holding devices (pods that hold none are left out).
    pub pods: Vec<PodDevices>,
}
