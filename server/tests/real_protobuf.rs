//! The pods' protobuf list held to the JSON one on a real API server: the same pods, field for
//! field, as gpudash keeps them. The pods carry what the projection reads — affinity of every
//! kind, tolerations with and without seconds, a node selector, a RuntimeClass's overhead, a
//! sidecar, the GPU variable among others, ports, claims, owners, a finalizer and a deletion in
//! progress, kwok's container states, the scheduler's refusal — so an empty-versus-absent or a
//! wrong field number shows as a difference.

use std::collections::BTreeMap;
use std::time::Duration;

use gpudash::pod::Pod;
use gpudash_tests::control_plane::ControlPlane;
use kube::api::ListParams;
use kube::Api;
use serde_json::json;

fn node() -> (serde_json::Value, serde_json::Value) {
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "orin-agx-1",
        "annotations": {"kwok.x-k8s.io/node": "fake"},
        "labels": {"kubernetes.io/hostname": "orin-agx-1", "kubernetes.io/arch": "arm64", "type": "kwok",
                   "nvidia.com/gpu.product": "Orin-SHARED"}}, "spec": {}});
    let status = json!({"status": {
        "capacity": {"cpu": "12", "memory": "64305Mi", "pods": "110", "nvidia.com/gpu": "4"},
        "allocatable": {"cpu": "12", "memory": "64305Mi", "pods": "110", "nvidia.com/gpu": "4"}}});
    (node, status)
}

fn workloads() -> Vec<serde_json::Value> {
    let affinity = json!({
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
                                      {"key": "broken", "operator": "DoesNotExist"}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [
                    {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["Orin-SHARED"]}]}}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["detector"]}]}}}]},
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "namespaces": ["vision"],
             "labelSelector": {"matchLabels": {"app": "detector"}}, "matchLabelKeys": ["pod-template-hash"]}]}
    });
    let detector = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "detector", "namespace": "vision"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "detector"}},
            "template": {"metadata": {"labels": {"app": "detector"}, "annotations": {"team": "line-3"}},
                "spec": {
                    "runtimeClassName": "nvidia",
                    "schedulerName": "default-scheduler",
                    "nodeSelector": {"type": "kwok"},
                    "affinity": affinity,
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 30}],
                    "initContainers": [{"name": "log-shipper", "image": "fluent-bit", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}}],
                    "containers": [{"name": "model", "image": "yolo",
                        "env": [{"name": "MODEL", "value": "yolov8n"},
                                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                                {"name": "EMPTY", "value": ""}],
                        "ports": [{"name": "metrics", "containerPort": 9400}, {"containerPort": 8080}],
                        "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "4Gi"},
                                      "requests": {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": "1"}}}]}}}});
    // Named as the device plugin's DaemonSet names its pods (their container states are kept).
    let plugin = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "nvidia-device-plugin-daemonset-x7k2p", "namespace": "kube-system",
                     "labels": {"app.kubernetes.io/name": "nvidia-device-plugin"}},
        "spec": {"nodeName": "orin-agx-1", "containers": [{"name": "nvidia-device-plugin-ctr", "image": "k8s-device-plugin"}]}});
    // Nowhere to go: the scheduler's refusal is kept in its condition.
    let stuck = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stuck", "namespace": "vision"},
        "spec": {"nodeSelector": {"nvidia.com/gpu.product": "Tesla-T4"},
                 "containers": [{"name": "c", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}});
    // Deleted while a finalizer holds it: its deletion time and grace period are kept.
    let leaving = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "leaving", "namespace": "vision", "finalizers": ["example.com/hold"]},
        "spec": {"nodeName": "orin-agx-1", "containers": [{"name": "c", "image": "busybox"}]}});
    // Bound by name with a claim of each kind (the claims need not exist for the list).
    let claimant = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "claimant", "namespace": "vision"},
        "spec": {"nodeName": "orin-agx-1",
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                                    {"name": "shared", "resourceClaimName": "shared-gpu"}],
                 "containers": [{"name": "c", "image": "busybox"}]}});
    vec![detector, plugin, stuck, leaving, claimant]
}

fn by_name(pods: Vec<Pod>) -> BTreeMap<String, Pod> {
    pods.into_iter()
        .map(|p| {
            (
                format!(
                    "{}/{}",
                    p.metadata.namespace.as_deref().unwrap_or(""),
                    p.metadata.name.as_deref().unwrap_or("")
                ),
                p,
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protobuf_list_gives_the_pods_the_json_list_gives() {
    let plane = ControlPlane::start().await.expect("real control plane");
    plane.add_nodes(&[node()]).await.expect("a kwok node");
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}}),
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
                   "handler": "nvidia", "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}}),
        ])
        .expect("namespace and RuntimeClass");
    plane.apply(&workloads()).expect("workloads");
    plane.kubectl(&["delete", "pod", "leaving", "-n", "vision", "--wait=false"]).expect("delete held pod");
    let settled = |p: &ControlPlane| {
        let pods = p.kubectl_json(&["get", "pods", "-A", "-o", "json"]).unwrap_or_default();
        let items = pods["items"].as_array().cloned().unwrap_or_default();
        let running = items.iter().filter(|p| p["status"]["phase"] == "Running").count();
        let refused = items.iter().any(|p| {
            p["metadata"]["name"] == "stuck"
                && p["status"]["conditions"].as_array().into_iter().flatten().any(|c| c["reason"] == "Unschedulable")
        });
        // The two detectors and the plugin run (the held and the claiming pod may run too).
        running >= 3 && refused && items.len() == 6
    };
    if let Err(e) = plane.wait_until("pods run, one refused", Duration::from_secs(90), settled).await {
        let pods = plane.kubectl(&["get", "pods", "-A", "-o", "wide"]).unwrap_or_default();
        let why = plane.kubectl(&["get", "events", "-A"]).unwrap_or_default();
        panic!("{pods}\n{why}\n{e}");
    }

    let client = client(&plane).await;
    // The two lists can see different versions while kwok still writes: list until a pair agrees
    // on the list's version (bounded).
    let mut last = String::new();
    for _ in 0..20 {
        let (version, protobuf, pods) = gpudash::watchers::list_pods(&client).await.expect("protobuf list");
        assert!(protobuf, "the real API server answered the pods' list in JSON");
        let json = Api::<Pod>::all(client.clone()).list(&ListParams::default().match_any()).await.expect("JSON list");
        if json.metadata.resource_version.as_deref() != Some(version.as_str()) {
            last = format!("versions {version} and {:?}", json.metadata.resource_version);
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        }
        let (pb, js) = (by_name(pods), by_name(json.items));
        assert_eq!(pb.keys().collect::<Vec<_>>(), js.keys().collect::<Vec<_>>());
        for (name, p) in &pb {
            assert_eq!(Some(p), js.get(name), "{name}: protobuf (left) and JSON (right) disagree");
        }
        // What the comparison covered (so that it cannot pass on two empty projections).
        let all: Vec<&Pod> = pb.values().collect();
        let spec = |f: fn(&gpudash::pod::PodSpec) -> bool| all.iter().filter_map(|p| p.spec.as_ref()).any(f);
        assert!(spec(|s| s.affinity.as_ref().is_some_and(|a| {
            a.node_affinity.is_some() && a.pod_affinity.is_some() && a.pod_anti_affinity.is_some()
        })));
        assert!(spec(|s| s.tolerations.as_ref().is_some_and(|t| t.iter().any(|t| t.toleration_seconds == Some(30)))));
        assert!(spec(|s| s.overhead.is_some() && s.init_containers.is_some() && s.node_selector.is_some()));
        assert!(spec(|s| s.containers.iter().any(|c| c.env.0.as_deref() == Some("all") && c.ports.len() == 2)));
        assert!(spec(|s| {
            let c = &s.resource_claims;
            c.iter().any(|c| c.resource_claim_template_name.is_some())
                && c.iter().any(|c| c.resource_claim_name.is_some())
        }));
        let status = |f: fn(&gpudash::pod::PodStatus) -> bool| all.iter().filter_map(|p| p.status.as_ref()).any(f);
        assert!(status(|s| s.container_statuses.as_ref().is_some_and(|c| c.iter().any(|c| c.state.is_some()))));
        assert!(status(|s| s.conditions.as_ref().is_some_and(|c| c.iter().any(|c| c.message.is_some()))));
        assert!(status(|s| s.pod_ip.is_some()));
        assert!(all.iter().any(|p| p.metadata.deletion_timestamp.is_some() && p.metadata.finalizers.is_some()));
        assert!(all.iter().any(|p| p.metadata.owner_references.is_some() && p.metadata.labels.is_some()));
        return;
    }
    panic!("the two lists never agreed on a version: {last}");
}

/// A server without a watch cache pages a list (as etcd or kine behind `--watch-cache=false`):
/// every page is followed, and the pods are the JSON list's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_in_pages_is_followed_to_its_end() {
    let plane = ControlPlane::start_with(&[], &["--watch-cache=false"]).await.expect("real control plane");
    // Bound to a node no kubelet runs (nothing writes while the lists are compared).
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "idle-board"}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bulk"}}),
        ])
        .expect("node and namespace");
    plane.create_bound_gpu_pods("bulk", "idle-board", 1200).expect("1,200 pods");
    let before = std::fs::read_to_string(&plane.audit_log).map(|t| t.lines().count()).unwrap_or(0);
    let client = client(&plane).await;
    let (_, protobuf, pods) = gpudash::watchers::list_pods(&client).await.expect("protobuf list");
    assert!(protobuf);
    let text = std::fs::read_to_string(&plane.audit_log).unwrap_or_default();
    let pages = text.lines().skip(before).filter(|l| l.contains("\"/api/v1/pods?") && l.contains("continue=")).count();
    assert!(pages >= 2, "1,200 pods at 500 a page take three requests; saw {pages} continued");
    let json = Api::<Pod>::all(client).list(&ListParams::default()).await.expect("JSON list");
    assert_eq!(pods.len(), 1200);
    assert_eq!(by_name(pods), by_name(json.items));
}

async fn client(plane: &ControlPlane) -> kube::Client {
    let cfg = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&plane.kubeconfig).expect("kubeconfig"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("client config");
    kube::Client::try_from(cfg).expect("client")
}
