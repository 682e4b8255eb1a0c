//! The wire messages: only the fields gpudash reads, with Kubernetes' field numbers (from
//! `k8s.io/api/core/v1/generated.proto` and apimachinery's, v0.36). Plain strings and numbers
//! where Kubernetes writes them always; `optional` where it writes them only when set.

use std::collections::BTreeMap;

#[derive(Clone, PartialEq, prost::Message)]
pub struct Unknown {
    #[prost(message, optional, tag = "1")]
    pub type_meta: Option<TypeMeta>,
    #[prost(bytes = "bytes", tag = "2")]
    pub raw: bytes::Bytes,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeMeta {
    #[prost(string, tag = "1")]
    pub api_version: String,
    #[prost(string, tag = "2")]
    pub kind: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ListMeta {
    #[prost(string, tag = "2")]
    pub resource_version: String,
    #[prost(string, tag = "3")]
    pub continue_: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Status {
    #[prost(string, tag = "3")]
    pub message: String,
    #[prost(string, tag = "4")]
    pub reason: String,
    #[prost(int32, tag = "6")]
    pub code: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Time {
    #[prost(int64, optional, tag = "1")]
    pub seconds: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Quantity {
    #[prost(string, tag = "1")]
    pub string: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OwnerReference {
    #[prost(string, tag = "1")]
    pub kind: String,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub uid: String,
    #[prost(string, tag = "5")]
    pub api_version: String,
    #[prost(bool, optional, tag = "6")]
    pub controller: Option<bool>,
    #[prost(bool, optional, tag = "7")]
    pub block_owner_deletion: Option<bool>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ObjectMeta {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub generate_name: String,
    #[prost(string, tag = "3")]
    pub namespace: String,
    #[prost(string, tag = "5")]
    pub uid: String,
    #[prost(string, tag = "6")]
    pub resource_version: String,
    #[prost(int64, tag = "7")]
    pub generation: i64,
    #[prost(message, optional, tag = "8")]
    pub creation_timestamp: Option<Time>,
    #[prost(message, optional, tag = "9")]
    pub deletion_timestamp: Option<Time>,
    #[prost(int64, optional, tag = "10")]
    pub deletion_grace_period_seconds: Option<i64>,
    #[prost(btree_map = "string, string", tag = "11")]
    pub labels: BTreeMap<String, String>,
    #[prost(btree_map = "string, string", tag = "12")]
    pub annotations: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "13")]
    pub owner_references: Vec<OwnerReference>,
    #[prost(string, repeated, tag = "14")]
    pub finalizers: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Pod {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub spec: Option<PodSpec>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<PodStatus>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PodSpec {
    #[prost(message, repeated, tag = "2")]
    pub containers: Vec<Container>,
    #[prost(btree_map = "string, string", tag = "7")]
    pub node_selector: BTreeMap<String, String>,
    #[prost(string, tag = "10")]
    pub node_name: String,
    #[prost(message, optional, tag = "18")]
    pub affinity: Option<Affinity>,
    #[prost(string, tag = "19")]
    pub scheduler_name: String,
    #[prost(message, repeated, tag = "20")]
    pub init_containers: Vec<Container>,
    #[prost(message, repeated, tag = "22")]
    pub tolerations: Vec<Toleration>,
    #[prost(string, tag = "24")]
    pub priority_class_name: String,
    #[prost(string, optional, tag = "29")]
    pub runtime_class_name: Option<String>,
    #[prost(btree_map = "string, message", tag = "32")]
    pub overhead: BTreeMap<String, Quantity>,
    #[prost(message, repeated, tag = "39")]
    pub resource_claims: Vec<PodResourceClaim>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Container {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "6")]
    pub ports: Vec<ContainerPort>,
    #[prost(message, repeated, tag = "7")]
    pub env: Vec<EnvVar>,
    #[prost(message, optional, tag = "8")]
    pub resources: Option<ResourceRequirements>,
    #[prost(string, optional, tag = "24")]
    pub restart_policy: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerPort {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int32, tag = "3")]
    pub container_port: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EnvVar {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceRequirements {
    #[prost(btree_map = "string, message", tag = "1")]
    pub limits: BTreeMap<String, Quantity>,
    #[prost(btree_map = "string, message", tag = "2")]
    pub requests: BTreeMap<String, Quantity>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Toleration {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub operator: String,
    #[prost(string, tag = "3")]
    pub value: String,
    #[prost(string, tag = "4")]
    pub effect: String,
    #[prost(int64, optional, tag = "5")]
    pub toleration_seconds: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Affinity {
    #[prost(message, optional, tag = "1")]
    pub node_affinity: Option<NodeAffinity>,
    #[prost(message, optional, tag = "2")]
    pub pod_affinity: Option<PodAffinity>,
    #[prost(message, optional, tag = "3")]
    pub pod_anti_affinity: Option<PodAffinity>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeAffinity {
    #[prost(message, optional, tag = "1")]
    pub required: Option<NodeSelector>,
    #[prost(message, repeated, tag = "2")]
    pub preferred: Vec<PreferredSchedulingTerm>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeSelector {
    #[prost(message, repeated, tag = "1")]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeSelectorTerm {
    #[prost(message, repeated, tag = "1")]
    pub match_expressions: Vec<Requirement>,
    #[prost(message, repeated, tag = "2")]
    pub match_fields: Vec<Requirement>,
}

/// `NodeSelectorRequirement` and `LabelSelectorRequirement` (the same three fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Requirement {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub operator: String,
    #[prost(string, repeated, tag = "3")]
    pub values: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PreferredSchedulingTerm {
    #[prost(int32, tag = "1")]
    pub weight: i32,
    #[prost(message, optional, tag = "2")]
    pub preference: Option<NodeSelectorTerm>,
}

/// `PodAffinity` and `PodAntiAffinity` (the same two fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PodAffinity {
    #[prost(message, repeated, tag = "1")]
    pub required: Vec<PodAffinityTerm>,
    #[prost(message, repeated, tag = "2")]
    pub preferred: Vec<WeightedPodAffinityTerm>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PodAffinityTerm {
    #[prost(message, optional, tag = "1")]
    pub label_selector: Option<LabelSelector>,
    #[prost(string, repeated, tag = "2")]
    pub namespaces: Vec<String>,
    #[prost(string, tag = "3")]
    pub topology_key: String,
    #[prost(message, optional, tag = "4")]
    pub namespace_selector: Option<LabelSelector>,
    #[prost(string, repeated, tag = "5")]
    pub match_label_keys: Vec<String>,
    #[prost(string, repeated, tag = "6")]
    pub mismatch_label_keys: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct WeightedPodAffinityTerm {
    #[prost(int32, tag = "1")]
    pub weight: i32,
    #[prost(message, optional, tag = "2")]
    pub term: Option<PodAffinityTerm>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct LabelSelector {
    #[prost(btree_map = "string, string", tag = "1")]
    pub match_labels: BTreeMap<String, String>,
    #[prost(message, repeated, tag = "2")]
    pub match_expressions: Vec<Requirement>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PodResourceClaim {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, optional, tag = "3")]
    pub resource_claim_name: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub resource_claim_template_name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PodStatus {
    #[prost(string, tag = "1")]
    pub phase: String,
    #[prost(message, repeated, tag = "2")]
    pub conditions: Vec<PodCondition>,
    #[prost(string, tag = "3")]
    pub message: String,
    #[prost(string, tag = "4")]
    pub reason: String,
    #[prost(string, tag = "6")]
    pub pod_ip: String,
    #[prost(message, optional, tag = "7")]
    pub start_time: Option<Time>,
    #[prost(message, repeated, tag = "8")]
    pub container_statuses: Vec<ContainerStatus>,
    #[prost(string, tag = "11")]
    pub nominated_node_name: String,
    #[prost(message, repeated, tag = "15")]
    pub resource_claim_statuses: Vec<PodResourceClaimStatus>,
    #[prost(message, optional, tag = "18")]
    pub extended_resource_claim_status: Option<ExtendedClaimStatus>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PodCondition {
    #[prost(string, tag = "1")]
    pub type_: String,
    #[prost(string, tag = "2")]
    pub status: String,
    #[prost(message, optional, tag = "3")]
    pub last_probe_time: Option<Time>,
    #[prost(message, optional, tag = "4")]
    pub last_transition_time: Option<Time>,
    #[prost(string, tag = "5")]
    pub reason: String,
    #[prost(string, tag = "6")]
    pub message: String,
    #[prost(int64, tag = "7")]
    pub observed_generation: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PodResourceClaimStatus {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, optional, tag = "2")]
    pub resource_claim_name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ExtendedClaimStatus {
    #[prost(message, repeated, tag = "1")]
    pub request_mappings: Vec<RequestMapping>,
    #[prost(string, tag = "2")]
    pub resource_claim_name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RequestMapping {
    #[prost(string, tag = "1")]
    pub container_name: String,
    #[prost(string, tag = "2")]
    pub resource_name: String,
    #[prost(string, tag = "3")]
    pub request_name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerStatus {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub state: Option<ContainerState>,
    #[prost(message, optional, tag = "3")]
    pub last_state: Option<ContainerState>,
    #[prost(bool, tag = "4")]
    pub ready: bool,
    #[prost(int32, tag = "5")]
    pub restart_count: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerState {
    #[prost(message, optional, tag = "1")]
    pub waiting: Option<Waiting>,
    #[prost(message, optional, tag = "2")]
    pub running: Option<Running>,
    #[prost(message, optional, tag = "3")]
    pub terminated: Option<Terminated>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Waiting {
    #[prost(string, tag = "1")]
    pub reason: String,
    #[prost(string, tag = "2")]
    pub message: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Running {
    #[prost(message, optional, tag = "1")]
    pub started_at: Option<Time>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Terminated {
    #[prost(int32, tag = "1")]
    pub exit_code: i32,
    #[prost(string, tag = "3")]
    pub reason: String,
    #[prost(string, tag = "4")]
    pub message: String,
    #[prost(message, optional, tag = "6")]
    pub finished_at: Option<Time>,
}
