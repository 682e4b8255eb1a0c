//! gpudash against a real control plane (kine/SQLite, kube-apiserver, kube-controller-manager,
//! kube-scheduler, kwok as the kubelets; `scripts/control-plane.sh build`), run as a user runs
//! it: the project's manifests accepted by the real API server's schemas, its ServiceAccount's
//! RBAC applied, gpudash started with that ServiceAccount's token. The real scheduler places a
//! Deployment's models on a time-sliced Jetson and leaves the fifth Pending in its own words;
//! gpudash's view is held to that. The API server is then killed (-9) and restarted on the same
//! datastore: gpudash says stale, then recovers to the view a fresh gpudash derives. The audit
//! log shows that gpudash only ever read, and that a list of 5,000 pods came in pages.
//!
//! One plane for the binary (its start costs seconds), so this is one test in steps.

use std::time::Duration;

use gpudash_tests::control_plane::{audit_entries, ControlPlane};
use gpudash_tests::view::items;
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

const SA: &str = "system:serviceaccount:gpudash:gpudash";

fn node<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["nodes"].as_array()?.iter().find(|n| n["name"] == name)
}

/// The parts of a view that depend on the cluster alone (no revision, clock or source state).
fn cluster_part(v: &Value) -> Value {
    let mut pending = items(v, "pending");
    pending.sort_by_key(|p| format!("{}/{}", p["namespace"], p["name"]));
    let mut nodes = items(v, "nodes");
    nodes.sort_by_key(|n| n["name"].to_string());
    let mut diagnoses = items(v, "diagnoses");
    diagnoses.sort_by_key(|d| format!("{}{}{}", d["code"], d["namespace"], d["name"]));
    gpudash_tests::without_since(&json!({"nodes": nodes, "pending": pending, "diagnoses": diagnoses}))
}

/// A kwok node shaped like a time-sliced Jetson AGX Orin as K3s registers it: the labels a
/// kubelet and gpu-feature-discovery set; the GPU capacity comes later by a status patch.
fn jetson(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake", "k3s.io/node-args": "[\"agent\"]"},
            "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64",
                "node.kubernetes.io/instance-type": "k3s", "type": "kwok",
                "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4",
                "nvidia.com/gpu.sharing-strategy": "time-slicing",
                "nvidia.com/gpu.product": "Orin-SHARED", "nvidia.com/gpu.memory": "62841"
            }
        },
        "spec": {}
    })
}

fn models(ns: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "detector", "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "detector"}},
            "template": {
                "metadata": {"labels": {"app": "detector"}},
                "spec": {
                    "runtimeClassName": "nvidia",
                    "containers": [{
                        "name": "triton", "image": "nvcr.io/nvidia/tritonserver:24.08-py3-igpu",
                        "resources": {
                            "requests": {"cpu": "500m", "memory": "4Gi", "nvidia.com/gpu": "1"},
                            "limits": {"memory": "6Gi", "nvidia.com/gpu": "1"}
                        }
                    }]
                }
            }
        }
    })
}

/// Applies only the access objects of the plain manifests (namespace, ServiceAccount, role,
/// binding): the Deployment itself would run gpudash in the cluster, which the test does here.
/// `objects` as one List through the real API server's dry run in `namespace`: what it printed.
fn dry_run(plane: &ControlPlane, namespace: &str, objects: Vec<serde_yaml::Value>) -> anyhow::Result<String> {
    let items: Vec<Value> = objects.into_iter().filter_map(|d| serde_json::to_value(d).ok()).collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    plane.kubectl_stdin(&["apply", "--dry-run=server", "-n", namespace, "-f", "-"], &list.to_string())
}

fn apply_rbac(plane: &ControlPlane) {
    use serde::Deserialize;
    let text = std::fs::read_to_string(gpudash_tests::root().join("deploy/manifests/gpudash.yaml"))
        .expect("real control plane step");
    let docs: Vec<Value> = serde_yaml::Deserializer::from_str(&text)
        .filter_map(|d| serde_yaml::Value::deserialize(d).ok())
        .filter_map(|d| serde_json::to_value(d).ok())
        .filter(|d| {
            ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
                .contains(&d["kind"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(docs.len(), 4, "the manifests' access objects");
    plane.apply(&docs).expect("the manifests' access objects applied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpudash_reads_a_real_control_plane_with_its_own_service_account() {
    let mut plane = ControlPlane::start().await.unwrap();

    // The version stamped at build is the one the API server reports.
    let version = plane.kubectl_json(&["version", "-o", "json"]).expect("real control plane step");
    let go_mod = std::fs::read_to_string(gpudash_tests::root().join("tests/control-plane/go.mod"))
        .expect("real control plane step");
    let want = go_mod
        .lines()
        .find_map(|l| l.trim().strip_prefix("k8s.io/kubernetes v"))
        .map(|v| format!("v{}", v.split_whitespace().next().unwrap_or("")))
        .expect("real control plane step");
    assert_eq!(version["serverVersion"]["gitVersion"], want, "{version}");

    // Every manifest is accepted by the real API server's schemas and admission.
    let manifests = gpudash_tests::root().join("deploy/manifests/gpudash.yaml");
    let out = plane.kubectl(&["apply", "--dry-run=server", "-f", &manifests.display().to_string()]);
    assert!(out.is_err(), "the namespace does not exist yet, so namespaced objects are refused: {out:?}");
    apply_rbac(&plane);
    let out = plane
        .kubectl(&["apply", "--dry-run=server", "-f", &manifests.display().to_string()])
        .expect("the plain manifests refused by the real API server");
    assert!(out.contains("deployment.apps/gpudash") && out.contains("(server dry run)"), "{out}");
    // The fleet's manifests too (its namespace made first, as `kubectl apply -f deploy/fleet/`
    // would in its second pass).
    plane
        .apply(&[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpudash-fleet"}})])
        .expect("real control plane step");
    for f in ["gpudash-fleet.yaml", "postgres-example.yaml"] {
        let path = gpudash_tests::root().join("deploy/fleet").join(f);
        let out = plane
            .kubectl(&["apply", "--dry-run=server", "-f", &path.display().to_string()])
            .unwrap_or_else(|e| panic!("deploy/fleet/{f} refused by the real API server: {e}"));
        assert!(
            out.contains("(server dry run)") && (out.contains("deployment.apps/") || out.contains("statefulset.apps/")),
            "{out}"
        );
    }
    let fleet = gpudash_tests::helm::chart_named("gpudash-fleet", "", "fleet", "gpudash-fleet");
    let out = dry_run(&plane, "gpudash-fleet", fleet).expect("the rendered fleet chart refused by the real API server");
    assert!(out.contains("deployment.apps/fleet") && out.contains("(server dry run)"), "{out}");
    // And so is the rendered chart: defaults, then the ingress and a Jetson agent switched on.
    plane
        .apply(&[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "edge-ops"}})])
        .expect("real control plane step");
    for overrides in [
        "",
        "ingress: {enabled: true, className: traefik, host: dash.example}\nextraArgs: [--base-path, /gpu]\n\
         agent: {enabled: true, image: {repository: a, tag: b}, interval: \"1\", tegrastats: true, dcgm: false, dcgmUrl: x, \
         resources: {requests: {cpu: 5m, memory: 8Mi}, limits: {cpu: 100m, memory: 32Mi}}}",
    ] {
        let out = dry_run(&plane, "edge-ops", gpudash_tests::helm::chart(overrides, "gpudash", "edge-ops"))
            .unwrap_or_else(|e| panic!("the rendered chart ({overrides:?}) refused by the real API server: {e}"));
        assert!(out.contains("daemonset.apps/") && out.contains("(server dry run)"), "{out}");
    }
    // The alerting objects, with the Prometheus Operator's CRDs (scripts/control-plane.sh fetches
    // them from the operator's module) installed as kube-prometheus-stack would.
    let crds = gpudash_tests::root().join("target/control-plane/crds");
    if crds.join("VERSION").exists() {
        plane.kubectl(&["apply", "-f", &crds.display().to_string()]).expect("the CRDs apply");
        plane
            .kubectl(&[
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                "crd/prometheusrules.monitoring.coreos.com",
                "crd/servicemonitors.monitoring.coreos.com",
            ])
            .expect("the CRDs are established");
        let docs: Vec<Value> =
            gpudash_tests::helm::chart("alerts: {prometheusRule: true, serviceMonitor: true}", "gpudash", "edge-ops")
                .into_iter()
                .filter(|d| d["apiVersion"].as_str() == Some("monitoring.coreos.com/v1"))
                .filter_map(|d| serde_json::to_value(d).ok())
                .collect();
        assert_eq!(docs.len(), 2, "a PrometheusRule and a ServiceMonitor");
        let list = json!({"apiVersion": "v1", "kind": "List", "items": docs});
        let out = plane
            .kubectl_stdin(&["apply", "--dry-run=server", "-n", "edge-ops", "-f", "-"], &list.to_string())
            .expect("the chart's alerting objects refused by the real API server");
        assert!(
            out.contains("prometheusrule.monitoring.coreos.com/gpudash")
                && out.contains("servicemonitor.monitoring.coreos.com/gpudash"),
            "{out}"
        );
        // The schema is enforced: a rule without an expression is refused.
        let mut bad = list.clone();
        bad["items"][0]["spec"]["groups"][0]["rules"][0].as_object_mut().map(|r| r.remove("expr"));
        let refused =
            plane.kubectl_stdin(&["apply", "--dry-run=server", "-n", "edge-ops", "-f", "-"], &bad.to_string());
        assert!(refused.is_err(), "a rule without expr was accepted: {refused:?}");
    } else {
        eprintln!("no Prometheus Operator CRDs in {} (scripts/control-plane.sh could not fetch them): alerting objects not dry-run", crds.display());
    }

    // Its ServiceAccount may only read.
    let can = plane.kubectl(&["auth", "can-i", "--list", &format!("--as={SA}")]).expect("real control plane step");
    let self_reviews = ["selfsubjectreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews"];
    for line in can.lines().skip(1) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let Some(verbs) = cols.last() else { continue };
        let verbs: Vec<&str> = verbs.trim_matches(['[', ']']).split(' ').collect();
        let write = verbs.iter().any(|v| !["get", "list", "watch"].contains(v));
        let review = self_reviews.iter().any(|r| line.starts_with(r));
        assert!(!write || review, "gpudash's ServiceAccount may do more than read: {line}\n{can}");
    }
    for (resource, verb) in
        [("nodes", "watch"), ("pods", "list"), ("events", "watch"), ("runtimeclasses.node.k8s.io", "list")]
    {
        let yes = plane.kubectl(&["auth", "can-i", verb, resource, &format!("--as={SA}")]).unwrap_or_default();
        assert_eq!(yes.trim(), "yes", "{verb} {resource}");
    }
    for (resource, verb) in [("pods", "delete"), ("nodes", "patch"), ("secrets", "get")] {
        let no = plane.kubectl(&["auth", "can-i", verb, resource, &format!("--as={SA}")]);
        assert!(no.is_err(), "gpudash may {verb} {resource}");
    }

    // A time-sliced Jetson: kwok plays its kubelet; the GPU capacity arrives as the device
    // plugin reports it, by a status patch.
    let gpu = json!({"status": {
        "capacity": {"cpu": "12", "memory": "64305Mi", "pods": "110", "nvidia.com/gpu": "4"},
        "allocatable": {"cpu": "12", "memory": "64305Mi", "pods": "110", "nvidia.com/gpu": "4"}
    }});
    plane.add_nodes(&[(jetson("orin-agx-1"), gpu)]).await.unwrap();
    plane
        .apply(&[
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}}),
        ])
        .expect("real control plane step");
    plane.apply(&[models("vision", 5)]).expect("real control plane step");

    // gpudash with the ServiceAccount's token, as it runs in the cluster.
    let token = plane
        .kubectl(&["create", "token", "gpudash", "-n", "gpudash", "--duration=2h"])
        .expect("real control plane step");
    let kc = plane.kubeconfig_for_token(token.trim(), "gpudash.kubeconfig").expect("real control plane step");
    let kc = kc.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc, "--watch-stall", "6"]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(90), |v| {
            v["source"]["synced"] == true
                && node(v, "orin-agx-1").is_some_and(|n| n["gpu_resources"][0]["allocated"] == 4)
                && items(v, "pending").iter().any(|p| !items(p, "reasons").is_empty())
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));

    // The board: one GPU of four replicas, every replica held by one of the Deployment's pods.
    let g = &node(&v, "orin-agx-1").expect("real control plane step")["gpu_resources"][0];
    assert_eq!(g["resource"], "nvidia.com/gpu", "{g}");
    assert_eq!((&g["capacity"], &g["allocatable"], &g["allocated"]), (&json!(4), &json!(4), &json!(4)), "{g}");
    assert_eq!(
        (&g["physical_gpus"], &g["replicas_per_gpu"], &g["sharing"]),
        (&json!(1), &json!(4), &json!("time-slicing")),
        "{g}"
    );
    let holders = items(g, "holders");
    assert_eq!(holders.len(), 4, "{g}");
    assert!(holders
        .iter()
        .all(|h| h["namespace"] == "vision" && h["name"].as_str().unwrap_or("").starts_with("detector-")));
    assert!(node(&v, "orin-agx-1").expect("real control plane step")["ready"] == true);

    // The fifth model: the real scheduler's message, normalised.
    let pending = items(&v, "pending");
    assert_eq!(pending.len(), 1, "{pending:?}");
    let p = &pending[0];
    let message = p["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("0/1 nodes are available: 1 Insufficient nvidia.com/gpu."),
        "the real scheduler said: {message}"
    );
    assert_eq!(p["reasons"], json!([{"reason": "Insufficient nvidia.com/gpu", "nodes": 1, "verbatim": false}]), "{p}");
    assert_eq!(p["nodes_total"], 1, "{p}");
    assert_eq!(p["gpu_request"], json!({"resource": "nvidia.com/gpu", "count": 1}), "{p}");
    assert!(items(p, "diagnoses").contains(&json!("insufficient-gpu")), "{p}");
    let d =
        items(&v, "diagnoses").into_iter().find(|d| d["code"] == "insufficient-gpu").unwrap_or_else(|| panic!("{v}"));
    assert_eq!(d["name"], p["name"], "{d}");

    // The API server killed (-9) and started again on the same datastore: stale, then the view a
    // fresh gpudash derives.
    plane.kill_apiserver();
    gd.wait_view(Duration::from_secs(30), |v| !v["source"]["stale_since"].is_null())
        .await
        .expect("gpudash never said stale with the API server gone");
    plane.apply(&[]).expect_err("the API server is down");
    plane.restart_apiserver().await.unwrap();
    // A change made after the restart must reach it too.
    plane.kubectl(&["scale", "deployment/detector", "-n", "vision", "--replicas=6"]).expect("real control plane step");
    let recovered = gd
        .wait_view(Duration::from_secs(60), |v| {
            v["source"]["stale_since"].is_null() && v["source"]["synced"] == true && items(v, "pending").len() == 2
        })
        .await
        .unwrap_or_else(|e| panic!("gpudash did not recover: {e}\n{}", plane.logs(20)));
    let fresh = Gpudash::start(&["--kubeconfig", &kc]).await.expect("real control plane step");
    let fresh_view = fresh
        .wait_view(Duration::from_secs(60), |v| {
            v["source"]["synced"] == true
                && items(v, "pending").iter().filter(|p| !items(p, "reasons").is_empty()).count() == 2
        })
        .await
        .expect("real control plane step");
    let again = gd.json("/api/v1/cluster").await.expect("real control plane step");
    assert_eq!(cluster_part(&again), cluster_part(&fresh_view), "after the restart: {recovered}");
    drop(fresh);

    // 5,000 pods, each holding one GPU of a large board that has no kubelet (nothing runs
    // them, so the machine is spared 5,000 status updates): the server pages the list, and
    // gpudash counts every one.
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bulk"}}),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bulk-board", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}}),
        ])
        .expect("real control plane step");
    let many = json!({"status": {"capacity": {"nvidia.com/gpu": "5000", "pods": "6000"}, "allocatable": {"nvidia.com/gpu": "5000", "pods": "6000"}}});
    plane
        .kubectl(&["patch", "node", "bulk-board", "--subresource=status", "--type=merge", "-p", &many.to_string()])
        .expect("real control plane step");
    plane.create_bound_gpu_pods("bulk", "bulk-board", 5000).expect("real control plane step");
    let bulk = Gpudash::start(&["--kubeconfig", &kc]).await.expect("real control plane step");
    let v = bulk
        .wait_view(Duration::from_secs(120), |v| {
            node(v, "bulk-board").is_some_and(|n| n["gpu_resources"][0]["allocated"] == 5000)
        })
        .await
        .unwrap();
    assert_eq!(
        items(&node(&v, "bulk-board").expect("real control plane step")["gpu_resources"][0], "holders").len(),
        5000
    );
    drop(bulk);

    // Everything gpudash's ServiceAccount asked was a read; its pod list came in pages.
    let text = std::fs::read_to_string(&plane.audit_log).expect("real control plane step");
    let ours = audit_entries(&plane.audit_log).into_iter().filter(|e| e.0 == SA).collect::<Vec<_>>();
    assert!(ours.len() > 10, "gpudash's requests are in the audit log");
    let writes: Vec<_> = ours.iter().filter(|e| !["get", "list", "watch"].contains(&e.1.as_str())).collect();
    assert!(writes.is_empty(), "gpudash wrote: {writes:?}");
    // Its pods' list asked as client-go's informers ask: from the watch cache
    // (`resourceVersion=0`, which serves the list whole) with a page size a server without a
    // watch cache honours (paging is followed: `server/tests/real_protobuf.rs`).
    let lists: Vec<&str> =
        text.lines().filter(|l| l.contains(SA) && l.contains("\"/api/v1/pods?") && !l.contains("watch=true")).collect();
    assert!(!lists.is_empty(), "no pod list by gpudash in the audit log");
    assert!(
        lists.iter().all(|l| l.contains("limit=500") && (l.contains("resourceVersion=0") || l.contains("continue="))),
        "{lists:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_that_cannot_start_is_named_with_the_end_of_its_log() {
    let Err(e) = ControlPlane::start_with(&[], &["--no-such-flag=1"]).await else {
        panic!("an API server with an unknown flag started")
    };
    let e = e.to_string();
    assert!(e.contains("kube-apiserver exited while starting"), "{e}");
    assert!(e.contains("unknown flag: --no-such-flag"), "the log's last lines are quoted: {e}");
}
