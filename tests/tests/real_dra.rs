//! Dynamic Resource Allocation on the real control plane: the test publishes a node's GPUs in a
//! ResourceSlice as NVIDIA's DRA driver would, with a DeviceClass and a ResourceClaimTemplate;
//! a Deployment asks for one GPU per pod through the template. The real resourceclaim
//! controller makes each pod's claim, the real scheduler allocates and reserves devices — and
//! gpudash must show exactly the device each pod holds, the third model Pending in the
//! scheduler's DRA words, and a workload whose DeviceClass does not exist diagnosed. An A100
//! publishes MIG partitions beside its GPU (as the driver does with MIG on): two pods' claims for
//! a 1g.10gb profile get two partitions, shown under their GPU. An L4 is shared by one
//! ResourceClaim that three pods name: the scheduler reserves it for all three, and gpudash shows
//! the three on that one device.

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

/// An A100 with MIG on: the GPU and three partitions (one 3g.40gb, two 1g.10gb), named and
/// described as NVIDIA's DRA driver publishes them (`gpu-0-mig-<profile id>-<start>-<size>`,
/// `parentUUID` naming the GPU).
fn mig_slice(node: &str) -> Value {
    let parent = "GPU-ddf64803-f421-0e5b-883e-cd752de16d01";
    let mig = |name: &str, profile: &str, n: u32, mem: &str| {
        json!({"name": name,
               "attributes": {"type": {"string": "mig"}, "profile": {"string": profile}, "parentIndex": {"int": 0},
                              "parentUUID": {"string": parent}, "productName": {"string": "NVIDIA A100 80GB PCIe"},
                              "uuid": {"string": format!("MIG-5c3e1b2a-7f4d-5e6c-9a8b-0d1e2f3a4b0{n}")}},
               "capacity": {"memory": {"value": mem}}})
    };
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"name": format!("{node}-{DRIVER}")},
           "spec": {"driver": DRIVER, "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "index": {"int": 0},
                                                          "productName": {"string": "NVIDIA A100 80GB PCIe"}, "uuid": {"string": parent}},
                         "capacity": {"memory": {"value": "80Gi"}}},
                        mig("gpu-0-mig-9-0-1", "3g.40gb", 1, "40192Mi"),
                        mig("gpu-0-mig-19-4-1", "1g.10gb", 2, "9856Mi"),
                        mig("gpu-0-mig-19-5-1", "1g.10gb", 3, "9856Mi")]}})
}

/// A Deployment on `node` whose pods claim `claim`: from a template (one claim a pod) or, with
/// `shared`, the one ResourceClaim of that name (every pod the same device).
fn deployment_on(name: &str, claim: &str, shared: bool, replicas: u32, node: &str) -> Value {
    let rc = if shared {
        json!({"name": "gpu", "resourceClaimName": claim})
    } else {
        json!({"name": "gpu", "resourceClaimTemplateName": claim})
    };
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "dra"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                                          "resourceClaims": [rc],
                                          "containers": [{"name": "m", "image": "vllm:0.6",
                                                          "resources": {"claims": [{"name": "gpu"}]}}]}}}})
}

fn deployment(name: &str, template: &str, replicas: u32) -> Value {
    deployment_on(name, template, false, replicas, "l4-dra-1")
}

fn request(class: &str, selector: Option<&str>) -> Value {
    let mut exactly = json!({"deviceClassName": class});
    if let Some(cel) = selector {
        exactly["selectors"] = json!([{"cel": {"expression": cel}}]);
    }
    json!({"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}})
}

fn template(name: &str, class: &str) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": "dra"},
           "spec": {"spec": request(class, None)}})
}

fn dra_node(name: &str) -> (Value, Value) {
    let node = json!({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                                   "labels": {"kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true"}},
                      "spec": {}});
    let res = json!({"status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                                "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}});
    (node, res)
}

/// `(device, pod)` for every holder gpudash shows on `node`'s DRA devices.
fn held_on(v: &Value, node: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for n in v["nodes"].as_array().into_iter().flatten().filter(|n| n["name"] == node) {
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
}

/// `(device, pod)` for every pod each claim in `dra` on `node` is reserved for, as the API
/// server has it.
fn real_allocation(plane: &ControlPlane, node: &str) -> Vec<(String, String)> {
    let claims = plane.kubectl_json(&["get", "resourceclaims", "-n", "dra", "-o", "json"]).expect("claims");
    let mut real: Vec<(String, String)> = Vec::new();
    for c in claims["items"].as_array().into_iter().flatten() {
        let result = &c["status"]["allocation"]["devices"]["results"][0];
        if result["pool"] != node {
            continue;
        }
        let device = result["device"].as_str().unwrap_or("").to_string();
        for r in c["status"]["reservedFor"].as_array().into_iter().flatten() {
            real.push((device.clone(), r["name"].as_str().unwrap_or("").to_string()));
        }
    }
    real.sort();
    real
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_allocated_by_the_real_scheduler_are_shown_with_their_pods() {
    let plane = ControlPlane::start().await.unwrap();
    plane.add_nodes(&[dra_node("l4-dra-1"), dra_node("a100-mig-1"), dra_node("l4-shared-1")]).await.unwrap();
    let mut shared = slice("l4-shared-1");
    if let Some(devices) = shared["spec"]["devices"].as_array_mut() {
        devices.truncate(1);
    }
    let class = |name: &str, ty: &str| {
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
               "spec": {"selectors": [{"cel": {"expression": format!("device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{ty}'")}}]}})
    };
    let one_1g10gb = format!("device.attributes['{DRIVER}'].profile == '1g.10gb'");
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dra"}}),
            // NVIDIA's two classes: whole GPUs and MIG partitions.
            class(DRIVER, "gpu"),
            class("mig.nvidia.com", "mig"),
            slice("l4-dra-1"),
            mig_slice("a100-mig-1"),
            shared,
            template("one-gpu", DRIVER),
            template("one-lost-gpu", "gpu.example.com"),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "mig-1g10gb", "namespace": "dra"},
                   "spec": {"spec": request("mig.nvidia.com", Some(&one_1g10gb))}}),
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared-l4", "namespace": "dra"},
                   "spec": request(DRIVER, None)}),
        ])
        .unwrap();
    plane
        .apply(&[
            deployment("llm", "one-gpu", 3),
            deployment("lost", "one-lost-gpu", 1),
            deployment_on("embed", "mig-1g10gb", false, 2, "a100-mig-1"),
            deployment_on("cam-ingest", "shared-l4", true, 3, "l4-shared-1"),
        ])
        .unwrap();

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();
    let held = |v: &Value| held_on(v, "l4-dra-1");
    let pending = |v: &Value, prefix: &str| -> Option<Value> {
        v["pending"].as_array()?.iter().find(|p| p["name"].as_str().is_some_and(|n| n.starts_with(prefix))).cloned()
    };
    let v = gd
        .wait_view(Duration::from_secs(90), |v| {
            held(v).len() == 2
                && held_on(v, "a100-mig-1").len() == 2
                && held_on(v, "l4-shared-1").len() == 3
                && pending(v, "llm-").is_some_and(|p| p["reasons"].as_array().is_some_and(|r| !r.is_empty()))
                && v["diagnoses"].as_array().into_iter().flatten().any(|d| d["code"] == "dra-deviceclass-missing")
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));

    // Exactly the devices the real scheduler allocated, each to the pod its claim is reserved for.
    let real = real_allocation(&plane, "l4-dra-1");
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

    // MIG: the real allocation is two 1g.10gb partitions; gpudash shows them under GPU 0 with
    // their pods, the 3g.40gb partition free.
    let mig = real_allocation(&plane, "a100-mig-1");
    assert_eq!(held_on(&v, "a100-mig-1"), mig, "gpudash's MIG holders are the real allocation");
    let devices: Vec<&str> = mig.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(devices, ["gpu-0-mig-19-4-1", "gpu-0-mig-19-5-1"], "the scheduler chose the 1g.10gb profile");
    let a100 = v["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == "a100-mig-1").expect("a100-mig-1");
    let dra = a100["gpu_resources"].as_array().into_iter().flatten().find(|g| g["resource"] == DRIVER).expect("DRA");
    for d in dra["devices"].as_array().into_iter().flatten().filter(|d| d["type"] == "mig") {
        assert_eq!(d["parent"], "gpu-0", "{d}");
    }
    let row = &dra["slots"][0];
    let labels: Vec<&str> = row.as_array().into_iter().flatten().filter_map(|s| s["label"].as_str()).collect();
    assert_eq!(labels, ["3g.40gb", "1g.10gb", "1g.10gb"], "GPU 0's partitions in one row: {row}");

    // The shared claim: one device, three pods, as the scheduler reserved it.
    let shared = real_allocation(&plane, "l4-shared-1");
    assert_eq!(shared.len(), 3, "reserved for all three pods: {shared:?}");
    assert!(shared.iter().all(|(d, _)| d == "gpu-0"), "{shared:?}");
    assert_eq!(held_on(&v, "l4-shared-1"), shared, "gpudash shows the three on the one device");
}
