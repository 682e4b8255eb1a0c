//! Watch semantics on a real API server: a compaction that leaves gpudash's watch position
//! behind. kine compacts every two seconds keeping five revisions, and the API server watches
//! kine directly (`--watch-cache=false`), so a watch resumed from a compacted version is
//! answered 410 Gone, as etcd answers it. gpudash is frozen (SIGSTOP) while its watches end, a
//! GPU pod is deleted, another created and the history compacted past them; thawed, gpudash
//! must relist — the deleted pod gone (no ghost), the new one there (nothing lost) — and show the
//! view a fresh gpudash derives.

use std::time::Duration;

use gpudash_tests::control_plane::{audit_entries, ControlPlane};
use gpudash_tests::Gpudash;
use serde_json::{json, Value};

fn holders(v: &Value) -> Vec<String> {
    let mut h: Vec<String> = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["name"] == "idle-board")
        .flat_map(|n| n["gpu_resources"][0]["holders"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["name"].as_str().map(str::to_string))
        .collect();
    h.sort();
    h
}

fn gpu_pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "w"},
           "spec": {"nodeName": "idle-board", "containers": [{"name": "c", "image": "busybox",
                    "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_left_behind_by_compaction_relists_without_ghosts_or_losses() {
    let plane =
        ControlPlane::start_with(&["--compact-interval=2s", "--compact-min-retain=5"], &["--watch-cache=false"])
            .await
            .unwrap();
    // A board without a kubelet (nothing changes its pods behind the test's back).
    plane
        .apply(&[
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "idle-board"}}),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "w"}}),
        ])
        .expect("real control plane step");
    let gpu = json!({"status": {"capacity": {"nvidia.com/gpu": "8", "pods": "110"}, "allocatable": {"nvidia.com/gpu": "8", "pods": "110"}}});
    plane
        .kubectl(&["patch", "node", "idle-board", "--subresource=status", "--type=merge", "-p", &gpu.to_string()])
        .expect("real control plane step");
    plane.apply(&[gpu_pod("keep"), gpu_pod("ghost")]).expect("real control plane step");

    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc, "--watch-stall", "6"]).await.unwrap();
    gd.wait_view(Duration::from_secs(60), |v| holders(v) == ["ghost", "keep"]).await.unwrap();

    // Frozen long enough for the server to end its watches (re-opened every 4 s), then the
    // changes it must not miss, then the history compacted past them.
    let old_rv = plane.kubectl_json(&["get", "--raw", "/api/v1/namespaces/w/pods"]).expect("list")["metadata"]
        ["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    signal(gd.proc.pid(), "-STOP");
    tokio::time::sleep(Duration::from_secs(8)).await;
    plane.kubectl(&["delete", "pod", "ghost", "-n", "w", "--grace-period=0", "--force"]).expect("delete");
    plane.apply(&[gpu_pod("arrived")]).expect("create");
    for i in 0..20 {
        plane.kubectl(&["label", "node", "idle-board", &format!("churn={i}"), "--overwrite"]).expect("label");
    }
    // Until a watch from before the changes is refused: the compaction has passed them.
    let http = plane.http_client().expect("client");
    let url = format!("{}/api/v1/namespaces/w/pods?watch=1&resourceVersion={old_rv}&timeoutSeconds=1", plane.server);
    let mut gone = String::new();
    for _ in 0..40 {
        gone = match http.get(&url).send().await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(e) => e.to_string(),
        };
        if gone.contains("\"code\":410") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let resumed_at = std::fs::read_to_string(&plane.audit_log).map(|t| t.lines().count()).unwrap_or(0);
    signal(gd.proc.pid(), "-CONT");
    assert!(gone.contains("\"code\":410") && gone.contains("Expired"), "no compaction past the changes: {gone}");

    let v = gd
        .wait_view(Duration::from_secs(60), |v| {
            holders(v) == ["arrived", "keep"] && v["source"]["stale_since"].is_null()
        })
        .await
        .unwrap_or_else(|e| panic!("gpudash kept a ghost or lost a pod after 410 Gone: {e}\n{}", plane.logs(20)));

    // It relisted: gpudash's pod list after the thaw, not only watches.
    let text = std::fs::read_to_string(&plane.audit_log).unwrap_or_default();
    let after: String = text.lines().skip(resumed_at).collect::<Vec<_>>().join("\n");
    let tmp = plane.dir().join("audit-after.log");
    std::fs::write(&tmp, after).expect("write");
    let relists = audit_entries(&tmp).into_iter().filter(|e| e.0 == "admin" && e.1 == "list" && e.2 == "pods").count();
    assert!(relists >= 1, "no pod list after the thaw: gpudash did not relist");

    let fresh = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();
    let f = fresh.wait_view(Duration::from_secs(60), |v| holders(v) == ["arrived", "keep"]).await.expect("fresh view");
    assert_eq!(
        gpudash_tests::without_since(&v["nodes"]),
        gpudash_tests::without_since(&f["nodes"]),
        "the relisted view differs from a fresh gpudash's"
    );
}
