//! The pod as gpudash keeps it: only the fields the derivation and the what-if check read,
//! decoded straight from the API server's JSON — every other field is skipped while parsing,
//! never built. Field names and types follow `k8s_openapi::api::core::v1::Pod`, so code reads
//! it the same way.
//!
//! Why: at 30 000 pods the full k8s-openapi `Pod` (every optional field of the spec, status and
//! containers laid out inline) took ~7 KiB a pod even for minimal pods — over 200 MiB for the
//! pods' store alone — and building it was most of the initial sync.

mod compact;

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, PodCondition, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube_core::Resource;
use serde::{Deserialize, Serialize};

pub use compact::{GpuEnv, ResourceList};

use crate::derive::pods::Facts;

/// The label that marks gpudash-agent pods, and its value.
pub const AGENT_LABEL: &str = "app.kubernetes.io/name";
/// See [`AGENT_LABEL`].
pub const AGENT_NAME: &str = "gpudash-agent";

/// A pod, projected (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pod {
    /// Standard object metadata (annotations and managed fields are skipped while decoding).
    #[serde(default, deserialize_with = "crate::meta::lean")]
    pub metadata: ObjectMeta,
    /// What the pod asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<PodSpec>,
    /// What happened to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PodStatus>,
    /// What the derivation computes from it once ([`Pod::facts`]).
    #[serde(skip)]
    pub memo: FactsMemo,
}

/// What the derivation computes once from a pod's spec — its effective requests and memory
/// limit ([`Facts`]) — kept with the pod, so that it can be computed where the pod is stored
/// (the watcher, while the first list is still being read) rather than by the first
/// derivation, which waits for every pod. Not part of the pod's value: pods are equal whatever
/// their memos hold, it is not serialised, and a clone starts without it, so a copy that is
/// then changed cannot carry the original's facts. A pod is not changed once its facts are
/// computed (the stores hand pods out in an `Arc`).
#[derive(Default)]
pub struct FactsMemo(std::sync::OnceLock<std::sync::Arc<Facts>>);

impl Clone for FactsMemo {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for FactsMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for FactsMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "FactsMemo(computed)" } else { "FactsMemo" })
    }
}

/// The spec fields scheduling and GPU accounting depend on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// The node it is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// Its containers.
    #[serde(default)]
    pub containers: Vec<Container>,
    /// Its init containers (restartable ones are sidecars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<Container>>,
    /// Pod overhead added by its RuntimeClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<BTreeMap<String, Quantity>>,
    /// Its RuntimeClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_class_name: Option<String>,
    /// Its node selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Its affinity (boxed: rare, and large when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Box<Affinity>>,
    /// Its tolerations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
    /// The scheduler that places it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// Its PriorityClass (who may preempt whom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// Its Dynamic Resource Allocation claims (by name, or made from a template per pod).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_claims: Vec<PodResourceClaim>,
}

/// `spec.resourceClaims[]`: exactly one of the two sources is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceClaim {
    /// The name the pod's containers use for it.
    #[serde(default)]
    pub name: String,
    /// An existing ResourceClaim, shared with every pod that names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claim_name: Option<String>,
    /// A template the pod gets its own claim from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claim_template_name: Option<String>,
}

/// `status.resourceClaimStatuses[]`: the claim made for a template entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodClaimStatus {
    /// The entry's name in `spec.resourceClaims`.
    #[serde(default)]
    pub name: String,
    /// The ResourceClaim made for it (unset when none was needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_claim_name: Option<String>,
}

/// `status.extendedResourceClaimStatus`: the claim the scheduler made for extended resources
/// that a DeviceClass stands for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtendedClaimStatus {
    /// Which container's which resource maps to which request.
    #[serde(default)]
    pub request_mappings: Vec<RequestMapping>,
    /// The claim.
    #[serde(default)]
    pub resource_claim_name: String,
}

/// One mapping of `extendedResourceClaimStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMapping {
    /// Container.
    #[serde(default)]
    pub container_name: String,
    /// The extended resource (`nvidia.com/gpu`).
    #[serde(default)]
    pub resource_name: String,
    /// The claim's request.
    #[serde(default)]
    pub request_name: String,
}

/// A container's name, resources and restart policy (sidecars restart `Always`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its requests and limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// `Always` for a sidecar init container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    /// Its environment, of which only `NVIDIA_VISIBLE_DEVICES` is kept: a container that sets
    /// it is a sure GPU user under the NVIDIA runtime, device plugin or not.
    #[serde(default, skip_serializing_if = "GpuEnv::is_empty")]
    pub env: GpuEnv,
    /// Its ports, kept only for gpudash-agent pods (see [`Pod::strip`]): where the agent serves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
}

/// A container port.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Its name (`report` on the agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The port.
    #[serde(default)]
    pub container_port: i32,
}

/// A container's requests and limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// Limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceList>,
    /// Requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceList>,
}

/// The status fields the views and diagnoses read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// Pending, Running, Succeeded, Failed, Unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Conditions (PodScheduled carries the scheduler's message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<PodCondition>>,
    /// The node the scheduler nominated for it (preemption).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node_name: Option<String>,
    /// A one-word reason (for example `UnexpectedAdmissionError`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A message about the pod's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The pod's IP, kept only for gpudash-agent pods (see [`Pod::strip`]).
    #[serde(default, rename = "podIP", skip_serializing_if = "Option::is_none")]
    pub pod_ip: Option<String>,
    /// When the kubelet accepted the pod (since when a bound pod has had the node's units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// Container states, kept for device-plugin pods (their restarts and last exit say why a
    /// node offers no GPU) and, compacted, for GPU pods (see [`Pod::strip`]): what the node
    /// decided after binding (OOM kills, image pulls, crash loops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_statuses: Option<Vec<ContainerStatus>>,
    /// The claims made from templates for this pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_claim_statuses: Vec<PodClaimStatus>,
    /// The claim made for its DRA-backed extended resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_resource_claim_status: Option<ExtendedClaimStatus>,
}

/// What gpudash reads of a container's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Whether it passes its readiness probe.
    #[serde(default)]
    pub ready: bool,
    /// Restarts so far.
    #[serde(default)]
    pub restart_count: i32,
    /// Its state now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ContainerState>,
    /// Its previous state (the last exit of a crash-looping container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_state: Option<ContainerState>,
}

/// A container state: waiting (with a reason such as `CrashLoopBackOff`) or terminated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    /// Waiting, with its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<StateReason>,
    /// Terminated, with its reason and exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<StateReason>,
    /// Running since (present when running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<serde_json::Value>,
}

/// The reason (and exit code) of a waiting or terminated state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateReason {
    /// `CrashLoopBackOff`, `Error`, `OOMKilled`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The kubelet's or the runtime's words (kept to [`MESSAGE_CAP`] bytes on GPU pods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Exit code of a terminated container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// When a terminated container ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
}

/// The longest container-state message kept on a GPU pod, in bytes: enough for the kubelet's
/// and containerd's words (an image pull's reference and cause), never a tenant's essay.
pub const MESSAGE_CAP: usize = 300;

/// The most container states kept on a GPU pod.
pub const STATUSES_CAP: usize = 8;

impl Resource for Pod {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Pod")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("pods")
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Pod {
    /// Drops what gpudash never reads once the pod has arrived: annotations (but HAMi's record of
    /// its cards), managed fields and
    /// labels (selectors are matched against nodes, not pods), and a bound pod's conditions
    /// (only a pod waiting for the scheduler has its reasons read from them).
    pub fn strip(&mut self) {
        self.metadata.managed_fields = None;
        if let Some(a) = self.metadata.annotations.as_mut() {
            a.retain(|k, _| crate::meta::KEPT_ANNOTATIONS.contains(&k.as_str()));
        }
        if self.metadata.annotations.as_ref().is_some_and(BTreeMap::is_empty) {
            self.metadata.annotations = None;
        }
        if !self.is_agent() {
            self.metadata.labels = None;
            if let Some(st) = self.status.as_mut() {
                st.pod_ip = None;
            }
            for c in self.spec.iter_mut().flat_map(|s| s.containers.iter_mut()) {
                c.ports = Vec::new();
            }
        }
        let bound = self.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
        if let Some(st) = self.status.as_mut().filter(|_| bound) {
            st.conditions = None;
        }
        if self.is_device_plugin() {
            return;
        }
        let gpu = self.is_gpu();
        if let Some(st) = self.status.as_mut() {
            if gpu {
                compact_statuses(&mut st.container_statuses);
            } else {
                st.container_statuses = None;
                st.start_time = None;
            }
        }
    }

    /// Whether the pod asks for an accelerator (a GPU pod): its containers' state is kept.
    pub fn is_gpu(&self) -> bool {
        self.spec.as_ref().is_some_and(|s| {
            s.containers.iter().chain(s.init_containers.iter().flatten()).any(|c| {
                c.resources.as_ref().is_some_and(|r| {
                    [&r.limits, &r.requests]
                        .into_iter()
                        .flatten()
                        .any(|l| l.iter().any(|(k, _)| crate::derive::node::is_accelerator(k)))
                })
            })
        })
    }

    /// Whether this is a gpudash-agent pod (label `app.kubernetes.io/name=gpudash-agent`): its
    /// labels, IP and ports are kept so that gpudash can find and pull it.
    pub fn is_agent(&self) -> bool {
        self.metadata.labels.as_ref().and_then(|l| l.get(AGENT_LABEL)).is_some_and(|v| v == AGENT_NAME)
    }

    /// Whether this is a pod of an NVIDIA device plugin DaemonSet (the Helm chart's
    /// `…nvidia-device-plugin-…` and the GPU Operator's `nvidia-device-plugin-daemonset-…`).
    pub fn is_device_plugin(&self) -> bool {
        self.metadata.name.as_deref().is_some_and(|n| n.contains("nvidia-device-plugin"))
    }

    /// Whether this is the NVIDIA device plugin chart's MPS control daemon
    /// (`<release>-nvidia-device-plugin-mps-control-daemon-<id>`): named like the plugin, its
    /// own pod, which the plugin waits for on a node that shares its GPUs through MPS.
    pub fn is_mps_daemon(&self) -> bool {
        self.metadata.name.as_deref().is_some_and(|n| n.contains("mps-control-daemon"))
    }

    /// The pod's claims: (entry name, the ResourceClaim's name when known, the template).
    /// A template entry's claim is named in `status.resourceClaimStatuses` once made.
    pub fn claims(&self) -> Vec<(&str, Option<&str>, Option<&str>)> {
        let statuses = self.status.as_ref().map(|s| s.resource_claim_statuses.as_slice()).unwrap_or_default();
        self.spec
            .iter()
            .flat_map(|s| &s.resource_claims)
            .map(|c| {
                let made = statuses.iter().find(|s| s.name == c.name).and_then(|s| s.resource_claim_name.as_deref());
                (c.name.as_str(), c.resource_claim_name.as_deref().or(made), c.resource_claim_template_name.as_deref())
            })
            .collect()
    }

    /// Whether the extended resource `name` is served to this pod by DRA (the scheduler mapped
    /// it to a claim) rather than by a device plugin.
    pub fn dra_mapped(&self, name: &str) -> bool {
        self.status
            .as_ref()
            .and_then(|s| s.extended_resource_claim_status.as_ref())
            .is_some_and(|e| e.request_mappings.iter().any(|m| m.resource_name == name))
    }

    /// The projection of a full k8s-openapi pod (the what-if check parses pasted workloads with
    /// k8s-openapi's types, which validate every field).
    pub fn from_full(p: &k8s_openapi::api::core::v1::Pod) -> Self {
        serde_json::to_value(p).ok().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()
    }
}

/// A GPU pod's container states as kept: none where every container runs and never restarted
/// (nothing to say, and the common case at 30,000 pods), else at most [`STATUSES_CAP`] of them
/// with their messages cut to [`MESSAGE_CAP`] bytes, so a tenant's output cannot grow the store.
fn compact_statuses(statuses: &mut Option<Vec<ContainerStatus>>) {
    let Some(list) = statuses.as_mut() else { return };
    let quiet = |c: &ContainerStatus| {
        c.restart_count == 0
            && c.last_state.as_ref().is_none_or(|s| s.terminated.is_none())
            && c.state.as_ref().is_some_and(|s| s.running.is_some())
    };
    if list.iter().all(quiet) {
        *statuses = None;
        return;
    }
    list.truncate(STATUSES_CAP);
    for s in list.iter_mut().flat_map(|c| c.state.iter_mut().chain(c.last_state.iter_mut())) {
        s.running = s.running.take().map(|_| serde_json::Value::Bool(true));
        for r in s.waiting.iter_mut().chain(s.terminated.iter_mut()) {
            if let Some(m) = r.message.as_mut().filter(|m| m.len() > MESSAGE_CAP) {
                let mut end = MESSAGE_CAP;
                while !m.is_char_boundary(end) {
                    end -= 1;
                }
                m.truncate(end);
                m.push('…');
            }
        }
    }
}

impl Pod {
    /// Its [`Facts`], computed on first use and kept ([`FactsMemo`]).
    pub fn facts(&self) -> &std::sync::Arc<Facts> {
        self.memo.0.get_or_init(|| std::sync::Arc::new(Facts::of(self)))
    }

    /// Decodes a pod as [`Pod::strip`] leaves it, skipping while reading what strip drops from a
    /// bound pod that is no device plugin — its conditions and its containers' states, two
    /// fifths of a running pod's JSON — instead of building them to drop them (the first list's
    /// decoding, 30,000 pods at 1,000 nodes, waits on this). The same pod as decoding whole then
    /// stripping; where `status` comes before `metadata` or `spec` (Kubernetes writes them in
    /// that order) it is read whole.
    pub fn from_json_stripped(bytes: &[u8]) -> serde_json::Result<Self> {
        let mut pod = serde_json::from_slice::<Stripped>(bytes)?.0;
        pod.strip();
        Ok(pod)
    }
}

/// A pod read by [`Pod::from_json_stripped`].
struct Stripped(Pod);

/// A pod's fields as [`Stripped`] reads them.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum PodField {
    Metadata,
    Spec,
    Status,
    #[serde(other)]
    Other,
}

/// Metadata read as [`Pod`] reads it.
struct LeanMeta(ObjectMeta);

impl<'de> Deserialize<'de> for LeanMeta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::meta::lean(d).map(Self)
    }
}

/// A bound pod's status without what [`Pod::strip`] drops (serde skips the fields not named).
/// `C` reads its containers' states: skipped (`IgnoredAny`) for a pod that is no GPU pod, kept
/// for a GPU pod.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BoundStatus<C> {
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    nominated_node_name: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "podIP")]
    pod_ip: Option<String>,
    #[serde(default)]
    start_time: Option<Time>,
    #[serde(default)]
    container_statuses: C,
    #[serde(default)]
    resource_claim_statuses: Vec<PodClaimStatus>,
    #[serde(default)]
    extended_resource_claim_status: Option<ExtendedClaimStatus>,
}

/// What [`BoundStatus`] keeps of the containers' states.
trait Kept {
    fn kept(self) -> Option<Vec<ContainerStatus>>;
}

impl Kept for serde::de::IgnoredAny {
    fn kept(self) -> Option<Vec<ContainerStatus>> {
        None
    }
}

impl Kept for Option<Vec<ContainerStatus>> {
    fn kept(self) -> Option<Vec<ContainerStatus>> {
        self
    }
}

impl<C: Kept> From<BoundStatus<C>> for PodStatus {
    fn from(b: BoundStatus<C>) -> Self {
        Self {
            phase: b.phase,
            nominated_node_name: b.nominated_node_name,
            reason: b.reason,
            message: b.message,
            pod_ip: b.pod_ip,
            start_time: b.start_time,
            resource_claim_statuses: b.resource_claim_statuses,
            extended_resource_claim_status: b.extended_resource_claim_status,
            conditions: None,
            container_statuses: b.container_statuses.kept(),
        }
    }
}

impl<'de> Deserialize<'de> for Stripped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Stripped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a pod")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Stripped, A::Error> {
                let mut pod = Pod::default();
                let (mut meta, mut spec) = (false, false);
                while let Some(k) = m.next_key::<PodField>()? {
                    match k {
                        PodField::Metadata => {
                            pod.metadata = m.next_value::<Option<LeanMeta>>()?.map(|l| l.0).unwrap_or_default();
                            meta = true;
                        }
                        PodField::Spec => {
                            pod.spec = m.next_value()?;
                            spec = true;
                        }
                        PodField::Status => {
                            let bound =
                                pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
                            pod.status = if meta && spec && bound && !pod.is_device_plugin() {
                                if pod.is_gpu() {
                                    type Gpu = BoundStatus<Option<Vec<ContainerStatus>>>;
                                    m.next_value::<Option<Gpu>>()?.map(PodStatus::from)
                                } else {
                                    m.next_value::<Option<BoundStatus<serde::de::IgnoredAny>>>()?.map(PodStatus::from)
                                }
                            } else {
                                m.next_value()?
                            };
                        }
                        PodField::Other => {
                            m.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(Stripped(pod))
            }
        }
        d.deserialize_map(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_kept_with_the_pod_but_are_not_part_of_it() {
        let json = br#"{"metadata": {"name": "a", "namespace": "ml"}, "spec": {"nodeName": "n", "containers": [
            {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2", "memory": "1Gi"}}}]}}"#;
        let pod = Pod::from_json_stripped(json).expect("pod");
        let plain = pod.clone();
        let facts = pod.facts().clone();
        assert!(std::sync::Arc::ptr_eq(&facts, pod.facts()), "computed once");
        assert_eq!(facts.requests.get("nvidia.com/gpu"), Some(&2000));
        assert_eq!(facts.memory_limit, (1 << 30, 0));
        // Equal whatever the memos hold, and not written out.
        assert_eq!(pod, plain);
        assert_eq!(serde_json::to_value(&pod).ok(), serde_json::to_value(&plain).ok());
        assert!(!serde_json::to_string(&pod).unwrap_or_default().contains("\"memo\""));
        // A copy starts without them: changed, it computes its own.
        let mut copy = pod.clone();
        assert!(format!("{:?}", copy.memo) == "FactsMemo" && format!("{:?}", pod.memo) == "FactsMemo(computed)");
        if let Some(c) = copy.spec.as_mut().and_then(|s| s.containers.first_mut()) {
            c.resources = None;
        }
        assert_eq!(copy.facts().requests.get("nvidia.com/gpu"), None);
        assert_eq!(pod.facts().requests.get("nvidia.com/gpu"), Some(&2000));
    }

    #[test]
    fn decodes_what_is_read_and_skips_the_rest() {
        let json = r#"{"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "<img src=x onerror=alert(1)>", "namespace": "ml", "uid": "u", "resourceVersion": "7",
                         "annotations": {"big": "x"}, "labels": {"app": "a"}},
            "spec": {"nodeName": "n1", "runtimeClassName": "nvidia", "schedulerName": "s",
                     "volumes": [{"name": "v", "emptyDir": {}}],
                     "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "B"}],
                                     "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                     "initContainers": [{"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
                     "overhead": {"memory": "64Mi"}, "nodeSelector": {"k": "v"},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                     "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}]}}}},
            "status": {"phase": "Pending", "reason": "R", "message": "M", "nominatedNodeName": "n2",
                       "containerStatuses": [{"name": "c", "ready": false, "restartCount": 0, "image": "i", "imageID": ""}],
                       "conditions": [{"type": "PodScheduled", "status": "False", "message": "0/1 nodes are available"}]}}"#;
        let p: Pod = serde_json::from_str(json).unwrap_or_default();
        assert_eq!(p.metadata.name.as_deref(), Some("<img src=x onerror=alert(1)>"));
        let s = p.spec.clone().unwrap_or_default();
        assert_eq!(s.node_name.as_deref(), Some("n1"));
        let limits = s.containers[0].resources.as_ref().and_then(|r| r.limits.clone()).unwrap_or_default();
        assert_eq!(limits.get("nvidia.com/gpu").map(|q| q.0.as_str()), Some("1"));
        assert_eq!(limits.iter().count(), 1);
        assert_eq!(s.init_containers.unwrap_or_default()[0].restart_policy.as_deref(), Some("Always"));
        assert_eq!(s.overhead.map(|o| o.len()), Some(1));
        assert_eq!(s.tolerations.map(|t| t.len()), Some(1));
        assert!(s.affinity.is_some_and(|a| a.node_affinity.is_some()));
        let st = p.status.clone().unwrap_or_default();
        assert_eq!(
            (st.phase.as_deref(), st.reason.as_deref(), st.nominated_node_name.as_deref()),
            (Some("Pending"), Some("R"), Some("n2"))
        );
        assert_eq!(st.conditions.map(|c| c[0].type_.clone()), Some("PodScheduled".into()));
        // The same through the full type and back.
        let full: k8s_openapi::api::core::v1::Pod = serde_json::from_str(json).unwrap_or_default();
        assert_eq!(Pod::from_full(&full), p);
    }

    #[test]
    fn resource_lists_read_and_write_as_objects_and_strip_keeps_what_is_read() {
        let json = r#"{"metadata": {"name": "a", "labels": {"x": "y"}, "annotations": {"z": "w"}},
            "spec": {"nodeName": "n", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi", "cpu": "2"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}"#;
        let mut p: Pod = serde_json::from_str(json).unwrap_or_default();
        let req = p
            .spec
            .as_ref()
            .and_then(|s| s.containers[0].resources.clone())
            .and_then(|r| r.requests)
            .unwrap_or_default();
        assert_eq!(req.get("cpu").map(|q| q.0.as_str()), Some("2"), "the last of a repeated key wins");
        assert_eq!(serde_json::to_value(&req).ok(), Some(serde_json::json!({"cpu": "2", "memory": "1Gi"})));
        p.strip();
        assert!(p.metadata.labels.is_none() && p.metadata.annotations.is_none());
        assert!(p.status.as_ref().is_some_and(|s| s.conditions.is_none() && s.phase.as_deref() == Some("Running")));
        // A pod waiting for the scheduler keeps its conditions: its reasons are read from them.
        let mut waiting: Pod = serde_json::from_str(
            r#"{"metadata": {"name": "w"}, "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}}"#,
        )
        .unwrap_or_default();
        waiting.strip();
        assert!(waiting.status.is_some_and(|s| s.conditions.is_some()));
    }

    #[test]
    fn a_malformed_pod_is_an_error_not_a_panic() {
        assert!(serde_json::from_str::<Pod>(r#"{"spec": {"containers": "no"}}"#).is_err());
        assert!(serde_json::from_str::<Pod>(r#"{"metadata": 3}"#).is_err());
    }

    #[test]
    fn a_pod_read_stripped_is_the_pod_read_whole_then_stripped() {
        let running = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p-0000-01", "namespace": "ns-1",
            "labels": {"app": "x"}, "annotations": {"a": "b"}, "resourceVersion": "6", "uid": "u1",
            "creationTimestamp": "2026-12-06T15:39:51Z"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}], "nodeName": "node-0000"},
            "status": {"conditions": [{"lastTransitionTime": "2026-12-06T15:39:51Z", "status": "True", "type": "Ready"}],
              "containerStatuses": [{"name": "c", "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2026-12-06T15:39:51Z"}}}],
              "phase": "Running", "podIP": "10.42.0.5", "reason": "r", "message": "m", "nominatedNodeName": "n",
              "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}]}}"#;
        let plugin = running.replace("p-0000-01", "nvidia-device-plugin-daemonset-x");
        let waiting = running.replace(r#", "nodeName": "node-0000""#, "");
        let agent = running.replace(r#""app": "x""#, r#""app.kubernetes.io/name": "gpudash-agent""#);
        // Status before spec: read whole, stripped after.
        let status_first = r#"{"status": {"phase": "Running", "conditions": [{"status": "True", "type": "Ready"}]},
            "metadata": {"name": "late"}, "spec": {"nodeName": "node-1", "containers": []}}"#;
        for json in [running, &plugin, &waiting, &agent, status_first, "{}", r#"{"metadata": null, "status": null}"#] {
            let mut whole: Pod = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
            whole.strip();
            let stripped = Pod::from_json_stripped(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"));
            assert_eq!(stripped, whole, "{json}");
        }
        let plugin = Pod::from_json_stripped(plugin.as_bytes()).ok();
        assert!(
            plugin.and_then(|p| p.status).and_then(|s| s.container_statuses).is_some(),
            "a device plugin keeps its states"
        );
        for bad in [r#"{"spec": {"containers": "no"}}"#, r#"{"metadata": 3}"#, "[]", r#"{"status": {"phase": 1}}"#] {
            assert!(Pod::from_json_stripped(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
