//! The on-site cases (`tests/scenarios/onsite/*.yaml`, objects as K3s clusters print them),
//! each derived alone: what the views and diagnoses say about it.

use gpudash_model::model::{ClusterView, Diagnosis, NodeView, Severity, Sharing, Source};

use crate::derive::tests::{load, scenario_text};
use crate::derive::{derive, Options};

/// A scenario file under `tests/scenarios/`, derived at 2026-11-30T12:00:00Z.
fn derived(rel: &str) -> ClusterView {
    let now = "2026-11-30T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    derive(&load(&scenario_text(rel)), &Options::default(), Source::default(), 1, now)
}

fn site(file: &str) -> ClusterView {
    derived(&format!("onsite/{file}"))
}

fn node<'a>(v: &'a ClusterView, name: &str) -> &'a NodeView {
    v.nodes.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("node {name}"))
}

pub(super) fn found<'a>(v: &'a ClusterView, code: &str, name: &str) -> &'a Diagnosis {
    v.diagnoses
        .iter()
        .find(|d| d.code == code && d.name == name)
        .unwrap_or_else(|| panic!("no {code} for {name} in {:#?}", v.diagnoses))
}

pub(super) fn codes(v: &ClusterView) -> Vec<(&str, &str)> {
    v.diagnoses.iter().map(|d| (d.code.as_str(), d.name.as_str())).collect()
}

#[test]
fn a_node_whose_k3s_default_runtime_is_nvidia_needs_no_runtimeclass() {
    let v = site("k3s-default-runtime.yaml");
    assert_eq!(node(&v, "orin-agx-dr").default_runtime.as_deref(), Some("nvidia"));
    assert_eq!(node(&v, "gpu-t4-rc").default_runtime, None);
    let warned: Vec<&str> =
        v.diagnoses.iter().filter(|d| d.code == "gpu-pod-without-runtimeclass").map(|d| d.name.as_str()).collect();
    // The runc-default server still warns; the default-runtime board and the CDI pod do not.
    assert_eq!(warned, vec!["asr-runc-6c7d8e9f0-p5q6r"], "{:?}", codes(&v));
}

#[test]
fn a_time_sliced_jetson_without_feature_discovery_has_one_gpu_of_four_replicas() {
    let v = site("jetson-timeslice-no-gfd.yaml");
    let g = &node(&v, "orin-nx-tsl").gpu_resources[0];
    assert_eq!(
        (g.sharing, g.physical_gpus, g.replicas_per_gpu, g.capacity, g.allocated),
        (Sharing::TimeSlicing, Some(1), 4, 4, 3)
    );
    assert!(g.placement_known, "one GPU: every replica is on it");
    let d = found(&v, "gpu-time-slice-contention", "orin-nx-tsl");
    assert!(d.message.starts_with("3 pods share 1 physical GPU"), "{}", d.message);
}

#[test]
fn a_gpu_count_that_cannot_be_known_is_null_not_capacity() {
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: x86}\nstatus: {capacity: {nvidia.com/gpu: \"4\"}, allocatable: {nvidia.com/gpu: \"4\"}, \
        conditions: [{type: Ready, status: \"True\"}]}\n";
    let v = derive(&load(yaml), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let g = &v.nodes[0].gpu_resources[0];
    assert_eq!((g.physical_gpus, g.capacity, g.placement_known), (None, 4, false));
}

#[test]
fn pods_using_the_gpu_through_the_runtime_are_shown_and_the_missing_plugin_is_a_warning() {
    let v = site("jetson-no-plugin.yaml");
    let n = node(&v, "orin-nano-np");
    let users: Vec<(&str, bool, &str)> =
        n.gpu_users_outside.iter().map(|u| (u.name.as_str(), u.sure, u.evidence.as_str())).collect();
    assert_eq!(
        users,
        vec![
            ("barcode-reader-5e4d3c2b1-q9w8e", true, "env"),
            ("people-counter-6d5c4b3a2-m7n8b", true, "runtime-class"),
            ("mqtt-bridge-4f3e2d1c0-z1x2c", false, "default-runtime"),
        ]
    );
    let d = found(&v, "gpu-used-outside-scheduler", "orin-nano-np");
    assert_eq!(d.severity, Severity::Warning);
    assert!(d.message.contains("2 use it for sure") && d.message.contains("1 may use it"), "{}", d.message);
    let plugin = found(&v, "device-plugin-missing", "orin-nano-np");
    assert_eq!(plugin.severity, Severity::Warning, "no GPU pod waits: {}", plugin.message);
    assert!(plugin.message.contains("2 pod(s) use its GPU"), "{}", plugin.message);
}

#[test]
fn a_gpu_out_of_service_is_drawn_out_and_the_waiting_pod_is_told_it_failed() {
    let v = site("gpu-unhealthy.yaml");
    let g = &node(&v, "gpu-l4-02").gpu_resources[0];
    assert_eq!((g.capacity, g.allocatable, g.allocated, g.out_of_service), (2, 1, 1, 1));
    let d = found(&v, "gpu-unhealthy", "gpu-l4-02");
    assert_eq!(d.severity, Severity::Critical);
    assert!(d.message.starts_with("1 of 2 nvidia.com/gpu on gpu-l4-02 are out of service"), "{}", d.message);
    assert!(d.message.contains("xid"), "{}", d.message);
    let p = found(&v, "insufficient-gpu", "vlm-caption-8d7c6b5a4-i8o9p");
    assert!(p.message.contains("the GPU it needs has failed"), "{}", p.message);
    assert!(!p.message.contains("free one"), "{}", p.message);
    let pending = &v.pending[0];
    assert!(pending.diagnoses.contains(&gpudash_model::model::Code::from("gpu-unhealthy")), "{:?}", pending.diagnoses);
    // The same on a Jetson (as GPU feature discovery labels an Orin): an integrated GPU has no Xid
    // bus and most JetPacks no nvidia-smi — the board's own tools are named instead.
    let text = scenario_text("onsite/gpu-unhealthy.yaml");
    let at = text.find("kubernetes.io/hostname: gpu-l4-02").expect("gpu-l4-02's labels");
    let jetson = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen("nvidia.com/gpu.product: NVIDIA-L4", "nvidia.com/gpu.product: Orin", 1)
    );
    let v = derive(&load(&jetson), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let d = found(&v, "gpu-unhealthy", "gpu-l4-02");
    assert!(
        d.message.contains("integrated GPU") && d.message.contains("tegrastats") && !d.message.contains("xid"),
        "{}",
        d.message
    );
}

#[test]
fn a_board_gone_dark_says_who_is_not_serving_and_when_they_are_evicted() {
    let v = site("jetson-dark.yaml");
    let n = node(&v, "orin-agx-dark");
    let down = n.down.clone().unwrap_or_default();
    assert_eq!(down.status, "Unknown");
    assert_eq!(down.since.as_deref(), Some("2026-11-30T02:14:07Z"));
    // The NoExecute taint's timeAdded + the pods' 300 s.
    assert_eq!(down.evict_at.as_deref(), Some("2026-11-30T02:19:12Z"));
    let holders = &n.gpu_resources[0].holders;
    assert_eq!(
        holders.iter().filter(|h| h.terminating).map(|h| h.name.as_str()).collect::<Vec<_>>(),
        vec!["drip-detector-4d3c2b1a0-z8l9k"]
    );
    let d = found(&v, "gpu-node-down", "orin-agx-dark");
    assert_eq!(d.severity, Severity::Critical);
    for part in [
        "has not reported since 2026-11-30T02:14:07Z",
        "3 pod(s)",
        "paint-inspector",
        "1 already Terminating",
        "02:19:12Z",
        "3 free nvidia.com/gpu for the 3 they hold",
    ] {
        assert!(d.message.contains(part), "{part:?} not in {}", d.message);
    }
    assert!(
        !v.diagnoses.iter().any(|d| d.code == "gpu-time-slice-contention" && d.name == "orin-agx-dark"),
        "{:?}",
        codes(&v)
    );
    assert!(node(&v, "orin-agx-spare").down.is_none());
}

#[test]
fn a_crash_looping_plugin_is_named_and_the_waiting_pod_is_told_to_fix_it() {
    let v = site("plugin-crashloop.yaml");
    let d = found(&v, "device-plugin-missing", "orin-nx-crash");
    assert_eq!(d.severity, Severity::Critical, "a GPU pod waits for it");
    for part in [
        "nvidia-device-plugin/nvdp-nvidia-device-plugin-m8r4t",
        "CrashLoopBackOff",
        "restarted 14 times",
        "last exit code 1, Error",
    ] {
        assert!(d.message.contains(part), "{part:?} not in {}", d.message);
    }
    let p = found(&v, "insufficient-gpu", "blade-wear-7e6d5c4b3-r2t3y");
    assert!(p.message.contains("device plugin") && p.message.contains("orin-nx-crash"), "{}", p.message);
    for wrong in ["free one", "free a replica", "time-slicing replicas"] {
        assert!(!p.message.contains(wrong), "{wrong:?} in {}", p.message);
    }
}

#[test]
fn a_pod_waiting_on_no_advertised_gpu_anywhere_is_pointed_at_the_plugin() {
    // The same board, and a pod that names no node: no node advertises the resource at all.
    let text = scenario_text("onsite/plugin-crashloop.yaml")
        .replace("nodeSelector: {factory.example.com/line: cut-7}", "nodeSelector: {}");
    let v = derive(&load(&text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let p = found(&v, "insufficient-gpu", "blade-wear-7e6d5c4b3-r2t3y");
    assert!(p.message.contains("which no node it can go to advertises at all"), "{}", p.message);
    assert!(p.message.contains("missing or failing on orin-nx-crash"), "{}", p.message);
    assert!(v.pending[0].diagnoses.contains(&gpudash_model::model::Code::from("device-plugin-missing")));
}

#[test]
fn a_model_waiting_for_board_memory_gets_the_numbers_and_the_free_replica() {
    let v = site("orin-nano-memory.yaml");
    let d = found(&v, "insufficient-memory", "pack-counter-5d4c3b2a1-p6a7s");
    assert_eq!(d.severity, Severity::Critical);
    for part in [
        "orin-nano-mem shares 7.4 GiB",
        "request 5.0 GiB",
        "asks 3.0 GiB",
        "A nvidia.com/gpu unit is free there",
        "Lower the other models' memory requests",
    ] {
        assert!(d.message.contains(part), "{part:?} not in {}", d.message);
    }
    assert!(v.pending[0].diagnoses.contains(&gpudash_model::model::Code::from("insufficient-memory")));
}

#[test]
fn a_device_plugin_pod_state_reads_as_words() {
    let pod: crate::pod::Pod = serde_yaml::from_str(
        "metadata: {name: nvidia-device-plugin-daemonset-x, namespace: gpu-operator}\nstatus: {phase: Running, containerStatuses: [{name: c, ready: \
            true, restartCount: 0, state: {running: {}}}]}\n",
    )
    .unwrap_or_default();
    assert_eq!(super::nodes::plugin_state(&pod), None, "running and ready is healthy");
    let pending: crate::pod::Pod = serde_yaml::from_str(
        "metadata: {name: nvidia-device-plugin-daemonset-y, namespace: gpu-operator}\nstatus: {phase: Pending}\n",
    )
    .unwrap_or_default();
    assert_eq!(
        super::nodes::plugin_state(&pending).as_deref(),
        Some("its device-plugin pod gpu-operator/nvidia-device-plugin-daemonset-y is Pending")
    );
}

fn quota_site(file: &str) -> ClusterView {
    derived(&format!("quota/{file}"))
}

#[test]
fn a_deployment_a_quota_refuses_while_replicas_are_free_is_shown_beside_pending_pods() {
    let v = quota_site("deployment-blocked.yaml");
    let gpu: Vec<_> = v
        .quotas
        .iter()
        .map(|q| (q.namespace.as_str(), q.resource.as_str(), q.hard, q.used, q.full, q.cluster_free))
        .collect();
    assert_eq!(
        gpu,
        vec![("team-a", "requests.nvidia.com/gpu", 1, 1, true, Some(2))],
        "limits.memory is not a GPU entry"
    );
    assert_eq!(v.quotas[0].pods, vec!["team-workload-7c9d8f6b5-m4n8p"]);
    assert!(v.pending.is_empty(), "no pod exists to be Pending");
    assert_eq!(v.blocked.len(), 1);
    let b = &v.blocked[0];
    assert_eq!(
        (b.workload.as_deref(), b.name.as_str(), b.gpu_request.as_ref().map(|g| g.count)),
        (Some("ReplicaSet"), "team-workload-7c9d8f6b5", Some(1))
    );
    assert_eq!(b.reasons[0].reason, "exceeded quota: gpu-quota");
    let d = found(&v, "gpu-quota-exhausted", "team-workload-7c9d8f6b5");
    assert_eq!(
        (d.severity, d.kind.as_str(), d.link.as_deref()),
        (Severity::Critical, "ReplicaSet", Some("/pending#pod-team-a-team-workload-7c9d8f6b5"))
    );
    for part in [
        "allows team-a 1 of requests.nvidia.com/gpu and 1 are in use",
        "held by team-workload-7c9d8f6b5-m4n8p",
        "The cluster has 2 free nvidia.com/gpu: only the quota stands in the way",
        "edit resourcequota gpu-quota",
    ] {
        assert!(d.message.contains(part), "{part:?} not in {}", d.message);
    }
    assert_eq!(v.totals.blocked, 1);
}

#[test]
fn a_workload_that_got_its_pods_or_a_quota_with_room_is_not_blocked() {
    let text = scenario_text("quota/deployment-blocked.yaml");
    let raised = text.replace(
        "hard: {requests.nvidia.com/gpu: \"1\", limits.memory: 48Gi}\n    used:",
        "hard: {requests.nvidia.com/gpu: \"2\", limits.memory: 48Gi}\n    used:",
    );
    assert_ne!(raised, text);
    let v = derive(&load(&raised), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert!(v.blocked.is_empty(), "the quota now has room: {:?}", v.blocked);
    let complete = text.replace("  status:\n    replicas: 1\n", "  status:\n    replicas: 2\n");
    assert_ne!(complete, text);
    let v = derive(&load(&complete), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert!(v.blocked.is_empty(), "the ReplicaSet has its pods");
}

#[test]
fn a_scoped_quota_blocks_a_job_and_names_its_scope() {
    let v = quota_site("scoped-job-blocked.yaml");
    assert_eq!(v.quotas[0].scopes, vec!["PriorityClass In (high)"]);
    assert_eq!(v.quotas[0].cluster_free, Some(1));
    let d = found(&v, "gpu-quota-exhausted", "train-nightly-29013120");
    assert_eq!(d.kind.as_str(), "Job");
    assert!(
        d.message.contains("(scoped: PriorityClass In (high))")
            && d.message.contains("2 of requests.nvidia.com/gpu and 2 are in use"),
        "{}",
        d.message
    );
}

#[test]
fn a_device_class_quota_is_listed_as_such() {
    let v = quota_site("device-class.yaml");
    let q = &v.quotas;
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(
        (q[0].gpu_resource.as_str(), q[0].device_class, q[0].full, q[0].cluster_free),
        ("gpu.nvidia.com", true, true, None)
    );
}

/// The NVIDIA device plugin's pod on `node`, as its Helm chart names it: a list item.
pub(super) fn plugin_pod(suffix: &str, node: &str) -> String {
    format!(
        r#"- apiVersion: v1
  kind: Pod
  metadata:
    name: nvdp-nvidia-device-plugin-{suffix}
    namespace: nvidia-device-plugin
    labels: {{app.kubernetes.io/instance: nvdp, app.kubernetes.io/name: nvidia-device-plugin}}
  spec: {{nodeName: {node}, containers: [{{name: nvidia-device-plugin-ctr, image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}}]}}
  status: {{phase: Running}}"#
    )
}

/// One Orin Nano whose GPU a terminating pod holds, and a model waiting for it; the holder's
/// deletion asked at `deleted` with a 30 s grace period, its node Ready or not, with finalizers.
fn terminating(ready: bool, finalizers: &str) -> String {
    let ready = if ready { "True" } else { "Unknown" };
    format!(
        r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {{name: orin-nano-busy, labels: {{kubernetes.io/arch: arm64, kubernetes.io/hostname: orin-nano-busy}}}}
  spec: {{podCIDR: 10.42.3.0/24, providerID: k3s://orin-nano-busy}}
  status:
    capacity: {{cpu: "6", memory: 7802852Ki, nvidia.com/gpu: "1", pods: "110"}}
    allocatable: {{cpu: "6", memory: 7802852Ki, nvidia.com/gpu: "1", pods: "110"}}
    conditions: [{{type: Ready, status: "{ready}", reason: KubeletReady, message: kubelet is posting ready status}}]
{plugin}
- apiVersion: v1
  kind: Pod
  metadata: {{name: old-model, namespace: vision, creationTimestamp: "2026-11-30T09:00:00Z", deletionTimestamp: "2026-11-30T11:50:30Z", deletionGracePeriodSeconds: 30, finalizers: {finalizers}}}
  spec: {{nodeName: orin-nano-busy, runtimeClassName: nvidia, containers: [{{name: m, image: "tritonserver:24.08", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]}}
  status: {{phase: Running}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: next-model-6f7d8c9b5-x2v4n, namespace: vision, creationTimestamp: "2026-11-30T11:50:00Z"}}
  spec: {{runtimeClassName: nvidia, schedulerName: default-scheduler, containers: [{{name: m, image: "tritonserver:24.09", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]}}
  status:
    phase: Pending
    conditions: [{{type: PodScheduled, status: "False", reason: Unschedulable, lastTransitionTime: "2026-11-30T11:50:01Z", message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."}}]
"#,
        plugin = plugin_pod("k2j4h", "orin-nano-busy")
    )
}

#[test]
fn a_terminating_holder_is_waited_for_and_past_its_grace_period_its_cause_is_named() {
    let at = |t: &str| t.parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    // Within its grace period: the waiting pod is told to wait for it, nothing more.
    let v =
        derive(&load(&terminating(true, "[]")), &Options::default(), Source::default(), 1, at("2026-11-30T11:50:20Z"));
    let d = found(&v, "insufficient-gpu", "next-model-6f7d8c9b5-x2v4n");
    assert!(
        d.message.en.contains("vision/old-model")
            && d.message.en.contains("deleting since 2026-11-30T11:50:00Z, grace 30 s"),
        "{}",
        d.message.en
    );
    assert!(!d.message.en.contains("scale down"), "{}", d.message.en);
    assert!(!v.diagnoses.iter().any(|d| d.code == "gpu-held-by-terminating-pod"), "{:?}", codes(&v));
    // Ten minutes on, its node NotReady: the node is named as the cause.
    let v =
        derive(&load(&terminating(false, "[]")), &Options::default(), Source::default(), 1, at("2026-11-30T12:00:30Z"));
    let d = found(&v, "gpu-held-by-terminating-pod", "old-model");
    assert_eq!(d.severity, Severity::Warning);
    assert!(
        d.message.en.contains("10 min past its 30 s grace period") && d.message.en.contains("NotReady"),
        "{}",
        d.message.en
    );
    // Ready node, a finalizer: the finalizer is named, with the patch that removes it.
    let v = derive(
        &load(&terminating(true, "[factory.example.com/drain-queue]")),
        &Options::default(),
        Source::default(),
        1,
        at("2026-11-30T12:00:30Z"),
    );
    let d = found(&v, "gpu-held-by-terminating-pod", "old-model");
    assert!(
        d.message.en.contains("factory.example.com/drain-queue") && d.message.en.contains("finalizers\":null"),
        "{}",
        d.message.en
    );
    assert!(d.message.ja.contains("finalizer"), "{}", d.message.ja);
    let w = found(&v, "insufficient-gpu", "next-model-6f7d8c9b5-x2v4n");
    assert!(w.message.en.contains("past its grace period"), "{}", w.message.en);
}

/// One board advertising `resource` (cordoned or not) and a model asking for `nvidia.com/gpu`
/// that the scheduler refused with `message`.
fn one_board(resource: &str, cordoned: bool, message: &str) -> String {
    let spec = if cordoned {
        r#"{unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule, timeAdded: "2026-11-29T17:42:10Z"}]}"#
    } else {
        "{}"
    };
    format!(
        r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {{name: orin-nx-01, labels: {{kubernetes.io/arch: arm64, kubernetes.io/hostname: orin-nx-01, nvidia.com/gpu.present: "true"}}}}
  spec: {spec}
  status:
    capacity: {{cpu: "8", memory: 15755428Ki, {resource}: "4", pods: "110"}}
    allocatable: {{cpu: "8", memory: 15755428Ki, {resource}: "4", pods: "110"}}
    conditions: [{{type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status}}]
{plugin}
- apiVersion: v1
  kind: Pod
  metadata: {{name: sorter-5d6c7b8a9-k3m4n, namespace: vision, creationTimestamp: "2026-11-30T11:00:00Z"}}
  spec: {{runtimeClassName: nvidia, schedulerName: default-scheduler, containers: [{{name: m, image: "tritonserver:24.08", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]}}
  status:
    phase: Pending
    conditions: [{{type: PodScheduled, status: "False", reason: Unschedulable, lastTransitionTime: "2026-11-30T11:00:01Z", message: "{message}"}}]
"#,
        plugin = plugin_pod("7x9kq", "orin-nx-01")
    )
}

#[test]
fn a_renamed_shared_resource_is_a_name_mismatch_not_a_missing_plugin() {
    let msg = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.";
    let v = derived_text(&one_board("nvidia.com/gpu.shared", false, msg));
    let d = found(&v, "gpu-resource-name-mismatch", "sorter-5d6c7b8a9-k3m4n");
    for part in [
        "nvidia.com/gpu.shared",
        "orin-nx-01",
        "renameByDefault: true",
        "from nvidia.com/gpu: 1 to nvidia.com/gpu.shared: 1",
    ] {
        assert!(d.message.en.contains(part), "{part:?} not in {}", d.message.en);
    }
    assert!(
        !v.diagnoses.iter().any(|d| d.code == "device-plugin-missing" || d.code == "insufficient-gpu"),
        "{:?}",
        codes(&v)
    );
    assert_eq!(v.pending[0].diagnoses, vec![gpudash_model::model::Code::from("gpu-resource-name-mismatch")]);
    // The same board advertising nvidia.com/gpu: an ordinary wait, no mismatch.
    let v = derived_text(&one_board("nvidia.com/gpu", false, msg));
    assert!(!v.diagnoses.iter().any(|d| d.code == "gpu-resource-name-mismatch"), "{:?}", codes(&v));
}

#[test]
fn a_cordoned_board_is_named_with_the_uncordon_command() {
    let msg = "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    let v = derived_text(&one_board("nvidia.com/gpu", true, msg));
    let d = found(&v, "gpu-node-cordoned", "sorter-5d6c7b8a9-k3m4n");
    for part in ["orin-nx-01", "since 2026-11-29T17:42:10Z", "kubectl uncordon orin-nx-01"] {
        assert!(d.message.en.contains(part), "{part:?} not in {}", d.message.en);
    }
    assert!(d.message.ja.contains("kubectl uncordon orin-nx-01"), "{}", d.message.ja);
    assert_eq!(v.pending[0].diagnoses, vec![gpudash_model::model::Code::from("gpu-node-cordoned")], "{:?}", codes(&v));
}

pub(super) fn derived_text(yaml: &str) -> ClusterView {
    let now = "2026-11-30T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    derive(&load(yaml), &Options::default(), Source::default(), 1, now)
}

/// A one-replica model on a one-GPU Orin NX mid-update: the old ReplicaSet's pod holds the GPU,
/// the new one's pod waits (as the Deployment controller and scheduler leave them).
pub(super) fn rollout(gpus: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {{name: orin-nx-pack, labels: {{kubernetes.io/arch: arm64, kubernetes.io/hostname: orin-nx-pack, nvidia.com/gpu.present: "true"}}}}
  status:
    capacity: {{cpu: "8", memory: 15755428Ki, nvidia.com/gpu: "{gpus}", pods: "110"}}
    allocatable: {{cpu: "8", memory: 15755428Ki, nvidia.com/gpu: "{gpus}", pods: "110"}}
    conditions: [{{type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status}}]
{plugin}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: ocr-model-7c9f8d6b5
    namespace: vision
    annotations: {{deployment.kubernetes.io/desired-replicas: "1", deployment.kubernetes.io/max-replicas: "2", deployment.kubernetes.io/revision: "1"}}
    ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: ocr-model, uid: 5f1d2c3b-4a59-4e68-9d7c-0b1a2f3e4d5c, controller: true, blockOwnerDeletion: true}}]
  spec: {{replicas: 1, selector: {{matchLabels: {{app: ocr-model}}}}}}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: ocr-model-5b8c7d9f4
    namespace: vision
    annotations: {{deployment.kubernetes.io/desired-replicas: "1", deployment.kubernetes.io/max-replicas: "2", deployment.kubernetes.io/revision: "2"}}
    ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: ocr-model, uid: 5f1d2c3b-4a59-4e68-9d7c-0b1a2f3e4d5c, controller: true, blockOwnerDeletion: true}}]
  spec: {{replicas: 1, selector: {{matchLabels: {{app: ocr-model}}}}}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: ocr-model-7c9f8d6b5-h8j9k
    namespace: vision
    creationTimestamp: "2026-11-30T08:00:00Z"
    ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: ocr-model-7c9f8d6b5, uid: 0a1b2c3d-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}}]
  spec: {{nodeName: orin-nx-pack, runtimeClassName: nvidia, containers: [{{name: m, image: "tritonserver:24.08", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]}}
  status: {{phase: Running}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: ocr-model-5b8c7d9f4-m2n3p
    namespace: vision
    creationTimestamp: "2026-11-30T11:45:00Z"
    ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: ocr-model-5b8c7d9f4, uid: 0a1b2c3d-0000-4000-8000-000000000002, controller: true, blockOwnerDeletion: true}}]
  spec: {{runtimeClassName: nvidia, schedulerName: default-scheduler, containers: [{{name: m, image: "tritonserver:24.09", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]}}
  status:
    phase: Pending
    conditions: [{{type: PodScheduled, status: "False", reason: Unschedulable, lastTransitionTime: "2026-11-30T11:45:01Z", message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."}}]
"#,
        plugin = plugin_pod("p2q3r", "orin-nx-pack")
    )
}

#[test]
fn a_rolling_update_waiting_for_its_own_old_pods_gpu_is_a_deadlock_unless_a_unit_is_free() {
    let v = derived_text(&rollout("1"));
    let d = found(&v, "gpu-rollout-deadlock", "ocr-model");
    assert_eq!(
        (d.kind.as_str(), d.severity, d.namespace.as_deref()),
        ("Deployment", Severity::Critical, Some("vision"))
    );
    for part in [
        "ocr-model-7c9f8d6b5-h8j9k",
        "ReplicaSet ocr-model-5b8c7d9f4, revision 2",
        "maxSurge 1",
        "waited 15 min",
        "Recreate",
        "\"maxSurge\":0,\"maxUnavailable\":1",
    ] {
        assert!(d.message.en.contains(part), "{part:?} not in {}", d.message.en);
    }
    assert!(d.message.ja.contains("Recreate"), "{}", d.message.ja);
    let w = found(&v, "insufficient-gpu", "ocr-model-5b8c7d9f4-m2n3p");
    assert!(
        w.message.en.contains("its own Deployment") && !w.message.en.contains("scale down a pod"),
        "{}",
        w.message.en
    );
    assert!(v.pending[0].diagnoses.contains(&gpudash_model::model::Code::from("gpu-rollout-deadlock")));
    // A second GPU on the board, free: the new pod will be placed; nothing to say.
    let v = derived_text(&rollout("2"));
    assert!(!v.diagnoses.iter().any(|d| d.code == "gpu-rollout-deadlock"), "{:?}", codes(&v));
}

#[test]
fn limits_beyond_a_board_say_what_its_models_really_hold_where_the_agent_reads_it() {
    let mut v = NodeView { name: "orin-nx-02".into(), unified_memory: true, ..NodeView::default() };
    v.memory.board_bytes = 16 << 30;
    v.memory.limits_bytes = 18 << 30;
    v.memory.overcommit_bytes = 2 << 30;
    let mut out = Vec::new();
    super::nodes::unified_memory_overcommit(&v, &mut out);
    assert!(!out[0].message.en.contains("GPU memory now"), "nothing measured, nothing said: {}", out[0].message.en);
    v.memory.split = Some(gpudash_model::model::BoardSplit {
        total_bytes: 16 << 30,
        gpu_pods_bytes: 5 << 30,
        free_bytes: 3 << 30,
        ..gpudash_model::model::BoardSplit::default()
    });
    let mut out = Vec::new();
    super::nodes::unified_memory_overcommit(&v, &mut out);
    let m = &out[0].message;
    assert!(
        m.en.ends_with(
            "Its models hold 5.0 GiB of GPU memory now (not counted in any limit); 3.0 GiB of the board is free."
        ),
        "{}",
        m.en
    );
    assert!(m.ja.contains("GPU メモリを 5.0 GiB"), "{}", m.ja);
}

#[test]
fn a_model_waiting_for_board_memory_hears_what_the_board_really_has_where_the_agent_reads_it() {
    let mut inputs = load(&scenario_text("onsite/orin-nano-memory.yaml"));
    let report = r#"{"version":1,"node":"orin-nano-mem","generated_at":0,
      "tegrastats":{"value":{"ram_used_bytes":6442450944,"ram_total_bytes":7990149120},"seen_at":0,"error":null},
      "gpu_memory":{"value":{"source":"nvmap","pods":[],"outside_bytes":0,"outside":[],"total_bytes":0},"seen_at":0,"error":null}}"#;
    inputs.agents = vec![std::sync::Arc::new(crate::agent::AgentSeen {
        node: "orin-nano-mem".into(),
        pod: "gpudash/gpudash-agent-orin-nano-mem".into(),
        report: Some(crate::agent::parse(report.as_bytes()).unwrap()),
        last_ok: "2026-11-30T12:00:00Z".parse().ok(),
        error: None,
    })];
    let now = "2026-11-30T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let v = derive(&inputs, &Options::default(), Source::default(), 1, now);
    let d = found(&v, "insufficient-memory", "pack-counter-5d4c3b2a1-p6a7s");
    assert!(d.message.contains("of GPU memory besides; 1.4 GiB of the board is really free"), "{}", d.message);
}

#[test]
fn the_nodes_own_diagnoses_merged_in_are_ordered_as_one_stable_sort_of_all() {
    use gpudash_model::model::{Code, Kind};
    use std::sync::Arc;
    let d = |severity: Severity, code: Code, kind: Kind, ns: Option<&str>, name: &str, text: &str| {
        Arc::new(Diagnosis {
            message: gpudash_model::i18n::Said::same(text.to_string()),
            ..super::diag(code, severity, kind, ns, name, gpudash_model::i18n::Said::default())
        })
    };
    let found = vec![
        d(Severity::Warning, Code::GpuUsedOutsideScheduler, Kind::Node, None, "b", "found, tie with own b"),
        d(Severity::Critical, Code::InsufficientGpu, Kind::Pod, Some("ml"), "m-1", "critical pod"),
        d(Severity::Info, Code::GpuTimeSliceContention, Kind::Node, None, "a", "found info"),
        d(Severity::Warning, Code::DevicePluginMissing, Kind::Node, None, "c", "plugin"),
    ];
    // Node by node (a, b, c), as the views give them.
    let own = vec![
        d(Severity::Warning, Code::GpuUsedOutsideScheduler, Kind::Node, None, "a", "own a"),
        d(Severity::Info, Code::GpuTimeSliceContention, Kind::Node, None, "a", "own a info"),
        d(Severity::Warning, Code::UnifiedMemoryOvercommit, Kind::Node, None, "b", "own b memory"),
        d(Severity::Warning, Code::GpuUsedOutsideScheduler, Kind::Node, None, "b", "own b"),
        d(Severity::Warning, Code::GpuUsedOutsideScheduler, Kind::Node, None, "c", "own c"),
    ];
    let mut whole: Vec<Arc<Diagnosis>> = found.iter().chain(&own).cloned().collect();
    whole.sort_by(|a, b| super::order(a, b));
    let text = |v: &[Arc<Diagnosis>]| v.iter().map(|d| d.message.en.to_string()).collect::<Vec<_>>();
    let merged = super::in_order(found.clone(), own.clone());
    assert_eq!(text(&merged), text(&whole));
    assert_eq!(text(&merged)[..3], ["critical pod", "plugin", "own a"]);
    // Views that do not come node by node are sorted whole.
    let shuffled: Vec<Arc<Diagnosis>> = own.iter().rev().cloned().collect();
    let mut whole: Vec<Arc<Diagnosis>> = found.iter().chain(&shuffled).cloned().collect();
    whole.sort_by(|a, b| super::order(a, b));
    assert_eq!(text(&super::in_order(found, shuffled)), text(&whole));
}
