//! Generated clusters: a mix of Jetson boards with time-slicing, MIG servers, whole-GPU servers
//! and CPU nodes, ~30 pods a node with GPU pods within capacity, and some Pending pods.

use serde_json::{json, Value};

/// A generated cluster.
pub struct Generated {
    /// Objects for the simulator.
    pub objects: Vec<Value>,
    /// Allocated GPU units per node, as generated (to check the peer and gpudash against).
    pub allocated: Vec<(String, u64)>,
}

fn node(name: &str, kind: usize) -> (Value, Vec<(&'static str, u64)>) {
    let (arch, labels, gpus, mem): (&str, Value, Vec<(&'static str, u64)>, &str) = match kind {
        0 => (
            "arm64",
            json!({"nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing",
                "nvidia.com/gpu.product": "NVIDIA-Jetson-AGX-Orin-64GB-SHARED"}),
            vec![("nvidia.com/gpu", 4)],
            "64335836Ki",
        ),
        1 => (
            "amd64",
            json!({"nvidia.com/gpu.count": "2", "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB"}),
            vec![("nvidia.com/gpu", 1), ("nvidia.com/mig-1g.5gb", 7)],
            "263846012Ki",
        ),
        2 => (
            "amd64",
            json!({"nvidia.com/gpu.count": "2", "nvidia.com/gpu.product": "NVIDIA-L4"}),
            vec![("nvidia.com/gpu", 2)],
            "131923006Ki",
        ),
        _ => ("amd64", json!({}), vec![], "32853524Ki"),
    };
    let mut l = labels.as_object().cloned().unwrap_or_default();
    l.insert("kubernetes.io/arch".into(), json!(arch));
    l.insert("kubernetes.io/hostname".into(), json!(name));
    l.insert("node.kubernetes.io/instance-type".into(), json!("k3s"));
    let mut cap = serde_json::Map::new();
    cap.insert("cpu".into(), json!("16"));
    cap.insert("memory".into(), json!(mem));
    cap.insert("pods".into(), json!("110"));
    for (r, n) in &gpus {
        cap.insert((*r).into(), json!(n.to_string()));
    }
    let kernel = if arch == "arm64" { "5.15.148-tegra" } else { "6.8.0-49-generic" };
    let n = json!({
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": l},
        "status": {"capacity": cap, "allocatable": cap,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"architecture": arch, "kernelVersion": kernel, "bootID": "", "containerRuntimeVersion": "containerd://1.7.23-k3s2",
                "kubeProxyVersion": "v1.31.6+k3s1", "kubeletVersion": "v1.31.6+k3s1", "machineID": "", "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS", "systemUUID": ""}}
    });
    (n, gpus)
}

/// The probe node whose `gpudash.dev/seq` label the benchmark bumps to time a change end to end.
pub fn probe_node(seq: u64) -> Value {
    let small = json!({"cpu": "1", "memory": "1Gi", "pods": "10"});
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "probe-node", "labels": {"gpudash.dev/seq": seq.to_string()}},
        "status": {"capacity": small, "allocatable": small, "conditions": [{"type": "Ready", "status": "True"}]}
    })
}

/// A pod on `node` (or Pending when `node` is None) requesting `gpu`.
pub fn pod(ns: &str, name: &str, node: Option<&str>, gpu: Option<(&str, u64)>, mem_gi: u64) -> Value {
    let mut limits = serde_json::Map::new();
    limits.insert("memory".into(), json!(format!("{}Gi", mem_gi + 1)));
    if let Some((r, n)) = gpu {
        limits.insert(r.into(), json!(n.to_string()));
    }
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"runtimeClassName": "nvidia", "schedulerName": "default-scheduler",
                 "containers": [{"name": "c", "image": "registry.local/model:1",
                     "resources": {"requests": {"cpu": "250m", "memory": format!("{mem_gi}Gi")}, "limits": limits}}]},
        "status": {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}]}
    });
    match node {
        Some(n) => p["spec"]["nodeName"] = json!(n),
        None => {
            p["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: \
                    0/3 nodes are available: 3 Preemption is not helpful for scheduling."}]});
        }
    }
    p
}

/// One GPU pod in this many is OOM-killed and crash-looping in the generated clusters (0: none;
/// `--failing-every`).
pub static FAILING_EVERY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(50);

/// Gives a running pod the status of a model OOM-killed at its limit and crash-looping.
fn crash_looping(p: &mut Value) {
    let name = p["metadata"]["name"].as_str().unwrap_or("").to_string();
    let ns = p["metadata"]["namespace"].as_str().unwrap_or("").to_string();
    p["status"]["containerStatuses"] = json!([{
        "name": "c", "image": "registry.local/model:1", "imageID": "", "ready": false, "started": false, "restartCount": 12,
        "state": {"waiting": {"reason": "CrashLoopBackOff",
            "message": format!("back-off 5m0s restarting failed container=c pod={name}_{ns}(uid-{name})")}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
            "startedAt": "2026-12-07T00:00:00Z", "finishedAt": "2026-12-07T00:01:00Z"}}}]);
    p["status"]["conditions"] =
        json!([{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}]);
}

/// `nodes` nodes with ~`pods_per_node` pods each.
pub fn generate(nodes: usize, pods_per_node: usize) -> Generated {
    let mut objects = vec![
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}),
        probe_node(0),
    ];
    let mut allocated = Vec::new();
    for i in 0..nodes {
        let name = format!("node-{i:04}");
        let (n, gpus) = node(&name, i % 5 % 4);
        objects.push(n);
        let mut alloc = 0;
        let mut slots: Vec<(&str, u64)> =
            gpus.iter().flat_map(|(r, c)| std::iter::repeat_n(*r, *c as usize)).map(|r| (r, 1)).collect();
        for j in 0..pods_per_node {
            let gpu = slots.pop();
            if gpu.is_some() {
                alloc += 1;
            }
            let mut p =
                pod(&format!("ns-{}", j % 7), &format!("p-{i:04}-{j:02}"), Some(&name), gpu, 1 + (j as u64 % 3));
            // One GPU pod in fifty OOM-killed and crash-looping: the container states gpudash keeps
            // for GPU pods (what a site with failing models has), as the kubelet reports them.
            let every = FAILING_EVERY.load(std::sync::atomic::Ordering::Relaxed);
            if gpu.is_some() && every > 0 && (i * pods_per_node + j) % every == 7 % every {
                crash_looping(&mut p);
            }
            objects.push(p);
        }
        allocated.push((name, alloc));
        if i % 50 == 0 {
            let pname = format!("waiting-{i:04}");
            objects.push(pod("ml", &pname, None, Some(("nvidia.com/gpu", 1)), 2));
            objects.push(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": format!("{pname}.1"), "namespace": "ml"},
                "involvedObject": {"kind": "Pod", "name": pname, "namespace": "ml"}, "reason": "FailedScheduling", "type": "Warning",
                "message": "0/3 nodes are available: 1 Insufficient nvidia.com/gpu."}));
        }
    }
    Generated { objects, allocated }
}

/// A claim for one GPU of `node`'s pool, allocated `device`, reserved for `pod` (or for no pod).
pub fn dra_claim(ns: &str, name: &str, node: &str, device: &str, pod: Option<&str>) -> Value {
    let reserved: Vec<Value> =
        pod.map(|p| json!({"resource": "pods", "name": p, "uid": format!("uid-{p}")})).into_iter().collect();
    json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": device}]},
                                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                   "reservedFor": reserved}
    })
}

/// The GPU Operator's DRA mode at scale: `nodes` GPU servers, each publishing one ResourceSlice
/// of 8 GPUs (no device plugin), every GPU allocated to a claim used by a pod on that node
/// (8 claims a node), ~`pods_per_node` pods a node in all.
pub fn generate_dra(nodes: usize, pods_per_node: usize) -> Generated {
    let mut objects = vec![
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}),
        probe_node(0),
    ];
    let mut allocated = Vec::new();
    for i in 0..nodes {
        let name = format!("node-{i:04}");
        let (mut n, _) = node(&name, 3);
        n["metadata"]["labels"]["nvidia.com/gpu.present"] = json!("true");
        objects.push(n);
        let devices: Vec<Value> = (0..8)
            .map(|g| {
                json!({"name": format!("gpu-{g}"), "attributes": {
                "type": {"string": "gpu"}, "index": {"int": g}, "productName": {"string": "NVIDIA L40S"},
                "uuid": {"string": format!("GPU-{i:08x}-0000-4000-8000-{g:012x}")}},
                "capacity": {"memory": {"value": "46068Mi"}}})
            })
            .collect();
        objects.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": format!("{name}-gpu.nvidia.com-a1b2c")},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}, "devices": devices}}));
        for j in 0..pods_per_node {
            let ns = format!("ns-{}", j % 7);
            let pname = format!("p-{i:04}-{j:02}");
            let mut p = pod(&ns, &pname, Some(&name), None, 1 + (j as u64 % 3));
            // With the DRA driver, devices come through CDI: no pod names the NVIDIA runtime.
            if let Some(spec) = p["spec"].as_object_mut() {
                spec.remove("runtimeClassName");
            }
            if j < 8 {
                let claim = format!("{pname}-gpu");
                objects.push(dra_claim(&ns, &claim, &name, &format!("gpu-{j}"), Some(&pname)));
                p["spec"]["resourceClaims"] = json!([{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]);
                p["status"]["resourceClaimStatuses"] = json!([{"name": "gpu", "resourceClaimName": claim}]);
            }
            objects.push(p);
        }
        allocated.push((name, 8));
    }
    Generated { objects, allocated }
}
