//! Diagnoses reproduced by the real scheduler and controllers: each case is created through
//! the API as a site has it (kwok nodes given their GPUs by a status patch, workloads as
//! Deployments), the real components act, and gpudash's `GET /api/v1/cluster` is held to the
//! codes they lead to.
//!
//! - a model too big for a Jetson whose GPU is free: the scheduler's `Insufficient memory` among
//!   other nodes' reasons → `insufficient-memory`;
//! - a team's GPU quota used up while GPUs are free: quota admission refuses the pod and the
//!   ReplicaSet controller says `exceeded quota` → `gpu-quota-exhausted`;
//! - a GPU taken out of service (allocatable below capacity, as the device plugin reports an
//!   unhealthy GPU) → `gpu-unhealthy`;
//! - a board whose kubelet stops (its own kwok killed): the node-lifecycle controller marks it
//!   Unknown and taints it for eviction → `gpu-node-down`;
//! - a board whose device plugin crash-loops (the DaemonSet's pod, made by the real DaemonSet
//!   controller, put in CrashLoopBackOff by a kwok stage) and so advertises no GPU, a model
//!   waiting for it → `device-plugin-missing` naming the pod and its restarts, and the model's
//!   `insufficient-gpu` pointing at the plugin, not at freeing a GPU.

use std::time::Duration;

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::view::items;
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

fn has(v: &Value, code: &str, name_prefix: &str) -> bool {
    items(v, "diagnoses")
        .iter()
        .any(|d| d["code"] == code && d["name"].as_str().is_some_and(|n| n.starts_with(name_prefix)))
}

/// A kwok node with labels, optional taints, and the status patch giving its resources.
fn node(name: &str, labels: Value, taints: Value, gpus: &str, allocatable_gpus: &str, memory: &str) -> (Value, Value) {
    let mut labels = labels;
    labels["kubernetes.io/hostname"] = json!(name);
    let n = json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"}, "labels": labels},
                   "spec": {"taints": taints}});
    let patch = json!({"status": {
        "capacity": {"cpu": "8", "memory": memory, "pods": "110", "nvidia.com/gpu": gpus},
        "allocatable": {"cpu": "8", "memory": memory, "pods": "110", "nvidia.com/gpu": allocatable_gpus}}});
    (n, patch)
}

fn model(ns: &str, name: &str, replicas: u32, memory: &str, selector: Value, tolerations: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"runtimeClassName": "nvidia", "nodeSelector": selector, "tolerations": tolerations,
                                          "containers": [{"name": "m", "image": "tritonserver:24.08",
                                                          "resources": {"requests": {"memory": memory, "nvidia.com/gpu": "1"},
                                                                        "limits": {"memory": memory, "nvidia.com/gpu": "1"}}}]}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_scheduler_and_controllers_lead_to_each_diagnosis() {
    let plane = ControlPlane::start().await.unwrap();
    let jetson = json!({"nvidia.com/gpu.count": "1", "nvidia.com/gpu.product": "NVIDIA-Jetson-Orin-Nano-8GB",
                        "kubernetes.io/arch": "arm64", "factory.example.com/line": "press-3"});
    let shape = gpudash_tests::demo_shape::Shape {
        setup: vec![
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu-quota", "namespace": "team-a"},
                   "spec": {"hard": {"requests.nvidia.com/gpu": "1"}}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nvidia-device-plugin"}}),
        ],
        nodes: vec![
            node("orin-nano-1", jetson.clone(), json!([]), "1", "1", "7802852Ki"),
            node(
                "gpu-x86-1",
                json!({"nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB"}),
                json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]),
                "2",
                "2",
                "251Gi",
            ),
            node("oos-board", json!({"nvidia.com/gpu.product": "NVIDIA-L4"}), json!([]), "2", "1", "64Gi"),
            node(
                "dark-board",
                json!({"nvidia.com/gpu.product": "NVIDIA-L4", "site.example.com/cell": "dark"}),
                json!([]),
                "1",
                "1",
                "64Gi",
            ),
            // An Orin NX whose device plugin never registers: GPU feature discovery's label, no
            // nvidia.com/gpu in its status.
            (
                json!({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": "crash-board", "annotations": {"kwok.x-k8s.io/node": "fake"},
                                    "labels": {"kubernetes.io/hostname": "crash-board", "kubernetes.io/arch": "arm64",
                                               "nvidia.com/gpu.present": "true", "factory.example.com/line": "cut-7"}}}),
                json!({"status": {"capacity": {"cpu": "8", "memory": "15755428Ki", "pods": "110"},
                                  "allocatable": {"cpu": "8", "memory": "15755428Ki", "pods": "110"}}}),
            ),
        ],
        ..Default::default()
    };
    // The dark board has a kubelet of its own (a second kwok), to be killed later.
    let mut shape = shape;
    shape.nodes[3].0["metadata"]["annotations"]["kwok.x-k8s.io/node"] = json!("solo");
    let mut dark_kubelet = plane.kubelet_for("dark-board").expect("dark-board's kubelet");
    plane.create_shape(&shape).await.unwrap();
    let tolerate_gpu = json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]);
    plane
        .apply(&[
            // 16 GiB on an 8 GB board whose GPU is free; the other nodes refuse it for their own reasons.
            model("vision", "big-model", 1, "16Gi", json!({"factory.example.com/line": "press-3"}), json!([])),
            // The team may hold one GPU; its second model is refused while the A100 has one free.
            model("team-a", "quota-model", 2, "1Gi", json!({"kubernetes.io/hostname": "gpu-x86-1"}), tolerate_gpu),
            // A model on the board whose kubelet will stop.
            model("vision", "dark-model", 1, "1Gi", json!({"site.example.com/cell": "dark"}), json!([])),
            // The device plugin's DaemonSet (as its Helm chart selects GPU nodes), its pod on the
            // crash board crash-looping; a model for that board's line.
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                   "metadata": {"name": "nvdp-nvidia-device-plugin", "namespace": "nvidia-device-plugin"},
                   "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "nvidia-device-plugin"}},
                            "template": {"metadata": {"labels": {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "nvdp"},
                                                      "annotations": {"gpudash.dev/kwok-stage": "crashloop"}},
                                         "spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                                  "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                                                  "containers": [{"name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]}}}}),
            model("vision", "wear-model", 1, "1Gi", json!({"factory.example.com/line": "cut-7"}), json!([])),
        ])
        .expect("workloads");
    plane.wait_one_running("vision", "app=dark-model", Duration::from_secs(60)).await.unwrap();

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(90), |v| {
            has(v, "insufficient-memory", "big-model-")
                && has(v, "gpu-quota-exhausted", "quota-model")
                && has(v, "gpu-unhealthy", "oos-board")
                && has(v, "device-plugin-missing", "crash-board")
                && has(v, "insufficient-gpu", "wear-model-")
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));

    // The scheduler's words for the big model, normalised with every node accounted for.
    let big = items(&v, "pending")
        .into_iter()
        .find(|p| p["name"].as_str().is_some_and(|n| n.starts_with("big-model-")))
        .unwrap_or_else(|| panic!("big-model is not Pending: {}", v["pending"]));
    let message = big["message"].as_str().unwrap_or("");
    assert!(message.starts_with("0/5 nodes are available:") && message.contains("1 Insufficient memory"), "{message}");
    let reasons = items(&big, "reasons");
    assert!(reasons.iter().any(|r| r["reason"] == "Insufficient memory" && r["nodes"] == 1), "{big}");
    let counted: u64 = reasons.iter().filter_map(|r| r["nodes"].as_u64()).sum();
    assert_eq!(counted, 5, "every node in a reason: {big}");
    assert!(items(&big, "diagnoses").contains(&json!("insufficient-memory")), "{big}");
    assert!(!items(&big, "diagnoses").contains(&json!("insufficient-gpu")), "its GPU is free: {big}");

    // The quota: no second pod exists, the A100 still has a GPU free.
    let x86 = items(&v, "nodes").into_iter().find(|n| n["name"] == "gpu-x86-1").expect("gpu-x86-1");
    assert_eq!(x86["gpu_resources"][0]["allocated"], 1, "{x86}");

    // The crash-looping plugin: named with the state the kubelet (kwok) reported, and the model
    // waiting for that board told to fix the plugin rather than to free a GPU.
    let plugin = items(&v, "diagnoses")
        .into_iter()
        .find(|d| d["code"] == "device-plugin-missing" && d["name"] == "crash-board")
        .expect("device-plugin-missing");
    let said = plugin["message"].as_str().unwrap_or("");
    assert_eq!(plugin["severity"], "critical", "a GPU model waits for it: {plugin}");
    for part in [
        "nvidia-device-plugin/nvdp-nvidia-device-plugin-",
        "CrashLoopBackOff",
        "restarted 14 times",
        "last exit code 1, Error",
    ] {
        assert!(said.contains(part), "{part:?} not in {said}");
    }
    let wear = items(&v, "diagnoses")
        .into_iter()
        .find(|d| d["code"] == "insufficient-gpu" && d["name"].as_str().is_some_and(|n| n.starts_with("wear-model-")))
        .expect("wear-model's insufficient-gpu");
    let said = wear["message"].as_str().unwrap_or("");
    assert!(said.contains("device plugin") && said.contains("crash-board"), "{said}");
    assert!(!said.contains("free one"), "{said}");
    let wear_pod = items(&v, "pending")
        .into_iter()
        .find(|p| p["name"].as_str().is_some_and(|n| n.starts_with("wear-model-")))
        .expect("wear-model Pending");
    assert!(
        items(&wear_pod, "reasons").iter().any(|r| r["reason"] == "Insufficient nvidia.com/gpu" && r["nodes"] == 1),
        "the scheduler's own words: {wear_pod}"
    );

    // Kill the dark board's kubelet: its lease and heartbeats stop, and the node-lifecycle
    // controller (grace period 20 s here) marks it Unknown and taints it for eviction.
    dark_kubelet.kill();
    let v = gd
        .wait_view(Duration::from_secs(120), |v| has(v, "gpu-node-down", "dark-board"))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));
    let dark = items(&v, "nodes").into_iter().find(|n| n["name"] == "dark-board").expect("dark-board");
    assert_eq!(dark["ready"], false, "{dark}");
    let taints = plane.kubectl(&["get", "node", "dark-board", "-o", "jsonpath={.spec.taints[*].key}"]).expect("taints");
    assert!(taints.contains("node.kubernetes.io/unreachable"), "the controller's taint: {taints}");
    // The eviction time gpudash gives is the real controller's: the taint's timeAdded plus the
    // 300 s toleration that admission gave the pod.
    let added = plane
        .kubectl(&["get", "node", "dark-board", "-o", "jsonpath={.spec.taints[?(@.effect==\"NoExecute\")].timeAdded}"])
        .expect("timeAdded");
    let at = std::process::Command::new("date")
        .args(["-u", "-d", &format!("{} + 300 seconds", added.trim()), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .expect("date");
    let down = items(&v, "diagnoses").into_iter().find(|d| d["code"] == "gpu-node-down").expect("gpu-node-down");
    let said = down["message"].as_str().unwrap_or("");
    assert!(
        said.contains(&format!("evicts them at {at}")) && said.contains("dark-model-"),
        "expected eviction at {at}: {said}"
    );
}
