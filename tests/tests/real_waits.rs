//! Waits operators cause themselves (issue 35), reproduced by the real scheduler on the real
//! control plane and held against gpudash's diagnoses:
//!
//! - a board whose device plugin renames time-sliced GPUs (`renameByDefault: true`: it
//!   advertises `nvidia.com/gpu.shared`), a model asking for `nvidia.com/gpu` → the scheduler's
//!   `Insufficient nvidia.com/gpu` → `gpu-resource-name-mismatch` naming the renamed resource,
//!   never `device-plugin-missing`;
//! - the only board for a line cordoned with `kubectl cordon` → the scheduler's `node(s) were
//!   unschedulable` → `gpu-node-cordoned` with `kubectl uncordon`, and nothing else for that pod;
//! - the GPU held by a pod being deleted (a finalizer keeps it) → the waiting model told it waits
//!   for that pod to finish terminating, not to free a GPU;
//! - a one-replica model on a one-GPU board updated (`kubectl set image`): the real Deployment
//!   controller's rolling update surges a new pod that waits for the GPU its own old pod holds →
//!   `gpu-rollout-deadlock` on the Deployment with the `Recreate` patch; applied, the real
//!   controller replaces the pod and the diagnosis goes;
//! - the what-if check asked about the same update beforehand: cannot complete as written,
//!   can with `Recreate`;
//! - a DaemonSet updated with `maxSurge: 1`: the real DaemonSet controller starts the new pod on
//!   the board before deleting the old one, and it waits for the old one's GPU →
//!   `gpu-rollout-deadlock` on the DaemonSet; the patch it gives lets the controller finish.

use std::time::Duration;

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::view::{diagnosis, items};
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

/// A kwok Jetson on `line` whose status patch advertises `resource: count`.
fn board(name: &str, line: &str, resource: &str, count: &str) -> (Value, Value) {
    let n = json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                "labels": {"kubernetes.io/hostname": name, "kubernetes.io/arch": "arm64",
                                           "nvidia.com/gpu.present": "true", "factory.example.com/line": line}}});
    let patch = json!({"status": {
        "capacity": {"cpu": "8", "memory": "15755428Ki", "pods": "110", resource: count},
        "allocatable": {"cpu": "8", "memory": "15755428Ki", "pods": "110", resource: count}}});
    (n, patch)
}

fn model(name: &str, line: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "vision"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"runtimeClassName": "nvidia", "nodeSelector": {"factory.example.com/line": line},
                                          "containers": [{"name": "m", "image": "tritonserver:24.08",
                                                          "resources": {"limits": {"memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renamed_resources_cordoned_boards_and_terminating_holders_are_told_apart() {
    let plane = ControlPlane::start().await.unwrap();
    let shape = gpudash_tests::demo_shape::Shape {
        setup: vec![
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nvidia-device-plugin"}}),
        ],
        nodes: vec![
            board("renamed-board", "sort-1", "nvidia.com/gpu.shared", "4"),
            board("cordoned-board", "press-3", "nvidia.com/gpu", "1"),
            board("busy-board", "cut-7", "nvidia.com/gpu", "1"),
            board("pack-board", "pack-2", "nvidia.com/gpu", "1"),
            board("inspect-board", "inspect-4", "nvidia.com/gpu", "1"),
        ],
        ..Default::default()
    };
    plane.create_shape(&shape).await.unwrap();
    // The device plugin runs on every board (its DaemonSet's pods, made by the real controller).
    let plugin = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "nvdp-nvidia-device-plugin", "namespace": "nvidia-device-plugin"},
        "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "nvidia-device-plugin"}},
                 "template": {"metadata": {"labels": {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": "nvdp"}},
                              "spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                       "containers": [{"name": "nvidia-device-plugin-ctr", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]}}}});
    // The holder: a bare pod on the busy board whose finalizer will keep it terminating.
    let holder = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "old-model", "namespace": "vision", "finalizers": ["factory.example.com/drain-queue"]},
        "spec": {"runtimeClassName": "nvidia", "nodeSelector": {"factory.example.com/line": "cut-7"},
                 "containers": [{"name": "m", "image": "tritonserver:24.08", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}});
    // A model every board of a line runs, updated with a surge (maxSurge 1, maxUnavailable 0).
    let inspector = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "line-inspector", "namespace": "vision"},
        "spec": {"selector": {"matchLabels": {"app": "line-inspector"}},
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                 "template": {"metadata": {"labels": {"app": "line-inspector"}},
                              "spec": {"runtimeClassName": "nvidia", "nodeSelector": {"factory.example.com/line": "inspect-4"},
                                       "containers": [{"name": "inspector", "image": "line-inspector:2.1",
                                                       "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}});
    plane
        .apply(&[plugin, holder, model("ocr-model", "pack-2"), inspector])
        .expect("plugin, holder and the workloads to update");
    plane.kubectl(&["cordon", "cordoned-board"]).expect("kubectl cordon");
    plane
        .wait_until("old-model running", Duration::from_secs(60), |p| {
            p.kubectl(&["get", "pod", "old-model", "-n", "vision", "-o", "jsonpath={.status.phase}"])
                .is_ok_and(|s| s == "Running")
        })
        .await
        .unwrap();
    plane.wait_one_running("vision", "app=ocr-model", Duration::from_secs(60)).await.unwrap();
    plane.wait_one_running("vision", "app=line-inspector", Duration::from_secs(60)).await.unwrap();
    plane
        .apply(&[model("sorter", "sort-1"), model("press-model", "press-3"), model("next-model", "cut-7")])
        .expect("models");
    // The model update an operator makes: a new image, the default rolling update.
    plane
        .kubectl(&["set", "image", "deployment/ocr-model", "-n", "vision", "m=tritonserver:24.09"])
        .expect("set image");
    plane
        .kubectl(&["set", "image", "daemonset/line-inspector", "-n", "vision", "inspector=line-inspector:2.2"])
        .expect("set image on the DaemonSet");
    plane.kubectl(&["delete", "pod", "old-model", "-n", "vision", "--wait=false"]).expect("delete old-model");

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(90), |v| {
            diagnosis(v, "gpu-resource-name-mismatch", "sorter-").is_some()
                && diagnosis(v, "gpu-node-cordoned", "press-model-").is_some()
                && diagnosis(v, "insufficient-gpu", "next-model-")
                    .is_some_and(|d| d["message"].as_str().unwrap_or("").contains("terminating"))
                && diagnosis(v, "gpu-rollout-deadlock", "ocr-model").is_some()
                && diagnosis(v, "gpu-rollout-deadlock", "line-inspector").is_some()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));
    let pending = |prefix: &str| {
        items(&v, "pending")
            .into_iter()
            .find(|p| p["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
            .unwrap_or_else(|| panic!("{prefix} is not Pending: {}", v["pending"]))
    };

    // The renamed resource: the real scheduler's words, the renamed name and the line to change.
    let sorter = pending("sorter-");
    assert!(sorter["message"].as_str().unwrap_or("").contains("Insufficient nvidia.com/gpu"), "{sorter}");
    assert_eq!(items(&sorter, "diagnoses"), vec![json!("gpu-resource-name-mismatch")], "{sorter}");
    let d = diagnosis(&v, "gpu-resource-name-mismatch", "sorter-").unwrap_or_default();
    let said = d["message"].as_str().unwrap_or("");
    for part in ["nvidia.com/gpu.shared", "renamed-board", "renameByDefault", "to nvidia.com/gpu.shared: 1"] {
        assert!(said.contains(part), "{part:?} not in {said}");
    }
    assert!(diagnosis(&v, "device-plugin-missing", "").is_none(), "the plugin runs: {}", v["diagnoses"]);

    // The cordoned board: the scheduler's words, and only the cordon for this pod.
    let press = pending("press-model-");
    assert!(press["message"].as_str().unwrap_or("").contains("node(s) were unschedulable"), "{press}");
    assert_eq!(items(&press, "diagnoses"), vec![json!("gpu-node-cordoned")], "{press}");
    let d = diagnosis(&v, "gpu-node-cordoned", "press-model-").unwrap_or_default();
    let said = d["message"].as_str().unwrap_or("");
    assert!(said.contains("cordoned-board") && said.contains("kubectl uncordon cordoned-board"), "{said}");

    // The terminating holder: named, with its deletion time; not "free one".
    let d = diagnosis(&v, "insufficient-gpu", "next-model-").unwrap_or_default();
    let said = d["message"].as_str().unwrap_or("");
    assert!(said.contains("vision/old-model") && said.contains("deleting since"), "{said}");
    assert!(!said.contains("scale down"), "{said}");

    // Asked beforehand, the what-if check would have said so: the update as pasted (the default
    // strategy) cannot complete; with Recreate it can.
    let http = reqwest::Client::new();
    for (strategy, completes) in [(json!(null), false), (json!({"type": "Recreate"}), true)] {
        let mut update = model("ocr-model", "pack-2");
        update["spec"]["template"]["spec"]["containers"][0]["image"] = json!("tritonserver:24.10");
        update["spec"]["strategy"] = strategy.clone();
        let fit: Value = http
            .post(format!("{}/api/v1/fit", gd.url))
            .json(&json!({"yaml": update.to_string()}))
            .send()
            .await
            .expect("fit")
            .json()
            .await
            .expect("fit JSON");
        assert_eq!(fit["update"]["completes"], json!(completes), "{strategy}: {fit}");
        assert_eq!(fit["update"]["old_pods"], json!(1), "{fit}");
    }

    // The rollout: on the Deployment, with its strategy as the API server defaulted it, how the
    // controller rounds it, and the fix.
    let d = diagnosis(&v, "gpu-rollout-deadlock", "ocr-model").unwrap_or_default();
    assert_eq!((d["kind"].as_str(), d["severity"].as_str()), (Some("Deployment"), Some("critical")), "{d}");
    let said = d["message"].as_str().unwrap_or("");
    for part in [
        "vision/ocr-model",
        "maxSurge 25% → 1 and maxUnavailable 25% → 0 for 1 replica(s)",
        "progress deadline (600 s)",
        "Recreate",
        "kubectl patch deployment -n vision ocr-model",
        "\"maxSurge\":0,\"maxUnavailable\":1",
    ] {
        assert!(said.contains(part), "{part:?} not in {said}");
    }
    let new_pod = items(&v, "pending")
        .into_iter()
        .find(|p| p["name"].as_str().is_some_and(|n| n.starts_with("ocr-model-")))
        .unwrap_or_else(|| panic!("the new ocr-model pod is not Pending: {}", v["pending"]));
    assert!(items(&new_pod, "diagnoses").contains(&json!("gpu-rollout-deadlock")), "{new_pod}");
    let told = diagnosis(&v, "insufficient-gpu", new_pod["name"].as_str().unwrap_or("?")).unwrap_or_default();
    assert!(!told["message"].as_str().unwrap_or("").contains("scale down a pod"), "{told}");
    plane
        .kubectl(&[
            "patch",
            "deployment",
            "ocr-model",
            "-n",
            "vision",
            "-p",
            r#"{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}"#,
        ])
        .expect("the Recreate patch from the diagnosis");
    gd.wait_view(Duration::from_secs(60), |v| {
        diagnosis(v, "gpu-rollout-deadlock", "ocr-model").is_none()
            && items(v, "pending").iter().all(|p| !p["name"].as_str().unwrap_or("").starts_with("ocr-model-"))
    })
    .await
    .unwrap();

    // The DaemonSet's surge: the real controller's new pod on the one board, waiting for the GPU
    // its old pod holds there; the patch from the diagnosis lets the controller replace it.
    let d = diagnosis(&v, "gpu-rollout-deadlock", "line-inspector").unwrap_or_default();
    assert_eq!((d["kind"].as_str(), d["node"].as_str()), (Some("DaemonSet"), Some("inspect-board")), "{d}");
    let said = d["message"].as_str().unwrap_or("");
    for part in [
        "cannot finish on inspect-board",
        "maxSurge 1 → 1 of 1 node(s)",
        "kubectl patch daemonset -n vision line-inspector",
    ] {
        assert!(said.contains(part), "{part:?} not in {said}");
    }
    plane
        .kubectl(&[
            "patch",
            "daemonset",
            "line-inspector",
            "-n",
            "vision",
            "-p",
            r#"{"spec":{"updateStrategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}"#,
        ])
        .expect("the DaemonSet patch from the diagnosis");
    gd.wait_view(Duration::from_secs(60), |v| {
        diagnosis(v, "gpu-rollout-deadlock", "line-inspector").is_none()
            && items(v, "pending").iter().all(|p| !p["name"].as_str().unwrap_or("").starts_with("line-inspector-"))
    })
    .await
    .unwrap_or_else(|e| {
        let ds = plane.kubectl(&["get", "ds,pods", "-n", "vision", "-o", "yaml"]).unwrap_or_default();
        panic!("{e}\n{ds}")
    });
    let images = plane
        .kubectl(&[
            "get",
            "pods",
            "-n",
            "vision",
            "-l",
            "app=line-inspector",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ])
        .unwrap_or_default();
    assert_eq!(images.trim(), "line-inspector:2.2", "the updated pod alone runs");

    // Uncordoned, the press model runs and its diagnosis goes.
    plane.kubectl(&["uncordon", "cordoned-board"]).expect("kubectl uncordon");
    gd.wait_view(Duration::from_secs(60), |v| diagnosis(v, "gpu-node-cordoned", "").is_none()).await.unwrap();
    // The finalizer removed, the old model goes and the next one takes the GPU.
    plane
        .kubectl(&[
            "patch",
            "pod",
            "old-model",
            "-n",
            "vision",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ])
        .expect("finalizer removed");
    gd.wait_view(Duration::from_secs(60), |v| {
        items(v, "pending").iter().all(|p| !p["name"].as_str().unwrap_or("").starts_with("next-model-"))
    })
    .await
    .unwrap();
}
