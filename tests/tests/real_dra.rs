//! Dynamic Resource Allocation on the real control plane: the test publishes a node's GPUs in a
//! ResourceSlice as NVIDIA's DRA driver would, with a DeviceClass and a ResourceClaimTemplate;
//! a Deployment asks for one GPU per pod through the template. The real resourceclaim
//! controller makes each pod's claim, the real scheduler allocates and reserves devices — and
//! gpudash must show exactly the device each pod holds, the third model Pending in the
//! scheduler's DRA words, and a workload whose DeviceClass does not exist diagnosed.

use std::time::Duration;

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

const DRIVER: &str = "gpu.nvidia.com";

fn slice(node: &str) -> Value {
    let gpu = |i: u32| {
        json!({"name": format!("gpu-{i}"),
               "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA L4"},
                              "uuid": {"string": format!("GPU-4f0c3a8e-1b2d-4c5e-8f90-0000000000{i:02}")}},
               "capacity": {"memory": {"value": "23034Mi"}}})
    };
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"name": format!("{node}-{DRIVER}")},
           "spec": {"driver": DRIVER, "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": [gpu(0), gpu(1)]}})
}

fn deployment(name: &str, template: &str, replicas: u32) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "dra"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                                          "containers": [{"name": "m", "image": "vllm:0.6",
                                                          "resources": {"claims": [{"name": "gpu"}]}}]}}}})
}

fn template(name: &str, class: &str) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": "dra"},
           "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": class}}]}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_allocated_by_the_real_scheduler_are_shown_with_their_pods() {
    let plane = ControlPlane::start().await.unwrap_or_else(|e| panic!("{e}"));
    let node = json!({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": "l4-dra-1", "annotations": {"kwok.x-k8s.io/node": "fake"},
                                   "labels": {"kubernetes.io/hostname": "l4-dra-1", "nvidia.com/gpu.present": "true"}},
                      "spec": {}});
    let res = json!({"status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                                "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}});
    plane.add_nodes(&[(node, res)]).await.unwrap_or_else(|e| panic!("{e}"));
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dra"}}),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                   "spec": {"selectors": [{"cel": {"expression": format!("device.driver == '{DRIVER}'")}}]}}),
            slice("l4-dra-1"),
            template("one-gpu", DRIVER),
            template("one-lost-gpu", "gpu.example.com"),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    plane
        .apply(&[deployment("llm", "one-gpu", 3), deployment("lost", "one-lost-gpu", 1)])
        .unwrap_or_else(|e| panic!("{e}"));

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap_or_else(|e| panic!("{e}"));
    let held = |v: &Value| -> Vec<(String, String)> {
        let mut out = Vec::new();
        for n in v["nodes"].as_array().into_iter().flatten().filter(|n| n["name"] == "l4-dra-1") {
            for g in n["gpu_resources"].as_array().into_iter().flatten().filter(|g| g["resource"] == DRIVER) {
                for d in g["devices"].as_array().into_iter().flatten() {
                    for h in d["holders"].as_array().into_iter().flatten() {
                        out.push((
                            d["name"].as_str().unwrap_or("").to_string(),
                            h["name"].as_str().unwrap_or("").to_string(),
                        ));
                    }
                }
            }
        }
        out.sort();
        out
    };
    let pending = |v: &Value, prefix: &str| -> Option<Value> {
        v["pending"].as_array()?.iter().find(|p| p["name"].as_str().is_some_and(|n| n.starts_with(prefix))).cloned()
    };
    let v = gd
        .wait_view(Duration::from_secs(90), |v| {
            held(v).len() == 2
                && pending(v, "llm-").is_some_and(|p| p["reasons"].as_array().is_some_and(|r| !r.is_empty()))
                && v["diagnoses"].as_array().into_iter().flatten().any(|d| d["code"] == "dra-deviceclass-missing")
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));

    // Exactly the devices the real scheduler allocated, each to the pod its claim is reserved for.
    let claims = plane.kubectl_json(&["get", "resourceclaims", "-n", "dra", "-o", "json"]).expect("claims");
    let mut real: Vec<(String, String)> = claims["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let device = c["status"]["allocation"]["devices"]["results"][0]["device"].as_str()?;
            let pod = c["status"]["reservedFor"][0]["name"].as_str()?;
            Some((device.to_string(), pod.to_string()))
        })
        .collect();
    real.sort();
    assert_eq!(held(&v), real, "gpudash's holders are the real allocation");
    assert_eq!(real.len(), 2, "two GPUs, two pods");

    // The third model waits in the scheduler's DRA words.
    let third = pending(&v, "llm-").expect("a third llm pod Pending");
    let message = third["message"].as_str().unwrap_or("");
    assert!(message.contains("cannot allocate all claims"), "the real scheduler said: {message}");
    assert!(
        third["reasons"].as_array().into_iter().flatten().any(|r| r["reason"] == "cannot allocate all claims"),
        "{third}"
    );
}
