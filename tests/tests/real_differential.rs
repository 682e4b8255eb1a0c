//! The simulator held to the real API server (the differential test). A real control plane
//! makes the objects — a kwok Jetson with its GPU, a RuntimeClass, a Deployment whose fifth
//! model the real scheduler leaves Pending, its ReplicaSet and Events — and prints them; the
//! printed objects are loaded into the simulator; then kubectl of the same release asks both the
//! same questions and must get the same answers: `get -o wide`, `-o json`, discovery, field and
//! label selectors (Deployments and DaemonSets too), the error bodies of bad requests, and the watch events of a create, an
//! update and a delete. When they differ, the real server is right and the simulator is fixed.

use std::path::Path;
use std::time::Duration;

use gpudash_sim::{start, Scenario, Simulator, TimelineMode};
use gpudash_tests::control_plane::{kubectl_with, ControlPlane};
use serde_json::{json, Value};

/// The kinds the simulator serves that a real cluster of this shape has objects of.
const KINDS: &[&str] =
    &["nodes", "pods", "events", "runtimeclasses", "namespaces", "replicasets", "deployments", "daemonsets"];

fn kubectl(kc: &Path, args: &[&str]) -> Result<String, String> {
    kubectl_with(kc, args, None).map_err(|e| e.to_string())
}

/// Drops what differs between any two servers for the same object: identity, versions, times,
/// the field managers' bookkeeping.
fn normalise(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink"] {
                m.remove(k);
            }
            m.retain(|k, _| !k.ends_with("Time") && !k.ends_with("Timestamp") && k != "startedAt" && k != "finishedAt");
            m.values_mut().for_each(normalise);
        }
        Value::Array(a) => a.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// A table without the columns that are ages (AGE, and the events' LAST SEEN and FIRST SEEN):
/// they differ by the seconds between the two reads.
fn table(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(head) = lines.first() else { return Vec::new() };
    // Column starts from the header, as kubectl aligns them.
    let mut starts = vec![0];
    let b = head.as_bytes();
    for i in 1..b.len() {
        if b[i] != b' ' && b[i - 1] == b' ' && i >= 3 && &head[i - 3..i] == "   " {
            starts.push(i);
        }
    }
    let cut = |l: &str| -> Vec<String> {
        starts
            .iter()
            .enumerate()
            .map(|(j, &s)| {
                let e = starts.get(j + 1).copied().unwrap_or(usize::MAX);
                l.get(s..e.min(l.len())).unwrap_or("").trim().to_string()
            })
            .collect()
    };
    let header = cut(head);
    let keep: Vec<usize> =
        (0..header.len()).filter(|&j| !["AGE", "LAST SEEN", "FIRST SEEN"].contains(&header[j].as_str())).collect();
    let mut rows: Vec<Vec<String>> =
        lines.iter().map(|l| cut(l)).map(|r| keep.iter().map(|&j| r[j].clone()).collect()).collect();
    rows[1..].sort();
    rows
}

/// Reads `path` on both servers and asserts the same status and body (normalised).
async fn same_raw(real: &Path, sim: &Path, path: &str, diverged: &mut Vec<String>) {
    let a = kubectl(real, &["get", "--raw", path]);
    let b = kubectl(sim, &["get", "--raw", path]);
    let parse = |r: &Result<String, String>| -> Value {
        let text = match r {
            Ok(t) => t.clone(),
            // kubectl prints a failed raw GET's body after "Error from server (...): ".
            Err(e) => e.split_once("): ").map(|(_, b)| b.to_string()).unwrap_or_else(|| e.clone()),
        };
        let mut v = serde_json::from_str(text.trim()).unwrap_or(Value::String(text.trim().to_string()));
        normalise(&mut v);
        v
    };
    let (va, vb) = (parse(&a), parse(&b));
    if a.is_ok() != b.is_ok() || va != vb {
        diverged.push(format!("GET {path}:\n  real: {va}\n  sim:  {vb}"));
    }
}

/// The events a watch sends within `window` (one JSON object a line).
async fn watch_events(client: reqwest::Client, url: String, window: Duration) -> Vec<Value> {
    use futures::StreamExt;
    let mut events = Vec::new();
    let Ok(resp) = client.get(&url).send().await else { return events };
    let mut body = resp.bytes_stream();
    let mut buf = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, body.next()).await {
        buf.extend_from_slice(&chunk);
        while let Some(i) = buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buf.drain(..=i).collect();
            if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                events.push(v);
            }
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_answers_kubectl_as_the_real_api_server_does() {
    let plane = ControlPlane::start().await.unwrap();
    let node = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "orin-diff", "annotations": {"kwok.x-k8s.io/node": "fake"},
                     "labels": {"kubernetes.io/hostname": "orin-diff", "nvidia.com/gpu.replicas": "4",
                                "nvidia.com/gpu.sharing-strategy": "time-slicing"}},
        "spec": {}
    });
    let gpu = json!({"status": {"capacity": {"cpu": "12", "memory": "64305Mi", "pods": "110", "nvidia.com/gpu": "4"},
                                "allocatable": {"cpu": "12", "memory": "64305Mi", "pods": "110", "nvidia.com/gpu": "4"}}});
    plane.add_nodes(&[(node, gpu)]).await.unwrap();
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "diff"}}),
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}),
        ])
        .expect("real control plane step");
    plane
        .apply(&[json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "detector", "namespace": "diff", "labels": {"app": "detector"}},
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "detector"}},
                     "template": {"metadata": {"labels": {"app": "detector", "tier": "vision"}},
                                  "spec": {"runtimeClassName": "nvidia", "containers": [{"name": "triton", "image": "tritonserver:24.08",
                                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
        })])
        .expect("real control plane step");
    // A node agent as a DaemonSet (its pod made by the real DaemonSet controller).
    plane
        .apply(&[json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "board-agent", "namespace": "diff"},
            "spec": {"selector": {"matchLabels": {"app": "board-agent"}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                     "template": {"metadata": {"labels": {"app": "board-agent"}},
                                  "spec": {"nodeSelector": {"nvidia.com/gpu.sharing-strategy": "time-slicing"},
                                           "containers": [{"name": "agent", "image": "gpudash-agent:0.1"}]}}}
        })])
        .expect("real control plane step");
    plane
        .wait_until("four models Running and one Pending with its event", Duration::from_secs(60), |p| {
            let phases = p
                .kubectl(&[
                    "get",
                    "pods",
                    "-n",
                    "diff",
                    "-l",
                    "app=detector",
                    "-o",
                    "jsonpath={.items[*].status.phase}",
                ])
                .unwrap_or_default();
            let agent = p
                .kubectl(&[
                    "get",
                    "pods",
                    "-n",
                    "diff",
                    "-l",
                    "app=board-agent",
                    "-o",
                    "jsonpath={.items[*].status.phase}",
                ])
                .unwrap_or_default();
            let events = p
                .kubectl(&["get", "events", "-n", "diff", "--field-selector", "reason=FailedScheduling", "-o", "name"])
                .unwrap_or_default();
            phases.matches("Running").count() == 4
                && phases.matches("Pending").count() == 1
                && agent == "Running"
                && !events.trim().is_empty()
        })
        .await
        .unwrap();
    // Let the deployment controller's status settle (availableReplicas, conditions).
    tokio::time::sleep(Duration::from_secs(3)).await;

    // The real objects as the real server prints them, loaded into an empty simulator.
    // The simulator prints as a server of the real one's release prints.
    let sim = Simulator::new(Scenario::default());
    let version = plane.kubectl_json(&["version", "-o", "json"]).expect("real control plane step");
    let minor: u32 = version["serverVersion"]["minor"]
        .as_str()
        .unwrap_or("")
        .trim_end_matches('+')
        .parse()
        .expect("real control plane step");
    sim.set_kubernetes_minor(minor);
    for kind in KINDS {
        let list = plane.kubectl_json(&["get", kind, "-A", "-o", "json"]).expect("real control plane step");
        for item in list["items"].as_array().into_iter().flatten() {
            let keep = item["metadata"]["namespace"].as_str().is_none_or(|ns| ns == "diff")
                && (!["namespaces"].contains(kind) || item["metadata"]["name"] == "diff");
            if keep {
                sim.apply(item.clone()).unwrap_or_else(|e| panic!("the simulator refused a real {kind}: {e}\n{item}"));
            }
        }
    }
    let running = start(sim, ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.expect("real control plane step");
    let sim_kc = plane.dir().join("sim.kubeconfig");
    std::fs::write(&sim_kc, running.kubeconfig()).expect("real control plane step");
    let real = plane.kubeconfig.clone();

    let mut diverged: Vec<String> = Vec::new();
    let both = |args: &[&str], how: &dyn Fn(&str) -> Value, diverged: &mut Vec<String>| {
        let a = kubectl(&real, args).map(|t| how(&t));
        let b = kubectl(&sim_kc, args).map(|t| how(&t));
        if a != b {
            diverged.push(format!("kubectl {}:\n  real: {a:?}\n  sim:  {b:?}", args.join(" ")));
        }
    };
    let as_table = |t: &str| json!(table(t));
    let as_json = |t: &str| {
        let mut v: Value = serde_json::from_str(t).unwrap_or(Value::String(t.into()));
        normalise(&mut v);
        v
    };
    let as_names = |t: &str| {
        let mut n: Vec<&str> = t.lines().collect();
        n.sort();
        json!(n)
    };

    // Tables, objects, selectors.
    for (kind, scope) in [
        ("nodes", None),
        ("runtimeclasses", None),
        ("pods", Some("diff")),
        ("replicasets", Some("diff")),
        ("deployments", Some("diff")),
        ("daemonsets", Some("diff")),
        ("events", Some("diff")),
    ] {
        let mut args = vec!["get", kind];
        if let Some(ns) = scope {
            args.extend(["-n", ns]);
        }
        both(&[args.as_slice(), &["-o", "wide"]].concat(), &as_table, &mut diverged);
        both(&[args.as_slice(), &["-o", "json"]].concat(), &as_json, &mut diverged);
    }
    both(&["get", "namespace", "diff", "-o", "json"], &as_json, &mut diverged);
    for sel in [
        vec!["--field-selector", "status.phase=Pending"],
        vec!["--field-selector", "status.phase!=Pending"],
        vec!["--field-selector", "spec.nodeName=orin-diff"],
        vec!["--field-selector", "spec.nodeName="],
        vec!["-l", "app=detector"],
        vec!["-l", "app in (detector),tier!=audio"],
        vec!["-l", "!app"],
        vec!["-l", "tier"],
    ] {
        both(&[&["get", "pods", "-n", "diff", "-o", "name"], sel.as_slice()].concat(), &as_names, &mut diverged);
    }
    both(
        &["get", "events", "-n", "diff", "--field-selector", "reason=FailedScheduling", "-o", "name"],
        &as_names,
        &mut diverged,
    );
    both(
        &["get", "nodes", "-l", "nvidia.com/gpu.sharing-strategy=time-slicing", "-o", "name"],
        &as_names,
        &mut diverged,
    );

    // Discovery: each kind the simulator serves is described as the real server describes it
    // (metrics.k8s.io aside: K3s bundles metrics-server, this plane runs none).
    let real_res = table(&kubectl(&real, &["api-resources"]).expect("real control plane step"));
    let sim_res = table(&kubectl(&sim_kc, &["api-resources"]).expect("real control plane step"));
    for row in sim_res[1..].iter().filter(|r| !r.iter().any(|c| c.starts_with("metrics.k8s.io/"))) {
        if !real_res.contains(row) {
            diverged.push(format!("api-resources: the simulator's {row:?} is not the real server's"));
        }
    }

    // Error bodies: a missing object, a missing namespace's object, a bad selector, a bad path.
    for path in [
        "/api/v1/namespaces/diff/pods/no-such-pod",
        "/api/v1/nodes/no-such-node",
        "/api/v1/pods?labelSelector=app+in+(nothing",
        "/api/v1/pods?fieldSelector=spec.noSuchField%3Dx",
        "/apis/apps/v1/namespaces/diff/deployments/no-such",
    ] {
        same_raw(&real, &sim_kc, path, &mut diverged).await;
    }

    // Watch: a create, an update and a delete, seen as the same events in the same order; and
    // a watch from a compacted version refused the same way (410 Expired inside the stream).
    let real_http = plane.http_client().expect("real control plane step");
    let sim_http = reqwest::Client::new();
    plane
        .apply(&[json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "idle-board"}})])
        .expect("real control plane step");
    // The simulator gets each object as the real server then holds it.
    let mirror = |args: &[&str]| {
        running.sim.apply(plane.kubectl_json(args).expect("real control plane step")).expect("real control plane step")
    };
    mirror(&["get", "node", "idle-board", "-o", "json"]);
    // (The raw list: kubectl's `-o json` wraps items in a List without a resourceVersion.)
    let real_rv = plane
        .kubectl_json(&["get", "--raw", "/api/v1/namespaces/diff/pods"])
        .expect("real control plane step")["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    let sim_rv = running.sim.resource_version().to_string();
    let path = "/api/v1/namespaces/diff/pods?watch=1&fieldSelector=metadata.name%3Dwatched&resourceVersion=";
    let real_watch = tokio::spawn(watch_events(
        real_http.clone(),
        format!("{}{path}{real_rv}", plane.server),
        Duration::from_secs(8),
    ));
    let sim_watch = tokio::spawn(watch_events(
        sim_http.clone(),
        format!("{}{path}{sim_rv}", running.url()),
        Duration::from_secs(8),
    ));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "watched", "namespace": "diff", "labels": {"step": "one"}},
                     "spec": {"nodeName": "idle-board", "containers": [{"name": "c", "image": "busybox"}]}});
    plane.apply(&[pod]).expect("real control plane step");
    mirror(&["get", "pod", "watched", "-n", "diff", "-o", "json"]);
    plane
        .kubectl(&["label", "pod", "watched", "-n", "diff", "step=two", "--overwrite"])
        .expect("real control plane step");
    mirror(&["get", "pod", "watched", "-n", "diff", "-o", "json"]);
    plane
        .kubectl(&["delete", "pod", "watched", "-n", "diff", "--grace-period=0", "--force"])
        .expect("real control plane step");
    running.sim.delete("Pod", "diff", "watched");
    let shape_of = |events: Vec<Value>| -> Vec<(String, String, String)> {
        events
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or("").to_string(),
                    e["object"]["metadata"]["name"].to_string(),
                    e["object"]["metadata"]["labels"]["step"].to_string(),
                )
            })
            .collect()
    };
    let (real_events, sim_events) = (
        shape_of(real_watch.await.expect("real control plane step")),
        shape_of(sim_watch.await.expect("real control plane step")),
    );
    if real_events != sim_events {
        diverged.push(format!("watch create/update/delete:\n  real: {real_events:?}\n  sim:  {sim_events:?}"));
    }
    running.sim.expire_versions();
    let expired = |events: Vec<Value>| -> Value {
        let mut e = events.first().cloned().unwrap_or(Value::Null);
        // "too old resource version: 1 (1234)": the numbers are each server's own.
        let m = e["object"]["message"].as_str().unwrap_or("").split(':').next().unwrap_or("").to_string();
        e["object"]["message"] = json!(m);
        e
    };
    let real_gone = expired(
        watch_events(
            real_http,
            format!("{}/api/v1/pods?watch=1&resourceVersion=1", plane.server),
            Duration::from_secs(3),
        )
        .await,
    );
    let sim_gone = expired(
        watch_events(
            sim_http,
            format!("{}/api/v1/pods?watch=1&resourceVersion=1", running.url()),
            Duration::from_secs(3),
        )
        .await,
    );
    if real_gone != sim_gone || real_gone["object"]["code"] != 410 {
        diverged.push(format!("watch from an expired version:\n  real: {real_gone}\n  sim:  {sim_gone}"));
    }

    drop(running);
    assert!(diverged.is_empty(), "{} divergences:\n{}", diverged.len(), diverged.join("\n"));
}
