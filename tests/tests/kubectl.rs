//! Real clients accept the simulator: kubectl (the newer of the machine's and the control
//! plane's, v1.36 here) reads nodes, pods, events, RuntimeClasses and metrics, watches a
//! timeline change, and has its write refused and logged.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::{expect_kubectl, kubeconfig_file, kubectl};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_every_kind_the_simulator_serves() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let (_dir, kc) = kubeconfig_file(&sim.url());
    let cases: &[(&[&str], &[&str])] = &[
        (&["version"], &["Server Version: v1.34.2+k3s1"]),
        (&["get", "nodes"], &["k3s-server-01", "orin-agx-01", "orin-nano-01", "gpu-x86-01"]),
        (&["get", "pods", "-A", "-o", "wide"], &["anomaly-detector-6f8d7b5c4-r7zq9", "triton-server-0", "kube-system"]),
        (&["get", "events", "-A"], &["LAST SEEN", "pod/anomaly-detector-6f8d7b5c4-r7zq9", "FailedScheduling"]),
        (&["get", "runtimeclasses"], &["nvidia", "nvidia-experimental", "nvidia-cdi"]),
        (&["get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"], &["NodeMetricsList", "orin-agx-01"]),
        (&["top", "nodes"], &["MEMORY", "orin-nano-01"]),
        (&["get", "deployments,replicasets", "-n", "vision"], &["pose-estimator", "pose-estimator-7d9f8b6c5"]),
        // READY from the container statuses a kubelet reports; a DaemonSet's columns.
        (&["get", "pod", "-n", "ml", "triton-server-0"], &["1/1", "Running"]),
        (
            &["get", "daemonsets", "-n", "kube-system", "-o", "wide"],
            &["nvidia-device-plugin-daemonset", "NODE SELECTOR", "nvidia.com/gpu.family=ampere"],
        ),
        (
            &["get", "pods", "-n", "vision", "--field-selector", "status.phase=Pending"],
            &["anomaly-detector", "label-reader"],
        ),
        (&["get", "nodes", "-l", "nvidia.com/gpu.sharing-strategy=time-slicing"], &["orin-agx-01", "orin-nx-02"]),
        (&["get", "pod", "-n", "ml", "triton-server-0", "-o", "jsonpath={.spec.nodeName}"], &["gpu-x86-01"]),
        (&["get", "pods", "-A", "--chunk-size", "3"], &["yolo-detector-6c9f7d8b5-x2k4p", "batch-embed-1"]),
    ];
    expect_kubectl(&kc, cases).await;
    // Label selectors that do not select still succeed, and bad ones are refused with 400.
    let (ok, out) = kubectl(&kc, &["get", "pods", "-A", "-l", "app in (nothing"]);
    assert!(!ok && out.contains("unable to parse requirement"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_watch_sees_a_timeline_change() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let (_dir, kc) = kubeconfig_file(&sim.url());
    let mut child = gpudash_tests::kubectl_command(&kc)
        .args(["get", "pods", "-A", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl");
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("stdout"));
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Wait for the initial listing, then change the cluster.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    while !seen.contains("triton-server-0") && Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&l);
            seen.push('\n');
        }
    }
    assert!(seen.contains("triton-server-0"), "initial list not seen:\n{seen}");
    assert!(!seen.contains("speech-tts"));
    assert!(sim.sim.advance(), "the demo timeline has a first step");
    while !seen.contains("speech-tts-6d5c4b3a2-z9y8x") && Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&l);
            seen.push('\n');
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.contains("speech-tts-6d5c4b3a2-z9y8x"), "watch did not show the new pod:\n{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_refused_with_405_and_logged() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let (_dir, kc) = kubeconfig_file(&sim.url());
    let kc2 = kc.clone();
    let (ok, out) =
        tokio::task::spawn_blocking(move || kubectl(&kc2, &["delete", "pod", "-n", "ml", "triton-server-0"]))
            .await
            .unwrap();
    assert!(!ok && out.contains("MethodNotAllowed"), "{out}");
    let (ok, out) =
        tokio::task::spawn_blocking(move || kubectl(&kc, &["label", "node", "orin-nano-01", "x=y"])).await.unwrap();
    assert!(!ok, "{out}");
    let refused: Vec<_> = sim.sim.requests().into_iter().filter(|r| r.status == 405).collect();
    assert!(refused.iter().any(|r| r.verb == "delete" && r.uri.contains("/pods/triton-server-0")), "{refused:?}");
    assert!(refused.iter().any(|r| r.verb == "patch" && r.uri.contains("/nodes/orin-nano-01")), "{refused:?}");
    assert!(sim.sim.get("Pod", "ml", "triton-server-0").is_some(), "nothing was deleted");
    let http = reqwest::Client::new();
    let r = http.post(format!("{}/api/v1/namespaces/ml/pods", sim.url())).body("{}").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 405);
    let body: serde_json::Value = r.json().await.unwrap_or_default();
    assert_eq!((body["kind"].as_str(), body["code"].as_u64()), (Some("Status"), Some(405)));
    assert_eq!(sim.sim.verb_counts().get("create"), Some(&1));
}

/// A list at `resourceVersion=0` comes from the watch cache as a 1.34+ API server serves it:
/// whole, whatever its limit (as the real API server's audit log showed, docs/benchmarks.md),
/// written item by item (chunked) and the same objects as a paged read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_from_the_watch_cache_is_whole_whatever_its_limit() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let http = reqwest::Client::new();
    let get = |q: &'static str| {
        let (http, url) = (http.clone(), sim.url());
        async move {
            let r = http.get(format!("{url}/api/v1/pods?{q}")).send().await.unwrap();
            assert!(r.status().is_success(), "{q}: {}", r.status());
            assert!(r.content_length().is_none(), "{q}: the list is written as it is encoded (chunked)");
            r.json::<serde_json::Value>().await.unwrap()
        }
    };
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    let all = get("x=1").await;
    let cached = get("limit=2&resourceVersion=0&resourceVersionMatch=NotOlderThan").await;
    assert!(names(&all).len() > 2, "enough pods to page");
    assert_eq!(names(&cached), names(&all), "whole, in the same order");
    assert!(cached["metadata"]["continue"].is_null(), "no next page: {}", cached["metadata"]);
    assert!(cached["metadata"]["resourceVersion"].as_str().is_some_and(|v| !v.is_empty()));
    // Without resourceVersion=0 the limit is honoured.
    let paged = get("limit=2").await;
    assert_eq!(names(&paged).len(), 2);
    assert!(paged["metadata"]["continue"].as_str().is_some());
}

/// Paged lists as the API server pages them: every object exactly once across the pages, a
/// `continue` token on every page but the last, `remainingItemCount` only without selectors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_lists_cover_every_object_once() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let http = reqwest::Client::new();
    for (query, selected) in [("", false), ("&fieldSelector=status.phase%3DRunning", true)] {
        let all: serde_json::Value = http
            .get(format!("{}/api/v1/pods?x=1{query}", sim.url()))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .unwrap()
            .json()
            .await
            .unwrap();
        let want: Vec<String> = all["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        assert!(want.len() > 6, "enough pods to page: {}", want.len());
        let (mut got, mut token, mut pages) = (Vec::new(), String::new(), 0);
        loop {
            let page: serde_json::Value = http
                .get(format!("{}/api/v1/pods?limit=4&continue={token}{query}", sim.url()))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            pages += 1;
            let items = page["items"].as_array().cloned().unwrap_or_default();
            got.extend(items.iter().filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string)));
            match page["metadata"]["continue"].as_str() {
                Some(t) => {
                    assert_eq!(items.len(), 4, "a page with a continue token is full");
                    let remaining = page["metadata"]["remainingItemCount"].as_u64();
                    if selected {
                        assert_eq!(remaining, None, "no count with selectors");
                    } else {
                        assert_eq!(remaining, Some((want.len() - got.len()) as u64));
                    }
                    token = t.to_string();
                }
                None => break,
            }
            assert!(pages < 100, "pages never end");
        }
        assert_eq!(got, want, "pages {query:?}");
    }
}
