//! A real node in the loop (issue 53): a kubelet, containerd and runc beside the real control
//! plane, gpudash-device-plugin on the kubelet's real device-plugin API (one Orin-like GPU,
//! time-sliced into 4 replicas with `failRequestsGreaterThanOne`), gpudash-agent on the
//! kubelet's real pod-resources socket — and what the real kubelet decides, held against what
//! gpudash says:
//!
//! - a model running: the replica the kubelet handed it is the one the agent (a pod on the
//!   node, as a site runs it) reports and the one the plugin (a DaemonSet pod) put in the
//!   container's environment (read from /proc); gpudash pulls the agent and shows the GPU by the
//!   UUID the plugin gave it, holding the model;
//! - a pod pinned by `nodeName` asking for 2 replicas: the plugin refuses it at admission, the
//!   kubelet fails it (`UnexpectedAdmissionError`) → `shared-gpu-request-too-large` with the
//!   count; a pod pinned by `nodeName` to the full GPU: the kubelet's device manager refuses it
//!   → `gpu-admission-rejected` with its words;
//! - a model allocating past its memory limit: `OOMKilled` (137) in a crash loop →
//!   `gpu-model-oom-killed`;
//! - an image that cannot be pulled holding a replica while another model waits →
//!   `gpu-held-not-running`;
//! - a model filling its emptyDir past its sizeLimit: evicted by the kubelet →
//!   `gpu-pod-evicted`, told as local storage (not memory);
//! - the GPU marked unhealthy by the plugin: allocatable 0 of 4 → `gpu-unhealthy`, not
//!   `device-plugin-missing`;
//! - the kubelet restarted while the plugin holds back: capacity 0 → `device-plugin-missing`
//!   (its pod runs but registered nothing); then it registers again and the running model keeps
//!   its replica;
//! - the plugin's DaemonSet deleted: allocatable 0 of 4 → `device-plugin-missing`, not
//!   `gpu-unhealthy`;
//! - the kubelet stopped: the real node-lifecycle controller marks the node NotReady →
//!   `gpu-node-down`;
//!
//! and then the machine is left as found (processes, mounts, the bridge, cgroups, sysctls).

use std::time::{Duration, Instant};

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::real_node::{self, NodeSpec, RealNode};
use gpudash_tests::view::{diagnosis, items, pending};
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

const NODE: &str = "orin-real-1";

/// A bare pod on the real node's line: the model image with `args`, `gpus` replicas, `memory`.
fn model(name: &str, args: &[&str], gpus: u32, extra: Value) -> Value {
    let mut container = json!({"name": "model", "image": "gpudash.local/model:1", "imagePullPolicy": "IfNotPresent",
        "args": args, "resources": {"limits": {"memory": "64Mi", "nvidia.com/gpu": gpus.to_string()}}});
    if let (Some(c), Some(e)) = (container.as_object_mut(), extra.get("container").and_then(Value::as_object)) {
        c.extend(e.clone());
    }
    let mut spec = json!({"nodeSelector": {"kubernetes.io/hostname": NODE}, "automountServiceAccountToken": false,
        "terminationGracePeriodSeconds": 1, "containers": [container]});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.get("spec").and_then(Value::as_object)) {
        s.extend(e.clone());
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "vision", "labels": {"app": name}},
           "spec": spec})
}

fn field(plane: &ControlPlane, pod: &str, path: &str) -> String {
    plane.kubectl(&["get", "pod", "-n", "vision", pod, "-o", &format!("jsonpath={path}")]).unwrap_or_default()
}

/// Waits until gpudash names the real node with `code`; the view and the diagnosis's words.
async fn told(gd: &Gpudash, code: &str, limit: Duration) -> anyhow::Result<(Value, String)> {
    let v = gd.wait_view(limit, |v| diagnosis(v, code, NODE).is_some()).await?;
    let m = diagnosis(&v, code, NODE).unwrap_or_default()["message"].as_str().unwrap_or("").to_string();
    Ok((v, m))
}

/// What the agent says the kubelet handed `pod` (device IDs of `nvidia.com/gpu`).
fn agent_ids(report: &Value, pod: &str) -> Vec<String> {
    let pods = items(&report["kubelet"]["value"], "pods");
    let p = pods.into_iter().find(|p| p["namespace"] == "vision" && p["name"] == pod).unwrap_or_default();
    items(&p, "devices")
        .into_iter()
        .filter(|d| d["resource"] == "nvidia.com/gpu")
        .flat_map(|d| items(&d, "ids"))
        .filter_map(|i| i.as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_kubelets_decisions_are_seen_and_explained() {
    if let Some(why) = real_node::unavailable() {
        panic!("the real node cannot run here: {why}");
    }
    let t0 = Instant::now();
    let plane = ControlPlane::start().await.unwrap();
    plane
        .apply(&[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}})])
        .expect("the namespace");
    let mut node = RealNode::start(&plane, NodeSpec::jetson(NODE, 4)).await.unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "figure: the real node Ready with 4 replicas allocatable {:.1} s after the start",
        t0.elapsed().as_secs_f64()
    );
    let fail = |node: &RealNode, e: &dyn std::fmt::Display| -> ! {
        let pods = plane.kubectl(&["get", "pods", "-n", "vision", "-o", "wide"]).unwrap_or_default();
        let path = "jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.reason} {.status.message}{\"\\n\"}{end}";
        let states = plane.kubectl(&["get", "pods", "-n", "vision", "-o", path]).unwrap_or_default();
        let events = plane.kubectl(&["get", "events", "-n", "vision"]).unwrap_or_default();
        panic!("{e}\n{pods}\n{states}\n{events}\n{}", node.logs(30))
    };

    // The model, then the pod pinned past the scheduler asking for two replicas.
    plane.apply(&[model("detector", &["--serve=:8000"], 1, json!({}))]).expect("detector");
    node.wait_until(&plane, "detector Running", Duration::from_secs(60), |p| {
        field(p, "detector", "{.status.phase}") == "Running"
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    plane.apply(&[model("seam-checker", &[], 2, json!({"spec": {"nodeName": NODE}}))]).expect("seam-checker");
    node.wait_until(&plane, "seam-checker Failed", Duration::from_secs(60), |p| {
        field(p, "seam-checker", "{.status.phase}") == "Failed"
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    let reason = field(&plane, "seam-checker", "{.status.reason}");
    let message = field(&plane, "seam-checker", "{.status.message}");
    assert_eq!(reason, "UnexpectedAdmissionError", "{message}");
    assert!(message.contains("maximum request size for shared resources is 1"), "{message}");

    // The replica map: the kubelet's (through the agent on the real socket) and the plugin's
    // (the container's environment) agree.
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpudash"}}),
            node.agent_pod("gpudash", &gpudash_tests::bin().with_file_name("gpudash-agent")),
        ])
        .expect("the agent");
    let agent = |p: &ControlPlane, path: &str| {
        p.kubectl(&["get", "pod", "-n", "gpudash", "gpudash-agent", "-o", &format!("jsonpath={path}")])
            .unwrap_or_default()
    };
    node.wait_until(&plane, "the agent's pod Running", Duration::from_secs(60), |p| {
        agent(p, "{.status.phase}") == "Running"
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    let agent_ip = agent(&plane, "{.status.podIP}");
    let uuid = node.gpu_uuid(0);
    let report_url = format!("http://{agent_ip}:9401/v1/report");
    let t = Instant::now();
    let report = loop {
        let r: Value = match reqwest::get(&report_url).await {
            Ok(r) => r.json().await.unwrap_or_default(),
            Err(e) => json!({"error": e.to_string()}),
        };
        if !agent_ids(&r, "detector").is_empty() {
            break r;
        }
        if t.elapsed() > Duration::from_secs(30) {
            let log = std::fs::read_dir("/var/log/pods")
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("gpudash_gpudash-agent_"))
                .flat_map(|e| std::fs::read_dir(e.path().join("agent")).into_iter().flatten().flatten())
                .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
                .collect::<String>();
            let sh = |c: &str| {
                std::process::Command::new("sh")
                    .args(["-c", c])
                    .output()
                    .map(|o| {
                        format!("$ {c}\n{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
                    })
                    .unwrap_or_default()
            };
            let net = [
                sh("ip -o addr; ip route; ip -o link; bridge link 2>&1 || true"),
                sh(&format!("curl -sv -m 3 {report_url} 2>&1 | tail -5")),
            ]
            .join("\n");
            fail(
                &node,
                &format!("the agent at {report_url} never listed detector's replica: {r}\nits log:\n{log}\n{net}"),
            );
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let ids = agent_ids(&report, "detector");
    assert_eq!(ids.len(), 1, "{report}");
    assert!(ids[0].starts_with(&format!("{uuid}::")), "a replica of the GPU, as NVIDIA names it: {ids:?}");
    let uid = field(&plane, "detector", "{.metadata.uid}");
    let env = node.container_env(&uid).unwrap_or_default();
    assert_eq!(env.get("NVIDIA_VISIBLE_DEVICES"), Some(&uuid), "what the plugin handed the container: {env:?}");
    let allocatable = items(&report["kubelet"]["value"], "allocatable");
    let all: Vec<Value> =
        allocatable.iter().filter(|d| d["resource"] == "nvidia.com/gpu").flat_map(|d| items(d, "ids")).collect();
    assert_eq!(all.len(), 4, "four replicas allocatable: {report}");
    assert!(agent_ids(&report, "seam-checker").is_empty(), "a refused pod holds nothing: {report}");

    // An OOM-killed model, an image that cannot be pulled holding a replica, a model filling
    // its ephemeral storage; then the last replica taken and a model left waiting.
    plane
        .apply(&[
            model("llm-chat", &["--alloc-mib=200"], 1, json!({})),
            model(
                "pallet-reader",
                &[],
                1,
                json!({"container": {"image": "gpudash.local/pallet-reader:1.0", "imagePullPolicy": "IfNotPresent"}}),
            ),
            model(
                "asr-whisper",
                &["--write-mib=24", "--write-to=/scratch/fill"],
                1,
                json!({"container": {"volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]},
                       "spec": {"volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "4Mi"}}]}}),
            ),
        ])
        .expect("the failing models");
    plane.apply(&[model("forklift-guard", &[], 1, json!({}))]).expect("forklift-guard");
    // The eviction frees a replica and the waiting model takes it; then the GPU is full, a pod
    // pinned to it by nodeName is refused by the kubelet's device manager, and a last model
    // waits for a replica the image that cannot be pulled holds.
    node.wait_until(&plane, "asr-whisper evicted and forklift-guard bound", Duration::from_secs(120), |p| {
        matches!(field(p, "asr-whisper", "{.status.phase}").as_str(), "Failed" | "Succeeded")
            && !field(p, "forklift-guard", "{.spec.nodeName}").is_empty()
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    // As the real kubelet leaves an evicted pod whose container exits 0 on SIGTERM.
    eprintln!("asr-whisper's status: {}", field(&plane, "asr-whisper", "{.status}"));
    plane
        .apply(&[
            model("weld-checker", &[], 1, json!({"spec": {"nodeName": NODE}})),
            model("dock-guard", &[], 1, json!({})),
        ])
        .expect("weld-checker and dock-guard");
    node.wait_until(&plane, "weld-checker Failed", Duration::from_secs(60), |p| {
        field(p, "weld-checker", "{.status.phase}") == "Failed"
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    let message = field(&plane, "weld-checker", "{.status.message}");
    assert_eq!(field(&plane, "weld-checker", "{.status.reason}"), "UnexpectedAdmissionError", "{message}");
    assert!(message.contains("requested number of devices unavailable for nvidia.com/gpu"), "{message}");

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&[
        "--kubeconfig",
        &kc,
        "--held-not-running-minutes",
        "0.05",
        "--agent-namespace",
        "gpudash",
        "--agent-interval",
        "0.5",
    ])
    .await
    .unwrap();
    let v = gd
        .wait_view(Duration::from_secs(120), |v| {
            diagnosis(v, "shared-gpu-request-too-large", "seam-checker").is_some()
                && diagnosis(v, "gpu-admission-rejected", "weld-checker").is_some()
                && diagnosis(v, "gpu-model-oom-killed", "llm-chat").is_some()
                && diagnosis(v, "gpu-held-not-running", "pallet-reader").is_some_and(|d| d["severity"] == "critical")
                && diagnosis(v, "gpu-pod-evicted", "asr-whisper").is_some()
                && pending(v, "dock-guard").is_some()
                && items(v, "nodes").iter().any(|n| n["name"] == NODE && !n["agent"].is_null())
        })
        .await
        .unwrap_or_else(|e| fail(&node, &e));
    let said = |d: Option<Value>| d.unwrap_or_default()["message"].as_str().unwrap_or("").to_string();
    let m = said(diagnosis(&v, "shared-gpu-request-too-large", "seam-checker"));
    assert!(m.contains("asks for 2 replicas of a time-sliced nvidia.com/gpu"), "{m}");
    let m = said(diagnosis(&v, "gpu-admission-rejected", "weld-checker"));
    assert!(m.contains("UnexpectedAdmissionError") && m.contains("requested number of devices unavailable"), "{m}");
    assert!(m.contains("spec.nodeName bypasses the scheduler"), "{m}");
    let m = said(diagnosis(&v, "gpu-model-oom-killed", "llm-chat"));
    assert!(m.contains("OOMKilled, exit 137") && m.contains("unified-memory board"), "{m}");
    let m = said(diagnosis(&v, "gpu-held-not-running", "pallet-reader"));
    assert!(m.contains("ImagePullBackOff") || m.contains("ErrImagePull"), "{m}");
    let waiting = pending(&v, "dock-guard").unwrap_or_default();
    assert!(items(&waiting, "diagnoses").contains(&json!("gpu-held-not-running")), "{waiting}");
    let m = said(diagnosis(&v, "gpu-pod-evicted", "asr-whisper"));
    assert!(m.contains("EmptyDir volume \"scratch\" exceeds the limit") && m.contains("for local storage"), "{m}");
    for code in ["shared-gpu-request-too-large", "gpu-admission-rejected", "gpu-pod-evicted", "gpu-held-not-running"] {
        let d = items(&v, "diagnoses").into_iter().find(|d| d["code"] == code).unwrap_or_default();
        eprintln!("{code}: {}", d["message"]);
    }
    let board = items(&v, "nodes").into_iter().find(|n| n["name"] == NODE).unwrap_or_default();
    eprintln!("the real node as gpudash shows it: {board}");
    // The agent's pod, found and pulled by gpudash: the GPU by the UUID the plugin gave it, and
    // the model on it as the kubelet allocated.
    assert_eq!(board["agent"]["stale"], json!(false), "{board}");
    let devices = items(&board["gpu_resources"][0], "devices");
    let gpu = devices.iter().find(|d| d["name"] == uuid.as_str()).unwrap_or_else(|| panic!("no {uuid}: {board}"));
    let holders = items(gpu, "holders");
    assert!(
        holders.iter().any(|h| h.as_str().is_some_and(|h| h.contains("detector")) || h["name"] == "detector"),
        "{gpu}"
    );
    eprintln!("figure: the four failures named {:.1} s after the start", t0.elapsed().as_secs_f64());

    // The GPU marked unhealthy by the plugin (its DaemonSet pod runs): allocatable 0 of 4.
    node.set_unhealthy(std::slice::from_ref(&uuid)).unwrap();
    let (v, m) = told(&gd, "gpu-unhealthy", Duration::from_secs(60)).await.unwrap_or_else(|e| fail(&node, &e));
    eprintln!("gpu-unhealthy: {m}");
    assert!(diagnosis(&v, "device-plugin-missing", NODE).is_none(), "the plugin runs: {m}");
    assert!(m.contains("integrated GPU") && m.contains("tegrastats"), "an Orin's GPU is integrated: {m}");
    assert_eq!((real_node::allocatable(&plane, NODE), real_node::capacity(&plane, NODE)), (Some(0), Some(4)));
    node.set_unhealthy(&[]).unwrap();
    node.wait_until(&plane, "the GPU healthy again", Duration::from_secs(60), |p| {
        real_node::allocatable(p, NODE) == Some(4)
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));

    // The kubelet restarted while the plugin is slow to come back: the kubelet reports 0 GPUs
    // until the plugin registers again (its checkpoint keeps the running model's replica).
    let before = node.registrations();
    node.hold_registration(true).unwrap();
    node.kill_kubelet();
    node.start_kubelet().unwrap();
    node.wait_until(&plane, "capacity 0 after the kubelet's restart", Duration::from_secs(60), |p| {
        real_node::capacity(p, NODE) == Some(0)
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    let (v, m) = told(&gd, "device-plugin-missing", Duration::from_secs(60)).await.unwrap_or_else(|e| fail(&node, &e));
    eprintln!("device-plugin-missing (registration held): {m}");
    assert!(
        m.contains("kube-system/nvidia-device-plugin-") && m.contains("kubelet restart"),
        "the plugin's pod runs but registered nothing since the kubelet restarted: {m}"
    );
    assert!(diagnosis(&v, "gpu-unhealthy", NODE).is_none(), "{m}");
    node.hold_registration(false).unwrap();
    node.wait_until(&plane, "the plugin registered again", Duration::from_secs(60), |p| {
        node.registrations() > before && real_node::allocatable(p, NODE) == Some(4)
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    assert_eq!(field(&plane, "detector", "{.status.phase}"), "Running");
    assert_eq!(node.container_env(&uid).and_then(|e| e.get("NVIDIA_VISIBLE_DEVICES").cloned()), Some(uuid.clone()));
    gd.wait_view(Duration::from_secs(30), |v| diagnosis(v, "device-plugin-missing", NODE).is_none())
        .await
        .unwrap_or_else(|e| fail(&node, &e));

    // The plugin removed for good (its DaemonSet deleted): the kubelet takes its GPUs out of
    // allocatable at once (capacity goes after a grace period) → `device-plugin-missing`, not
    // `gpu-unhealthy`.
    plane.kubectl(&["delete", "daemonset", "-n", "kube-system", "nvidia-device-plugin", "--wait=true"]).unwrap();
    node.wait_until(&plane, "allocatable 0 without the plugin", Duration::from_secs(60), |p| {
        real_node::allocatable(p, NODE) == Some(0)
    })
    .await
    .unwrap_or_else(|e| fail(&node, &e));
    let (v, m) = told(&gd, "device-plugin-missing", Duration::from_secs(60)).await.unwrap_or_else(|e| fail(&node, &e));
    eprintln!("device-plugin-missing (plugin gone): {m}");
    assert!(m.contains("capacity but 0 allocatable"), "{m}");
    assert!(diagnosis(&v, "gpu-unhealthy", NODE).is_none(), "{m}");
    eprintln!(
        "figure: the plugin gone → capacity {:?}, allocatable {:?}",
        real_node::capacity(&plane, NODE),
        real_node::allocatable(&plane, NODE)
    );

    // The kubelet stopped: NotReady from the real node-lifecycle controller → gpu-node-down.
    node.kill_kubelet();
    let (_, m) = told(&gd, "gpu-node-down", Duration::from_secs(90)).await.unwrap_or_else(|e| fail(&node, &e));
    eprintln!("gpu-node-down: {m}");
    assert!(m.contains(NODE), "{m}");

    let problems = node.stop();
    assert!(problems.is_empty(), "the node could not undo: {problems:?}");
    let left = node.left_as_found();
    assert!(left.is_empty(), "the machine is not as the node found it: {left:#?}");
    eprintln!("figure: the real-node test took {:.1} s", t0.elapsed().as_secs_f64());
}
