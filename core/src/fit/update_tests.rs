//! The what-if check for an update of a workload that already runs: the demo's ocr-model
//! (one replica holding one of orin-nx-02's two GPUs, every other GPU unit held) and a DaemonSet
//! whose pods hold the one GPU of each board they run on.

use super::workload::from_yaml;
use super::*;
use crate::derive::node as dnode;
use crate::derive::tests::load;

fn unified(n: &Node) -> bool {
    dnode::unified_memory(n, false)
}

fn edge() -> Inputs {
    load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""))
}

fn ocr_update(strategy: &str) -> String {
    format!(
        r#"
apiVersion: apps/v1
kind: Deployment
metadata: {{name: ocr-model, namespace: vision}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: ocr-model}}}}
  strategy: {strategy}
  template:
    metadata: {{labels: {{app: ocr-model}}}}
    spec:
      containers: [{{name: ocr, image: registry.factory.local/vision/paddleocr-trt:2.9, resources: {{requests: {{cpu: "1", memory: 6Gi, nvidia.com/gpu: "1"}}, limits: {{memory: 10Gi, nvidia.com/gpu: "1"}}}}}}]
"#
    )
}

fn check(inputs: &Inputs, yaml: &str) -> FitResult {
    let w = from_yaml(yaml).unwrap();
    fit(inputs, &w, &unified)
}

#[test]
fn a_rolling_update_of_a_model_on_a_full_gpu_is_said_to_wait_for_ever_and_recreate_to_complete() {
    let inputs = edge();
    let r = check(&inputs, &ocr_update("{type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}"));
    // As a new workload it would not fit: every GPU unit is held.
    assert_eq!(r.placeable, 0, "{}", r.summary);
    let u = r.update.unwrap_or_else(|| panic!("no update verdict"));
    assert!(!u.completes);
    assert_eq!(u.old_pods, 1);
    for part in [
        "maxSurge 25% → 1 and maxUnavailable 25% → 0 for 1 replica(s)",
        "gpu-rollout-deadlock",
        "1 of 1 new pod(s) fit",
    ] {
        assert!(u.message.en.contains(part), "{part:?} not in {}", u.message.en);
    }
    assert!(u.message.ja.contains("gpu-rollout-deadlock"), "{}", u.message.ja);
    // The default strategy, left unwritten, is the same.
    let r = check(&inputs, &ocr_update("null"));
    assert!(r.update.is_some_and(|u| !u.completes));
    // Recreate, and maxSurge 0 with maxUnavailable 1: the old pod goes first, the new one fits.
    let r = check(&inputs, &ocr_update("{type: Recreate}"));
    let u = r.update.unwrap_or_else(|| panic!("no update verdict"));
    assert!(u.completes && u.message.en.contains("all 1 new pod(s) fit"), "{}", u.message.en);
    let r = check(&inputs, &ocr_update("{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}"));
    let u = r.update.unwrap_or_else(|| panic!("no update verdict"));
    assert!(u.completes && u.message.en.contains("takes 1 old pod(s) down first"), "{}", u.message.en);
}

#[test]
fn a_new_name_is_a_new_workload_and_a_free_unit_lets_the_rollout_surge() {
    let inputs = edge();
    let r = check(&inputs, &ocr_update("null").replace("name: ocr-model,", "name: ocr-model-next,"));
    assert!(r.update.is_none());
    // One more GPU (and the memory for it) on orin-nx-02: the new pod fits beside the old one.
    let mut more = inputs.clone();
    for n in more.nodes.iter_mut().filter(|n| n.metadata.name.as_deref() == Some("orin-nx-02")) {
        let mut node = (**n).clone();
        if let Some(a) = node.status.as_mut().and_then(|s| s.allocatable.as_mut()) {
            let q = |s: &str| k8s_openapi::apimachinery::pkg::api::resource::Quantity(s.into());
            a.insert("nvidia.com/gpu".into(), q("3"));
            a.insert("memory".into(), q("64Gi"));
        }
        *n = std::sync::Arc::new(node);
    }
    let u = check(&more, &ocr_update("null")).update.unwrap_or_else(|| panic!("no update verdict"));
    assert!(u.completes && u.message.en.contains("fits beside the 1 old one(s)"), "{}", u.message.en);
}

/// Two Orin NX boards on line inspect, each running line-inspector's pod holding its one GPU.
fn boards() -> Inputs {
    let node = |name: &str| {
        format!(
            r#"- apiVersion: v1
  kind: Node
  metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, factory.example.com/line: inspect, nvidia.com/gpu.present: "true"}}}}
  status:
    capacity: {{cpu: "8", memory: 15755428Ki, nvidia.com/gpu: "1", pods: "110"}}
    allocatable: {{cpu: "8", memory: 15755428Ki, nvidia.com/gpu: "1", pods: "110"}}
    conditions: [{{type: Ready, status: "True"}}]
"#
        )
    };
    let pod = |name: &str, node: &str| {
        format!(
            r#"- apiVersion: v1
  kind: Pod
  metadata: {{name: {name}, namespace: vision, ownerReferences: [{{apiVersion: apps/v1, kind: DaemonSet, name: line-inspector, uid: 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d, controller: true}}]}}
  spec: {{nodeName: {node}, containers: [{{name: inspector, image: "line-inspector:2.1", resources: {{limits: {{nvidia.com/gpu: "1"}}, requests: {{nvidia.com/gpu: "1"}}}}}}]}}
  status: {{phase: Running}}
"#
        )
    };
    load(&format!(
        "apiVersion: v1\nkind: List\nitems:\n{}{}{}{}",
        node("orin-nx-a"),
        node("orin-nx-b"),
        pod("line-inspector-7xk2p", "orin-nx-a"),
        pod("line-inspector-q4w8z", "orin-nx-b")
    ))
}

fn ds_update(rolling: &str) -> String {
    format!(
        r#"
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: line-inspector, namespace: vision}}
spec:
  selector: {{matchLabels: {{app: line-inspector}}}}
  updateStrategy: {rolling}
  template:
    metadata: {{labels: {{app: line-inspector}}}}
    spec:
      nodeSelector: {{factory.example.com/line: inspect}}
      containers: [{{name: inspector, image: "line-inspector:2.2", resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}]
"#
    )
}

#[test]
fn a_daemon_set_update_that_surges_onto_full_boards_is_stuck_on_each_and_without_surge_completes() {
    let inputs = boards();
    let u = check(&inputs, &ds_update("{type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}"))
        .update
        .unwrap_or_else(|| panic!("no update verdict"));
    assert!(!u.completes);
    assert_eq!(u.old_pods, 2);
    for part in ["maxSurge 1 → 1 of 2 node(s)", "orin-nx-a, orin-nx-b", "maxSurge 0 and maxUnavailable 1"] {
        assert!(u.message.en.contains(part), "{part:?} not in {}", u.message.en);
    }
    for rolling in
        ["{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}", "null", "{type: OnDelete}"]
    {
        let u = check(&inputs, &ds_update(rolling)).update.unwrap_or_else(|| panic!("no update verdict"));
        assert!(u.completes, "{rolling}: {}", u.message.en);
    }
}

/// Round two's probe: the what-if update took strategies the API server refuses. Each is now
/// refused with the field's name and the API server's words.
#[test]
fn strategies_the_api_server_refuses_are_refused_with_the_field_named() {
    for (strategy, field, words) in [
        ("{type: RollingUpdate, rollingUpdate: {maxSurge: \"1e400\"}}", "maxSurge", "a valid percent string"),
        ("{type: RollingUpdate, rollingUpdate: {maxSurge: \"-1\"}}", "maxSurge", "a valid percent string"),
        ("{type: RollingUpdate, rollingUpdate: {maxSurge: -1}}", "maxSurge", "greater than or equal to 0"),
        ("{type: RollingUpdate, rollingUpdate: {maxSurge: 2147483648}}", "maxSurge", "32-bit integer"),
        ("{type: RollingUpdate, rollingUpdate: {maxSurge: 2147483648%}}", "maxSurge", "32-bit integer"),
        (
            "{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 0%}}",
            "maxUnavailable",
            "may not be 0 when `maxSurge` is 0",
        ),
        (
            "{type: RollingUpdate, rollingUpdate: {maxUnavailable: 101%}}",
            "maxUnavailable",
            "must not be greater than 100%",
        ),
        ("{type: Recreate, rollingUpdate: {maxSurge: 1}}", "rollingUpdate", "may not be specified"),
        ("{type: Sometimes}", "type", "supported values"),
    ] {
        let e = from_yaml(&ocr_update(strategy)).err().unwrap_or_else(|| panic!("{strategy} was taken"));
        assert!(e.field.starts_with("spec.strategy") && e.field.ends_with(field), "{strategy}: {e:?}");
        assert!(e.message.contains(words), "{strategy}: {e:?}");
    }
    // What the API server takes is still taken.
    for strategy in
        ["{type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 100%}}", "{type: Recreate}", "null"]
    {
        assert!(from_yaml(&ocr_update(strategy)).is_ok(), "{strategy}");
    }
}
