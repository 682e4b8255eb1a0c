//! Diagnoses: a typed code, the object it concerns, how bad it is and what to do.

use serde::{Deserialize, Serialize};

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
    pub code: Code,
    /// Severity.
    pub severity: Severity,
    /// Kind of the object (`Pod`, `Node`, `ReplicaSet`, `Cluster`, …). A node card's problems
    /// leave it out (they are the node's).
    #[serde(default)]
    pub kind: Kind,
    /// Namespace of the object.
    pub namespace: Option<String>,
    /// Name of the object (left out on a node card: the node's).
    #[serde(default)]
    pub name: String,
    /// One sentence that says what is wrong and what to do (in the answer's language).
    pub message: crate::i18n::Said,
    /// Where its object is shown, below the base path (`/nodes/orin-agx-01`,
    /// `/pending#pod-vision-anomaly-detector-…`), when it is shown anywhere.
    #[serde(default)]
    pub link: Option<String>,
    /// The node it concerns: the node itself, or the node a pod is bound to (the alert's
    /// `node` label; none for a Pending pod or a workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Since when it has held without a break (RFC 3339): the first derivation that found it
    /// in this process, or — across a gpudash restart — the time history recorded it raised,
    /// when it still held at the last heartbeat before the restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// Declares a string enum with an `Other` fallback: it reads and writes as the same JSON
/// strings as before, and a string this build does not know (a newer server's) is kept as it
/// is rather than failing the whole view.
#[cfg(not(feature = "hydrate"))]
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this build does not know, kept verbatim.
            Other(String),
            /// No value (the `Default`).
            #[default]
            Unset,
        }

        impl $name {
            /// The JSON string.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $text,)*
                    Self::Other(s) => s,
                    Self::Unset => "",
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($text => Self::$variant,)*
                    "" => Self::Unset,
                    other => Self::Other(other.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok(Self::from(s.as_ref()))
            }
        }
    };
}

// In the browser bundle a code and a kind are the strings they render as: the views only show
// them (the derivation decided everything they mean), and the enums' matching code would cost
// the page-weight budget for nothing. The JSON is the same either way.
#[cfg(feature = "hydrate")]
/// A diagnosis code, as the browser shows it.
pub type Code = String;
#[cfg(feature = "hydrate")]
/// The kind of object a diagnosis concerns, as the browser shows it.
pub type Kind = String;

#[cfg(not(feature = "hydrate"))]
string_enum! {
    /// A diagnosis code (stable strings; see docs/api.md).
    Code {
        /// A pending pod is short of a GPU resource.
        InsufficientGpu = "insufficient-gpu",
        /// A GPU node offers no GPU: its device plugin is missing or failing.
        DevicePluginMissing = "device-plugin-missing",
        /// A RuntimeClass that does not exist.
        RuntimeclassMissing = "runtimeclass-missing",
        /// containerd lacks the class's handler.
        RuntimeHandlerMissing = "runtime-handler-missing",
        /// A GPU pod without runtimeClassName where the default runtime is runc.
        GpuPodWithoutRuntimeclass = "gpu-pod-without-runtimeclass",
        /// More than one time-slicing replica requested.
        SharedGpuRequestTooLarge = "shared-gpu-request-too-large",
        /// Limits beyond a unified-memory board.
        UnifiedMemoryOvercommit = "unified-memory-overcommit",
        /// More pods than physical GPUs on a time-sliced resource.
        GpuTimeSliceContention = "gpu-time-slice-contention",
        /// Pods use a GPU without requesting it.
        GpuUsedOutsideScheduler = "gpu-used-outside-scheduler",
        /// GPUs out of service.
        GpuUnhealthy = "gpu-unhealthy",
        /// A node with GPU pods stopped reporting.
        GpuNodeDown = "gpu-node-down",
        /// A pending pod refused for memory.
        InsufficientMemory = "insufficient-memory",
        /// A claim or template names a DeviceClass that does not exist.
        DraDeviceclassMissing = "dra-deviceclass-missing",
        /// A GPU node publishes no ResourceSlice while GPU DeviceClasses exist.
        DraDriverMissing = "dra-driver-missing",
        /// A claim is allocated but no pod uses it.
        DraClaimUnreserved = "dra-claim-unreserved",
        /// A node offers its GPUs through both the device plugin and a DRA driver.
        GpuDualAllocator = "gpu-dual-allocator",
        /// A GPU node runs no gpudash-agent while other nodes do.
        AgentMissing = "agent-missing",
        /// A node's gpudash-agent stopped answering.
        AgentStale = "agent-stale",
        /// A team's GPU quota refuses a workload's pods.
        GpuQuotaExhausted = "gpu-quota-exhausted",
        /// A pod asks for a GPU resource by a name the nodes advertise differently.
        GpuResourceNameMismatch = "gpu-resource-name-mismatch",
        /// The nodes a pending pod could run on are cordoned.
        GpuNodeCordoned = "gpu-node-cordoned",
        /// A Deployment's rolling update waits for the GPU its own old pods hold.
        GpuRolloutDeadlock = "gpu-rollout-deadlock",
        /// A GPU holder stays terminating past its grace period.
        GpuHeldByTerminatingPod = "gpu-held-by-terminating-pod",
        /// A pod's GPU memory and cgroup memory together exceed its memory limit (Jetson).
        GpuMemoryBeyondLimit = "gpu-memory-beyond-limit",
        /// The kubelet or the device plugin refused a GPU pod at admission, after binding.
        GpuAdmissionRejected = "gpu-admission-rejected",
        /// A GPU pod's container was killed for memory (OOMKilled).
        GpuModelOomKilled = "gpu-model-oom-killed",
        /// The kubelet evicted a GPU pod (node pressure, ephemeral storage).
        GpuPodEvicted = "gpu-pod-evicted",
        /// The scheduler preempted a GPU pod for one of higher priority.
        GpuPreempted = "gpu-preempted",
        /// A pod holds a GPU unit and has not run for a while.
        GpuHeldNotRunning = "gpu-held-not-running",
        /// A pod holds a GPU unit whose GPU has been idle for a while, while a pod waits.
        GpuHeldIdle = "gpu-held-idle",
        /// A node shares its GPUs through MPS and no MPS control daemon runs there.
        GpuMpsDaemonMissing = "gpu-mps-daemon-missing",
        /// A pending pod asks for a share of one GPU's memory that no card has free.
        InsufficientGpuMemory = "insufficient-gpu-memory",
        /// A pending pod asks for a share of one GPU larger than any GPU it can go to.
        GpuShareExceedsGpu = "gpu-share-exceeds-gpu",
    }
}

#[cfg(not(feature = "hydrate"))]
string_enum! {
    /// The kind of object a diagnosis concerns.
    Kind {
        /// A pod.
        Pod = "Pod",
        /// A node.
        Node = "Node",
        /// A ReplicaSet.
        ReplicaSet = "ReplicaSet",
        /// A Deployment.
        Deployment = "Deployment",
        /// A Job.
        Job = "Job",
        /// A StatefulSet.
        StatefulSet = "StatefulSet",
        /// A DaemonSet.
        DaemonSet = "DaemonSet",
        /// The cluster as a whole.
        Cluster = "Cluster",
        /// A ResourceClaim.
        ResourceClaim = "ResourceClaim",
        /// A ResourceClaimTemplate.
        ResourceClaimTemplate = "ResourceClaimTemplate",
    }
}
