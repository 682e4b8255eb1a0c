//! What happens after the scheduler said yes (issue 52), on the real control plane and held
//! against gpudash's diagnoses:
//!
//! - a model preempted by the real scheduler for one of a higher real PriorityClass: the
//!   victim's real `Preempted` event (a Normal event) → `gpu-preempted` naming the preemptor
//!   and its class; the ReplicaSet's replacement, Pending, points to it;
//! - what the kubelet decides, played by kwok stages written from the kubelet's own messages
//!   (tests/control-plane/kwok-stages.yaml): a Deployment whose template sets `spec.nodeName`
//!   to a full board, its pods refused at admission (`OutOfnvidia.com/gpu`) and piling up →
//!   one `gpu-admission-rejected` with the count, holding nothing; a model OOM-killed in a
//!   crash loop → `gpu-model-oom-killed`; a pod whose image has no arm64 build holding the
//!   board's only GPU while another waits → `gpu-held-not-running` (critical) and the waiting
//!   pod pointed at it; a pod evicted for memory pressure while the real node-lifecycle
//!   controller taints the board → `gpu-pod-evicted`, and its replacement told that a unit is
//!   free there but the taint keeps it off — never that every unit is held.

use std::time::Duration;

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::view::{diagnosis, items, pending};
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

/// A kwok Jetson on `line` with one `nvidia.com/gpu` (as the device plugin reports it).
fn board(name: &str, line: &str) -> (Value, Value) {
    let n = json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                "labels": {"kubernetes.io/hostname": name, "kubernetes.io/arch": "arm64",
                                           "nvidia.com/gpu.present": "true", "factory.example.com/line": line}}});
    let patch = json!({"status": {
        "capacity": {"cpu": "8", "memory": "15755428Ki", "pods": "110", "nvidia.com/gpu": "1"},
        "allocatable": {"cpu": "8", "memory": "15755428Ki", "pods": "110", "nvidia.com/gpu": "1"},
        "nodeInfo": {"architecture": "arm64", "kernelVersion": "5.15.148-tegra", "osImage": "Ubuntu 22.04.5 LTS"}}});
    (n, patch)
}

/// A one-replica GPU model on `line`; `pod` is merged into its pod template's spec, `stage`
/// picks the kwok stage that plays the kubelet for it.
fn model(name: &str, line: &str, stage: Option<&str>, pod: Value) -> Value {
    let mut spec = json!({"nodeSelector": {"factory.example.com/line": line},
                          "containers": [{"name": "model", "image": format!("registry.factory.local/vision/{name}:1.0"),
                                          "resources": {"limits": {"memory": "2Gi", "nvidia.com/gpu": "1"}}}]});
    if let (Some(s), Some(extra)) = (spec.as_object_mut(), pod.as_object()) {
        s.extend(extra.clone());
    }
    let annotations = stage.map(|s| json!({"gpudash.dev/kwok-stage": s})).unwrap_or(json!({}));
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "vision"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}, "annotations": annotations}, "spec": spec}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_after_binding_are_named_with_the_kubelets_and_the_schedulers_words() {
    let plane = ControlPlane::start().await.unwrap();
    let shape = gpudash_tests::demo_shape::Shape {
        setup: vec![
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}}),
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "line-critical"},
                   "value": 100000, "description": "Models that stop the line when they stop."}),
        ],
        nodes: vec![
            board("line2-board", "line2"),
            board("full-board", "seam"),
            board("nano-board", "assist"),
            board("dock-board", "dock"),
            board("press-board", "voice"),
            board("busy-board", "voice"),
        ],
        ..Default::default()
    };
    plane.create_shape(&shape).await.unwrap();

    // The holders first: the model to be preempted, the full board's, the voice line's busy
    // board's, and the pod that will never start on the dock.
    let busy = json!({"kubernetes.io/hostname": "busy-board", "factory.example.com/line": "voice"});
    plane
        .apply(&[
            model("shelf-counter", "line2", None, json!({})),
            model("weld-inspector", "seam", None, json!({})),
            model("defect-seg", "voice", None, json!({"nodeSelector": busy})),
            model("pallet-reader", "dock", Some("image-pull-backoff"), json!({})),
            model("llm-chat", "assist", Some("oom-crashloop"), json!({})),
        ])
        .expect("the holders");
    for app in ["shelf-counter", "weld-inspector", "defect-seg"] {
        plane.wait_one_running("vision", &format!("app={app}"), Duration::from_secs(60)).await.unwrap();
    }
    // Then what the nodes refuse: a higher priority on line 2, a template pinned by nodeName to
    // the full board, a second model for the dock, and a model the voice line's free board will
    // evict.
    plane
        .apply(&[
            model("safety-zone", "line2", None, json!({"priorityClassName": "line-critical"})),
            model("seam-checker", "seam", Some("admission-rejected"), json!({"nodeName": "full-board"})),
            model("forklift-guard", "dock", None, json!({})),
            model("asr-whisper", "voice", Some("evicted"), json!({})),
        ])
        .expect("the models the nodes refuse");
    // The kubelet reports memory pressure on the board before it evicts (kwok's stage waits
    // 6 s); the real node-lifecycle controller taints it.
    plane
        .wait_until("asr-whisper bound to press-board", Duration::from_secs(60), |p| {
            p.kubectl(&[
                "get",
                "pods",
                "-n",
                "vision",
                "-l",
                "app=asr-whisper",
                "-o",
                "jsonpath={.items[0].spec.nodeName}",
            ])
            .is_ok_and(|s| s == "press-board")
        })
        .await
        .unwrap();
    let pressure = json!({"status": {"conditions": [{"type": "MemoryPressure", "status": "True",
        "reason": "KubeletHasInsufficientMemory", "message": "kubelet has insufficient memory available"}]}});
    plane
        .kubectl(&[
            "patch",
            "node",
            "press-board",
            "--subresource=status",
            "--type=strategic",
            "-p",
            &pressure.to_string(),
        ])
        .expect("memory pressure on press-board");

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc, "--held-not-running-minutes", "0.05"]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(120), |v| {
            diagnosis(v, "gpu-preempted", "shelf-counter-").is_some()
                && pending(v, "shelf-counter-").is_some()
                && diagnosis(v, "gpu-admission-rejected", "seam-checker-")
                    .is_some_and(|d| d["message"].as_str().is_some_and(|m| !m.starts_with("1 ")))
                && diagnosis(v, "gpu-model-oom-killed", "llm-chat-").is_some()
                && diagnosis(v, "gpu-held-not-running", "pallet-reader-").is_some()
                && pending(v, "forklift-guard-").is_some()
                && diagnosis(v, "gpu-pod-evicted", "asr-whisper-").is_some()
                && pending(v, "asr-whisper-")
                    .is_some_and(|p| p["message"].as_str().is_some_and(|m| m.contains("untolerated taint")))
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(30)));
    let said = |d: &Value| d["message"].as_str().unwrap_or("").to_string();

    // Preemption: the real scheduler's event, the preemptor by name and its real class.
    let d = diagnosis(&v, "gpu-preempted", "shelf-counter-").unwrap_or_default();
    let m = said(&d);
    assert!(m.starts_with("Preempted on line2-board at "), "{m}");
    assert!(m.contains(" by vision/safety-zone-") && m.contains("(PriorityClass line-critical)"), "{m}");
    let replacement = pending(&v, "shelf-counter-").unwrap_or_default();
    assert!(items(&replacement, "diagnoses").contains(&json!("gpu-preempted")), "{replacement}");

    // Admission: one diagnosis for the ReplicaSet's pile of Failed pods; none holds the GPU.
    let d = diagnosis(&v, "gpu-admission-rejected", "seam-checker-").unwrap_or_default();
    assert_eq!((d["kind"].as_str(), d["node"].as_str()), (Some("ReplicaSet"), Some("full-board")), "{d}");
    let m = said(&d);
    assert!(
        m.contains("OutOfnvidia.com/gpu: \"Pod was rejected: Node didn't have enough resource: nvidia.com/gpu"),
        "{m}"
    );
    assert!(m.contains("by vision/weld-inspector-") && m.contains("spec.nodeName bypasses the scheduler"), "{m}");
    let full = items(&v, "nodes").into_iter().find(|n| n["name"] == "full-board").unwrap_or_default();
    // The running model holds the GPU; of the ReplicaSet's pile, at most the one pod bound a
    // moment ago that the kubelet has not answered yet (the scheduler counts it too) — never
    // the Failed ones.
    let holders = items(&full["gpu_resources"][0], "holders");
    let named = |p: &str| holders.iter().filter(|h| h["name"].as_str().is_some_and(|n| n.starts_with(p))).count();
    assert_eq!(named("weld-inspector-"), 1, "{holders:?}");
    assert!(named("seam-checker-") <= 1, "Failed pods are no holders: {holders:?}");
    let failed: usize = m.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(failed >= 2, "{m}");

    // The OOM-killed model.
    let m = said(&diagnosis(&v, "gpu-model-oom-killed", "llm-chat-").unwrap_or_default());
    assert!(
        m.contains("was killed for memory (OOMKilled, exit 137) 6 time(s)") && m.contains("CrashLoopBackOff"),
        "{m}"
    );

    // The holder that never starts, and the model waiting for its GPU.
    let d = diagnosis(&v, "gpu-held-not-running", "pallet-reader-").unwrap_or_default();
    assert_eq!(d["severity"], "critical", "{d}");
    let m = said(&d);
    assert!(
        m.contains("container model is ImagePullBackOff") && m.contains("no match for platform in manifest"),
        "{m}"
    );
    assert!(m.contains("The image's manifest has no linux/arm64 entry"), "{m}");
    let waiting = pending(&v, "forklift-guard-").unwrap_or_default();
    assert!(items(&waiting, "diagnoses").contains(&json!("gpu-held-not-running")), "{waiting}");
    let dock = items(&v, "nodes").into_iter().find(|n| n["name"] == "dock-board").unwrap_or_default();
    assert!(items(&dock, "problems").iter().any(|p| p["code"] == "gpu-held-not-running"), "on the node: {dock}");

    // The eviction, and the replacement kept off the pressured board by its taint.
    let d = diagnosis(&v, "gpu-pod-evicted", "asr-whisper-").unwrap_or_default();
    let m = said(&d);
    assert!(m.contains("The node was low on resource: memory.") && m.contains("MemoryPressure"), "{m}");
    let replacement = pending(&v, "asr-whisper-").unwrap_or_default();
    let told =
        items(&replacement, "problems").into_iter().find(|p| p["code"] == "insufficient-gpu").unwrap_or_default();
    let m = said(&told);
    assert!(m.contains("a unit is free on press-board") && m.contains("node.kubernetes.io/memory-pressure"), "{m}");
    assert!(!m.contains("already held"), "{m}");

    // The same in Japanese: no sentence of these left in English.
    let ja = gd.json("/api/v1/cluster?lang=ja").await.unwrap();
    let japanese = |c: char| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}');
    for code in
        ["gpu-preempted", "gpu-admission-rejected", "gpu-model-oom-killed", "gpu-held-not-running", "gpu-pod-evicted"]
    {
        let d = items(&ja, "diagnoses").into_iter().find(|d| d["code"] == code).unwrap_or_default();
        assert!(said(&d).chars().any(japanese), "{code}: {d}");
    }
    // /metrics carries each code (the alert rules page on the critical ones).
    let metrics = reqwest::get(format!("{}/metrics", gd.url)).await.unwrap().text().await.unwrap();
    for code in
        ["gpu-preempted", "gpu-admission-rejected", "gpu-model-oom-killed", "gpu-held-not-running", "gpu-pod-evicted"]
    {
        assert!(metrics.contains(&format!("gpudash_diagnosis{{code=\"{code}\"")), "{code} not in /metrics");
    }
    // The piling ReplicaSet is stopped before the plane goes.
    plane.kubectl(&["scale", "deployment/seam-checker", "-n", "vision", "--replicas=0"]).expect("scale down");
}
