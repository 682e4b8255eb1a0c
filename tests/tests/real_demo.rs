//! The demo cluster made real (what `./run.sh --local-cluster` runs): the built-in edge
//! scenario's nodes, device plugins and workloads created through a real API server, placed by
//! the real scheduler, the missing RuntimeClass refused by real admission — and gpudash tells
//! the same story as in demo mode, in the real components' own words.

use std::time::Duration;

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::view::items;
use gpudash_tests::{demo_shape, Gpudash};
use serde_json::Value;

fn gpu<'a>(v: &'a Value, node: &str, resource: &str) -> Option<&'a Value> {
    let n = v["nodes"].as_array()?.iter().find(|n| n["name"] == node)?;
    n["gpu_resources"].as_array()?.iter().find(|g| g["resource"] == resource)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_cluster_on_a_real_control_plane_tells_the_demo_story() {
    let plane = ControlPlane::start().await.unwrap();
    let text = std::fs::read_to_string(gpudash_tests::root().join("sim/scenarios/edge.yaml"))
        .expect("real control plane step");
    let shape = demo_shape::from_scenario(&text).expect("real control plane step");
    assert_eq!(shape.nodes.len(), 8, "the demo's eight nodes");
    plane.create_shape(&shape).await.unwrap();
    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();

    let v = gd
        .wait_view(Duration::from_secs(120), |v| {
            v["source"]["synced"] == true
                && items(v, "nodes").len() == 8
                && items(v, "nodes").iter().all(|n| n["ready"] == true)
                && gpu(v, "orin-agx-01", "nvidia.com/gpu").is_some_and(|g| g["allocated"] == 4)
                && gpu(v, "gpu-x86-02", "nvidia.com/gpu").is_some_and(|g| g["allocated"] == 8)
                && items(v, "diagnoses").iter().any(|d| d["code"] == "runtimeclass-missing")
                && items(v, "pending").iter().filter(|p| !items(p, "reasons").is_empty()).count() >= 2
                && items(v, "diagnoses").iter().any(|d| d["code"] == "gpu-quota-exhausted")
                && gpu(v, "gpu-dra-01", "gpu.nvidia.com").is_some_and(|g| items(g, "holders").len() == 4)
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));

    // The time-sliced AGX Orin: four models on four replicas of one GPU.
    let agx = gpu(&v, "orin-agx-01", "nvidia.com/gpu").expect("real control plane step");
    assert_eq!((&agx["physical_gpus"], &agx["replicas_per_gpu"]), (&1.into(), &4.into()), "{agx}");
    assert_eq!(items(agx, "holders").len(), 4, "{agx}");
    // The Orin Nano is full with its one model; the second model aimed at it waits, and the
    // real scheduler's words name the GPU among its reasons.
    assert_eq!(gpu(&v, "orin-nano-01", "nvidia.com/gpu").expect("real control plane step")["allocated"], 1);
    let waiting: Vec<&Value> = v["pending"].as_array().into_iter().flatten().collect();
    let anomaly = waiting
        .iter()
        .find(|p| p["name"].as_str().unwrap_or("").starts_with("anomaly-detector-"))
        .unwrap_or_else(|| panic!("anomaly-detector is not Pending: {waiting:?}"));
    let message = anomaly["message"].as_str().unwrap_or("");
    assert!(message.starts_with("0/8 nodes are available:"), "the real scheduler said: {message}");
    assert!(items(anomaly, "reasons").iter().any(|r| r["reason"] == "Insufficient nvidia.com/gpu"), "{anomaly}");
    let total: u64 = items(anomaly, "reasons").iter().filter_map(|r| r["nodes"].as_u64()).sum();
    assert!(total >= 8, "every node is accounted for in the reasons: {anomaly}");
    // pose-estimator names a RuntimeClass that does not exist: real admission refuses its pods,
    // the ReplicaSet controller says so, gpudash names the Deployment.
    let rc = items(&v, "diagnoses")
        .into_iter()
        .find(|d| d["code"] == "runtimeclass-missing")
        .expect("real control plane step");
    assert!(
        rc["message"].as_str().unwrap_or("").contains("nvidia-legacy")
            || rc["name"].as_str().unwrap_or("").starts_with("pose-estimator"),
        "{rc}"
    );
    // The Xavier runs no device plugin (the demo's DaemonSet never reaches it): the model aimed at
    // it waits, and gpudash says why.
    assert!(
        items(&v, "diagnoses").iter().any(|d| d["code"] == "device-plugin-missing" && d["name"] == "xavier-nx-03"),
        "{}",
        v["diagnoses"]
    );
    // team-retail's quota: the real quota admission refuses shelf-reid's second pod while MIG
    // slices are free, the ReplicaSet controller says so, gpudash names the ReplicaSet.
    let q = items(&v, "diagnoses")
        .into_iter()
        .find(|d| d["code"] == "gpu-quota-exhausted")
        .expect("real control plane step");
    assert!(q["namespace"] == "team-retail" && q["name"].as_str().unwrap_or("").starts_with("shelf-reid-"), "{q}");
    let quota =
        items(&v, "quotas").into_iter().find(|q| q["namespace"] == "team-retail").expect("real control plane step");
    assert_eq!((&quota["used"], &quota["hard"], &quota["full"]), (&1.into(), &1.into(), &true.into()), "{quota}");
    // The DRA server: the real resourceclaim controller made the LLM's and the reranker's
    // claims from their templates, the real scheduler allocated them and the shared claim
    // the two camera pods name — one MIG device held by both.
    let dra = gpu(&v, "gpu-dra-01", "gpu.nvidia.com").expect("real control plane step");
    let shared: Vec<&Value> =
        dra["devices"].as_array().into_iter().flatten().filter(|d| items(d, "holders").len() == 2).collect();
    assert_eq!(shared.len(), 1, "one device shared by the two camera pods: {dra}");
    assert_eq!(shared[0]["type"], "mig", "{dra}");
    // The time-sliced x86 server: two GPUs × four replicas, all eight held by the pods the real
    // scheduler placed there (without an agent, which replica is on which GPU is not known).
    let l4 = gpu(&v, "gpu-x86-02", "nvidia.com/gpu").expect("real control plane step");
    assert_eq!((&l4["physical_gpus"], &l4["replicas_per_gpu"]), (&2.into(), &4.into()), "{l4}");
    assert_eq!((items(l4, "holders").len(), &l4["placement_known"]), (8, &false.into()), "{l4}");
    // The x86 server: one whole A100 and seven MIG slices, as its device plugin reported.
    assert!(gpu(&v, "gpu-x86-01", "nvidia.com/mig-1g.5gb").is_some(), "{}", v["nodes"]);
}
