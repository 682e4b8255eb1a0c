//! `gpu-rollout-deadlock` with the workload objects watched: the Deployment's strategy (as
//! written and as the controller rounds it), Recreate and maxUnavailable that free a unit, the
//! progress deadline, and a DaemonSet updated with maxSurge.

use super::tests::{codes, derived_text, found, plugin_pod, rollout};
use gpudash_model::model::Severity;

const UID: &str = "5f1d2c3b-4a59-4e68-9d7c-0b1a2f3e4d5c";

/// The Deployment object of [`rollout`]'s model, with this strategy and status.
fn deployment(strategy: &str, status: &str) -> String {
    format!(
        r#"- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: ocr-model, namespace: vision, uid: {UID}, generation: 2, annotations: {{deployment.kubernetes.io/revision: "2"}}}}
  spec: {{replicas: 1, progressDeadlineSeconds: 600, revisionHistoryLimit: 10, selector: {{matchLabels: {{app: ocr-model}}}}, strategy: {strategy}, template: {{metadata: {{labels: {{app: ocr-model}}}}, spec: {{containers: [{{name: m, image: "tritonserver:24.09"}}]}}}}}}
  status: {status}
"#
    )
}

const PROGRESSING: &str = r#"{observedGeneration: 2, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 1, conditions: [{type: Available, status: "True", reason: MinimumReplicasAvailable, message: Deployment has minimum availability., lastUpdateTime: "2026-11-30T08:00:30Z", lastTransitionTime: "2026-11-30T08:00:30Z"}, {type: Progressing, status: "True", reason: ReplicaSetUpdated, message: ReplicaSet "ocr-model-5b8c7d9f4" is progressing., lastUpdateTime: "2026-11-30T11:45:00Z", lastTransitionTime: "2026-11-30T08:00:00Z"}]}"#;

const EXCEEDED: &str = r#"{observedGeneration: 2, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 1, conditions: [{type: Available, status: "True", reason: MinimumReplicasAvailable, message: Deployment has minimum availability., lastUpdateTime: "2026-11-30T08:00:30Z", lastTransitionTime: "2026-11-30T08:00:30Z"}, {type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: ReplicaSet "ocr-model-5b8c7d9f4" has timed out progressing., lastUpdateTime: "2026-11-30T11:55:01Z", lastTransitionTime: "2026-11-30T11:55:01Z"}]}"#;

#[test]
fn the_deployments_own_strategy_is_named_with_its_rounding_and_the_deadline_it_passed() {
    let default = r#"{type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}"#;
    let v = derived_text(&(rollout("1") + &deployment(default, PROGRESSING)));
    let d = found(&v, "gpu-rollout-deadlock", "ocr-model");
    assert_eq!((d.kind.as_str(), d.severity), ("Deployment", Severity::Critical));
    for part in [
        "maxSurge 25% → 1 and maxUnavailable 25% → 0 for 1 replica(s)",
        "After its progress deadline (600 s)",
        "waited 15 min",
    ] {
        assert!(d.message.en.contains(part), "{part:?} not in {}", d.message.en);
    }
    assert!(d.message.ja.contains("maxSurge 25% → 1"), "{}", d.message.ja);
    let v = derived_text(&(rollout("1") + &deployment(default, EXCEEDED)));
    let d = found(&v, "gpu-rollout-deadlock", "ocr-model");
    assert!(d.message.en.contains("passed its progress deadline (600 s) at 2026-11-30T11:55:01Z"), "{}", d.message.en);
    // maxSurge 1 written as a number, maxUnavailable 0: the same deadlock, the numbers as written.
    let v = derived_text(
        &(rollout("1")
            + &deployment("{type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}", PROGRESSING)),
    );
    let d = found(&v, "gpu-rollout-deadlock", "ocr-model");
    assert!(d.message.en.contains("maxSurge 1 → 1 and maxUnavailable 0 → 0"), "{}", d.message.en);
}

#[test]
fn recreate_or_an_unavailable_allowance_frees_the_unit_and_is_no_deadlock() {
    for strategy in [
        "{type: Recreate}",
        "{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}",
        // Both rounded to zero: the controller's fencepost makes maxUnavailable 1.
        "{type: RollingUpdate, rollingUpdate: {maxSurge: 0%, maxUnavailable: 0%}}",
    ] {
        let v = derived_text(&(rollout("1") + &deployment(strategy, PROGRESSING)));
        assert!(!v.diagnoses.iter().any(|d| d.code == "gpu-rollout-deadlock"), "{strategy}: {:?}", codes(&v));
        let w = found(&v, "insufficient-gpu", "ocr-model-5b8c7d9f4-m2n3p");
        assert!(!w.message.en.contains("its own Deployment"), "{strategy}: {}", w.message.en);
    }
}

/// Two Orin NX boards each running the DaemonSet's old pod holding their one GPU; its update
/// (maxSurge `surge`) made a new pod pinned to the first board, where it waits. The second board
/// has a free GPU — no help to a pod pinned to the first.
fn daemon_set(surge: &str) -> String {
    let ds_uid = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
    let node = |name: &str, gpus: &str| {
        format!(
            r#"- apiVersion: v1
  kind: Node
  metadata: {{name: {name}, labels: {{kubernetes.io/arch: arm64, kubernetes.io/hostname: {name}, nvidia.com/gpu.present: "true"}}}}
  status:
    capacity: {{cpu: "8", memory: 15755428Ki, nvidia.com/gpu: "{gpus}", pods: "110"}}
    allocatable: {{cpu: "8", memory: 15755428Ki, nvidia.com/gpu: "{gpus}", pods: "110"}}
    conditions: [{{type: Ready, status: "True", reason: KubeletReady, message: kubelet is posting ready status}}]
"#
        )
    };
    let pod = |name: &str, node: &str, bound: bool, hash: &str, generation: u32| {
        let placed = if bound { format!("nodeName: {node}\n    ") } else { String::new() };
        let status = if bound {
            "{phase: Running}".to_string()
        } else {
            r#"{phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, lastTransitionTime: "2026-11-30T11:40:01Z", message: "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."}]}"#.to_string()
        };
        format!(
            r#"- apiVersion: v1
  kind: Pod
  metadata:
    name: {name}
    namespace: vision
    creationTimestamp: "2026-11-30T11:40:00Z"
    labels: {{app: line-inspector, controller-revision-hash: {hash}, pod-template-generation: "{generation}"}}
    ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: line-inspector, uid: {ds_uid}, controller: true, blockOwnerDeletion: true}}]
  spec:
    {placed}runtimeClassName: nvidia
    affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In, values: [{node}]}}]}}]}}}}}}
    tolerations: [{{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}}, {{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}}]
    containers: [{{name: inspector, image: "line-inspector:2.{generation}", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]
  status: {status}
"#
        )
    };
    // The API server refuses both zero.
    let unavailable = if surge == "0" { "1" } else { "0" };
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    text += &node("orin-nx-line1", "1");
    text += &node("orin-nx-line2", "2");
    text += &(plugin_pod("a1b2c", "orin-nx-line1") + "\n");
    text += &(plugin_pod("d3e4f", "orin-nx-line2") + "\n");
    text += &pod("line-inspector-7xk2p", "orin-nx-line1", true, "6d9c8b7f5", 1);
    text += &pod("line-inspector-q4w8z", "orin-nx-line2", true, "6d9c8b7f5", 1);
    text += &pod("line-inspector-m5n6b", "orin-nx-line1", false, "7f8e9d6c4", 2);
    text += &format!(
        r#"- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {{name: line-inspector, namespace: vision, uid: {ds_uid}, generation: 2}}
  spec: {{selector: {{matchLabels: {{app: line-inspector}}}}, updateStrategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {surge}, maxUnavailable: {unavailable}}}}}, template: {{metadata: {{labels: {{app: line-inspector}}}}, spec: {{containers: [{{name: inspector, image: "line-inspector:2.2"}}]}}}}}}
  status: {{currentNumberScheduled: 2, desiredNumberScheduled: 2, numberAvailable: 2, numberMisscheduled: 0, numberReady: 2, observedGeneration: 2, updatedNumberScheduled: 1}}
"#
    );
    text
}

#[test]
fn a_daemon_set_updated_with_max_surge_waits_for_its_own_old_pods_gpu() {
    let v = derived_text(&daemon_set("1"));
    let d = found(&v, "gpu-rollout-deadlock", "line-inspector");
    assert_eq!(
        (d.kind.as_str(), d.severity, d.namespace.as_deref()),
        ("DaemonSet", Severity::Critical, Some("vision"))
    );
    for part in [
        "cannot finish on orin-nx-line1",
        "line-inspector-m5n6b",
        "old pod line-inspector-7xk2p",
        "maxSurge 1 → 1 of 2 node(s)",
        "kubectl patch daemonset -n vision line-inspector",
        "\"maxSurge\":0,\"maxUnavailable\":1",
    ] {
        assert!(d.message.en.contains(part), "{part:?} not in {}", d.message.en);
    }
    assert_eq!(d.node.as_deref(), Some("orin-nx-line1"));
    // The other board's old pod is no part of this node's wait.
    assert!(!d.message.en.contains("q4w8z"), "{}", d.message.en);
    assert!(d.message.ja.contains("kubectl patch daemonset"), "{}", d.message.ja);
    let w = found(&v, "insufficient-gpu", "line-inspector-m5n6b");
    assert!(w.message.en.contains("its own DaemonSet"), "{}", w.message.en);
    // 50 % of two nodes rounds up to 1: the same.
    let v = derived_text(&daemon_set("50%"));
    assert!(found(&v, "gpu-rollout-deadlock", "line-inspector").message.en.contains("maxSurge 50% → 1"));
    // No surge (the default): the controller deletes the old pod first.
    let v = derived_text(&daemon_set("0"));
    assert!(!v.diagnoses.iter().any(|d| d.code == "gpu-rollout-deadlock"), "{:?}", codes(&v));
}
