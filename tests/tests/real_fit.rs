//! The what-if check held to the real scheduler: on the demo cluster made real, each case is
//! first asked of gpudash (`POST /api/v1/fit`), then created for real; the real scheduler (or
//! admission, for a RuntimeClass that does not exist) then decides. gpudash's "fits" must be
//! the scheduler's binding — on one of the nodes gpudash named — and its "does not fit" the
//! scheduler's `Unschedulable` (or admission's refusal). Each pod is removed before the next
//! case, and gpudash must have seen it go, so every question is asked of the same cluster.

use std::time::Duration;

use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::{demo_shape, Gpudash};
use serde_json::{json, Value};

/// A case: its name, and the pod's spec (one container `m`, resources and constraints).
fn cases() -> Vec<(&'static str, Value)> {
    let res = |requests: Value, limits: Value| {
        json!({"containers": [{"name": "m", "image": "model:1",
        "resources": {"requests": requests, "limits": limits}}]})
    };
    let with = |mut spec: Value, key: &str, v: Value| {
        spec[key] = v;
        spec
    };
    let gpu = |n: &str| res(json!({"nvidia.com/gpu": n}), json!({"nvidia.com/gpu": n}));
    let mig = |n: &str| res(json!({"nvidia.com/mig-1g.5gb": n}), json!({"nvidia.com/mig-1g.5gb": n}));
    let cpu_mem = |c: &str, m: &str| res(json!({"cpu": c, "memory": m}), json!({}));
    let host = |h: &str| json!({"kubernetes.io/hostname": h});
    let arch_in = |a: &str| {
        json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
        [{"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": [a]}]}]}}})
    };
    vec![
        ("a whole GPU while every one is held", gpu("1")),
        ("one MIG slice", mig("1")),
        ("four MIG slices", mig("4")),
        ("five MIG slices", mig("5")),
        ("two whole GPUs", gpu("2")),
        ("a small CPU pod", cpu_mem("100m", "64Mi")),
        ("100 GiB of memory", cpu_mem("1", "100Gi")),
        ("300 GiB of memory", cpu_mem("1", "300Gi")),
        (
            "arm64 by node selector",
            with(cpu_mem("500m", "1Gi"), "nodeSelector", json!({"kubernetes.io/arch": "arm64"})),
        ),
        ("a GPU on press line 3", with(gpu("1"), "nodeSelector", json!({"factory.example.com/line": "press-3"}))),
        (
            "CPU work on press line 3",
            with(cpu_mem("500m", "1Gi"), "nodeSelector", json!({"factory.example.com/line": "press-3"})),
        ),
        ("7 GiB on the Orin Nano", with(cpu_mem("500m", "7Gi"), "nodeSelector", host("orin-nano-01"))),
        (
            "the tainted K3s server without a toleration",
            with(cpu_mem("100m", "64Mi"), "nodeSelector", host("k3s-server-01")),
        ),
        (
            "the K3s server with its toleration",
            with(
                with(cpu_mem("100m", "64Mi"), "nodeSelector", host("k3s-server-01")),
                "tolerations",
                json!([{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]),
            ),
        ),
        ("13 CPUs on a 12-CPU Orin", with(cpu_mem("13", "1Gi"), "nodeSelector", host("orin-agx-01"))),
        ("amd64 by required affinity", with(cpu_mem("1", "1Gi"), "affinity", arch_in("amd64"))),
        ("riscv64 by required affinity", with(cpu_mem("1", "1Gi"), "affinity", arch_in("riscv64"))),
        ("the Xavier for CPU work", with(cpu_mem("1", "1Gi"), "nodeSelector", host("xavier-nx-03"))),
        ("a MIG slice through the nvidia RuntimeClass", with(mig("1"), "runtimeClassName", json!("nvidia"))),
        ("a RuntimeClass that does not exist", with(mig("1"), "runtimeClassName", json!("nvidia-legacy"))),
        ("a GPU on a node that does not exist", with(gpu("1"), "nodeSelector", host("orin-agx-99"))),
        (
            "a MIG slice and 250 GiB",
            res(json!({"nvidia.com/mig-1g.5gb": "1", "memory": "250Gi"}), json!({"nvidia.com/mig-1g.5gb": "1"})),
        ),
    ]
}

/// What the real cluster did with the pod: `Ok(node)` bound, `Err(why)` not.
fn real_outcome(plane: &ControlPlane, name: &str, spec: &Value) -> Result<String, String> {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "fit"}, "spec": spec});
    if let Err(e) = plane.kubectl_stdin(&["create", "-f", "-"], &pod.to_string()) {
        return Err(format!("refused: {e}"));
    }
    for _ in 0..80 {
        let p = plane.kubectl_json(&["get", "pod", name, "-n", "fit", "-o", "json"]).unwrap_or(Value::Null);
        if let Some(node) = p["spec"]["nodeName"].as_str() {
            return Ok(node.to_string());
        }
        let unschedulable = p["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable");
        if let Some(c) = unschedulable {
            return Err(c["message"].as_str().unwrap_or("").to_string());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err("no decision within 20 s".into())
}

fn mentions(v: &Value, name: &str) -> bool {
    let pending = v["pending"].as_array().into_iter().flatten().any(|p| p["name"] == name);
    let holding = v["nodes"].as_array().into_iter().flatten().any(|n| {
        n["gpu_resources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|g| g["holders"].as_array().into_iter().flatten().any(|h| h["name"] == name))
    });
    pending || holding
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_what_if_check_agrees_with_the_real_scheduler_case_by_case() {
    let plane = ControlPlane::start().await.unwrap();
    let text = std::fs::read_to_string(gpudash_tests::root().join("sim/scenarios/edge.yaml")).expect("edge.yaml");
    let mut shape = demo_shape::from_scenario(&text).expect("the demo scenario");
    shape.setup.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fit"}}));
    plane.create_shape(&shape).await.unwrap();
    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();
    // The demo settled: the AGX Orin full and both waiting models waiting.
    gd.wait_view(Duration::from_secs(120), |v| {
        v["source"]["synced"] == true
            && v["pending"].as_array().is_some_and(|p| p.len() == 2)
            && v["nodes"].as_array().is_some_and(|n| n.len() == 8)
    })
    .await
    .unwrap();

    let http = reqwest::Client::new();
    let mut disagreements = Vec::new();
    let all = cases();
    assert!(all.len() >= 20, "at least 20 cases");
    for (i, (what, spec)) in all.iter().enumerate() {
        let name = format!("case-{i:02}");
        let pod =
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "fit"}, "spec": spec});
        let fit: Value = http
            .post(format!("{}/api/v1/fit", gd.url))
            .json(&json!({"yaml": pod.to_string()}))
            .send()
            .await
            .expect("fit")
            .json()
            .await
            .expect("fit JSON");
        let says_fits = fit["placeable"].as_u64().unwrap_or(0) >= 1;
        let fitting: Vec<String> = fit["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|n| n["fits"] == true)
            .filter_map(|n| n["node"].as_str().map(str::to_string))
            .collect();
        let real = tokio::task::block_in_place(|| real_outcome(&plane, &name, spec));
        match (&real, says_fits) {
            (Ok(node), true) if fitting.contains(node) => {}
            (Err(_), false) => {}
            _ => disagreements.push(format!(
                "{what}: gpudash said {} ({}), the cluster: {real:?}",
                if says_fits { "fits" } else { "does not fit" },
                fit["summary"]
            )),
        }
        // Gone from the cluster and from gpudash's view before the next question.
        let _ =
            plane.kubectl(&["delete", "pod", &name, "-n", "fit", "--grace-period=0", "--force", "--ignore-not-found"]);
        gd.wait_view(Duration::from_secs(30), |v| !mentions(v, &name)).await.unwrap();
        // A CPU-only pod is in neither list; its deletion reaches gpudash's watch in
        // milliseconds, and a second is a wide margin.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Nonsense quantities: the API server refuses them, and the what-if check refuses them in its
    // words rather than answering which nodes could run them.
    for (field, res, value, words) in [
        ("memory_request", "memory", "-5Gi", Some("must be greater than or equal to 0")),
        ("cpu_request", "cpu", "-1", Some("must be greater than or equal to 0")),
        ("gpu_count", "nvidia.com/gpu", "-3", Some("must be greater than or equal to 0")),
        ("gpu_count", "nvidia.com/gpu", "500m", Some("must be an integer")),
        ("memory_request", "memory", "999999999999999999999Ei", None),
    ] {
        let limits = if res.contains('/') { json!({ res: value }) } else { json!({}) };
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nonsense", "namespace": "fit"},
            "spec": {"containers": [{"name": "m", "image": "model:1",
                "resources": {"requests": { res: value }, "limits": limits}}]}});
        let real = plane.kubectl_stdin(&["create", "--dry-run=server", "-f", "-"], &pod.to_string());
        let r = http.post(format!("{}/api/v1/fit", gd.url)).json(&json!({ field: value })).send().await.expect("fit");
        let real_err = match (real, words) {
            (Err(e), Some(_)) => e.to_string(),
            // Taken by the API server (its value saturates): gpudash places it nowhere, as the
            // real scheduler would find no node with that much memory.
            (Ok(_), None) => {
                assert_eq!(r.status().as_u16(), 200, "{res}={value}");
                let v: Value = r.json().await.unwrap_or_default();
                assert!(
                    v["placeable"] == 0 && v["summary"].as_str().unwrap_or("").contains("Insufficient memory"),
                    "{v}"
                );
                continue;
            }
            (real, _) => panic!("{res}={value}: the API server answered {real:?}"),
        };
        assert_eq!(r.status().as_u16(), 422, "{res}={value}");
        let v: Value = r.json().await.unwrap_or_default();
        let ours = v["error"]["message"].as_str().unwrap_or("").to_string();
        if let Some(w) = words {
            assert!(real_err.contains(w) && ours.contains(w), "{res}={value}: API server: {real_err}; gpudash: {ours}");
        }
        eprintln!("{res}={value}: API server: {}; gpudash: {ours}", real_err.lines().last().unwrap_or(""));
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} cases disagree:\n{}",
        disagreements.len(),
        all.len(),
        disagreements.join("\n")
    );
}
