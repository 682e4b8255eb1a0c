//! The pod-resources client against the simulator's kubelet socket: a node with two GPUs
//! time-sliced four ways and a Jetson, pods bound to both; then the agent binary serving it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gpudash_agent::kubelet as podresources;

const SCENARIO: &str = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-ts-01
    labels: {kubernetes.io/arch: amd64, nvidia.com/gpu.count: "2", nvidia.com/gpu.replicas: "4", nvidia.com/gpu.product: NVIDIA-RTX-A5000-SHARED}
  status:
    capacity: {cpu: "16", memory: 65536Mi, nvidia.com/gpu: "8"}
    allocatable: {cpu: "16", memory: 65536Mi, nvidia.com/gpu: "8"}
    nodeInfo: {kernelVersion: 6.1.0-28-amd64, architecture: amd64}
- apiVersion: v1
  kind: Node
  metadata:
    name: orin-nano-01
    labels: {kubernetes.io/arch: arm64}
  status:
    capacity: {cpu: "6", memory: 7802716Ki, nvidia.com/gpu: "1"}
    allocatable: {cpu: "6", memory: 7802716Ki, nvidia.com/gpu: "1"}
    nodeInfo: {kernelVersion: 5.15.148-tegra, architecture: arm64}
- {apiVersion: v1, kind: Pod, metadata: {name: detect-a, namespace: vision, creationTimestamp: "2026-12-01T08:00:00Z"}, spec: {nodeName: gpu-ts-01, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: detect-b, namespace: vision, creationTimestamp: "2026-12-01T08:01:00Z"}, spec: {nodeName: gpu-ts-01, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: llm, namespace: ml, creationTimestamp: "2026-12-01T08:02:00Z"}, spec: {nodeName: gpu-ts-01, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "2"}}}, {name: sidecar}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: ml, creationTimestamp: "2026-12-01T08:03:00Z"}, spec: {nodeName: gpu-ts-01, containers: [{name: main}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: cam, namespace: vision, creationTimestamp: "2026-12-01T08:04:00Z"}, spec: {nodeName: orin-nano-01, containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
"#;

fn sim() -> gpudash_sim::Simulator {
    let scenario = gpudash_sim::Scenario::from_text("agent test", SCENARIO).expect("the test scenario");
    gpudash_sim::Simulator::new(scenario)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubelets_device_ids_name_the_gpu_and_replica_each_pod_holds() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim();
    let sockets = gpudash_sim::kubelet::serve(&sim, dir.path()).unwrap();
    let a = podresources::read(&sockets.sockets["gpu-ts-01"], Duration::from_secs(5)).await.unwrap();
    assert_eq!(a.allocatable.len(), 1);
    assert_eq!(a.allocatable[0].resource, "nvidia.com/gpu");
    assert_eq!(a.allocatable[0].ids.len(), 8);
    let gpus: std::collections::BTreeSet<&str> =
        a.allocatable[0].ids.iter().map(|i| i.split_once("::").map_or(i.as_str(), |(g, _)| g)).collect();
    assert_eq!(gpus.len(), 2, "two physical GPUs behind eight replicas: {:?}", a.allocatable[0].ids);
    let names: Vec<String> = a.pods.iter().map(|p| format!("{}/{}", p.namespace, p.name)).collect();
    assert_eq!(names, ["ml/llm", "vision/detect-a", "vision/detect-b"], "pods without GPUs are left out");
    let ids = |n: &str| a.pods.iter().find(|p| p.name == n).map(|p| p.devices[0].ids.clone()).unwrap_or_default();
    let gpu = |id: &str| id.split_once("::").map(|(g, r)| (g.to_string(), r.to_string()));
    let (ga, gb) = (gpu(&ids("detect-a")[0]), gpu(&ids("detect-b")[0]));
    assert!(ga.is_some() && gb.is_some());
    assert_ne!(ga.map(|g| g.0), gb.map(|g| g.0), "the plugin spreads replicas over the GPUs");
    assert_eq!(ids("llm").len(), 2);

    let jetson = podresources::read(&sockets.sockets["orin-nano-01"], Duration::from_secs(5)).await.unwrap();
    assert_eq!(jetson.allocatable[0].ids, ["tegra"]);
    assert_eq!(jetson.pods[0].devices[0].ids, ["tegra"]);

    // A pod that goes gives its replica back; the others keep theirs.
    assert!(sim.delete("Pod", "vision", "detect-a"));
    let after = podresources::read(&sockets.sockets["gpu-ts-01"], Duration::from_secs(5)).await.unwrap();
    assert_eq!(after.pods.len(), 2);
    assert_eq!(
        after.pods.iter().find(|p| p.name == "detect-b").map(|p| p.devices[0].ids.clone()),
        Some(ids("detect-b"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_socket_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = podresources::read(&dir.path().join("kubelet.sock"), Duration::from_secs(2)).await;
    let msg = err.map(|_| String::new()).unwrap_or_else(|e| e.to_string());
    assert!(msg.contains("pod-resources socket") && msg.contains("kubelet.sock"), "{msg}");
}

fn report(port: u16) -> serde_json::Value {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return serde_json::Value::Null };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.write_all(b"GET /v1/report HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split("\r\n\r\n").nth(1).and_then(|b| serde_json::from_str(b).ok()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_serves_the_kubelets_map_and_keeps_it_when_the_kubelet_goes() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim();
    let sockets = gpudash_sim::kubelet::serve(&sim, dir.path()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_or(0, |a| a.port());
    let socket = sockets.sockets["gpu-ts-01"].display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpudash-agent"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--node", "gpu-ts-01", "--interval", "0.2"])
        .args(["--pod-resources", &socket])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = |want: &dyn Fn(&serde_json::Value) -> bool| {
        let t = Instant::now();
        loop {
            let r = report(port);
            if want(&r) || t.elapsed() > Duration::from_secs(15) {
                return r;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let r = tokio::task::block_in_place(|| {
        until(&|r| r["kubelet"]["value"]["pods"].as_array().is_some_and(|p| p.len() == 3))
    });
    assert_eq!(r["version"], 1);
    assert_eq!(r["node"], "gpu-ts-01");
    assert!(r["tegrastats"].is_null() && r["dcgm"].is_null(), "sources not asked for are null: {r}");
    let seen = r["kubelet"]["seen_at"].as_u64();
    assert!(seen.is_some(), "{r}");
    drop(sockets);
    let r = tokio::task::block_in_place(|| until(&|r| r["kubelet"]["error"].is_string()));
    let _ = child.kill();
    let _ = child.wait();
    assert!(r["kubelet"]["error"].as_str().is_some_and(|e| e.contains("pod-resources socket")), "{r}");
    assert_eq!(r["kubelet"]["value"]["pods"].as_array().map(Vec::len), Some(3), "the last map is kept: {r}");
    assert!(r["kubelet"]["seen_at"].as_u64() >= seen, "with the time it was read: {r}");
}
