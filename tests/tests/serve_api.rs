//! `gpudash serve` as a process against the simulator over real HTTP: the JSON API, health,
//! live updates, read-only by construction, and clear start-up errors.

use std::time::Duration;

use gpudash_sim::{demo_scenario, start, Scenario, Simulator, TimelineMode};
use gpudash_tests::{bin, free_port, kubeconfig_file, Gpudash, Proc};
use serde_json::Value;

fn names(v: &Value, list: &str) -> Vec<String> {
    v[list].as_array().into_iter().flatten().filter_map(|x| x["name"].as_str().map(str::to_string)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_derives_the_cluster_and_follows_changes_read_only() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let gd = Gpudash::watching(&sim.url(), &["--metrics-interval", "1"]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(10), |v| {
            v["source"]["synced"] == true && v["nodes"][0]["memory"]["used_bytes"].is_u64()
        })
        .await
        .unwrap();
    assert_eq!(v["source"]["mode"], "cluster");
    assert_eq!(names(&v, "nodes").len(), 8);
    let nano = v["pending"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "anomaly-detector-6f8d7b5c4-r7zq9")
        .cloned()
        .unwrap_or_default();
    assert_eq!(nano["reasons"][0]["reason"], "Insufficient nvidia.com/gpu");
    assert_eq!(nano["gpu_request"]["resource"], "nvidia.com/gpu");
    let codes: Vec<&str> = v["diagnoses"].as_array().into_iter().flatten().filter_map(|d| d["code"].as_str()).collect();
    for c in [
        "insufficient-gpu",
        "device-plugin-missing",
        "runtimeclass-missing",
        "gpu-pod-without-runtimeclass",
        "unified-memory-overcommit",
        "gpu-time-slice-contention",
        "gpu-used-outside-scheduler",
    ] {
        assert!(codes.contains(&c), "{c} missing from {codes:?}");
    }
    // A change in the cluster reaches the API without any request from us to the cluster.
    let rev = v["revision"].as_u64().unwrap_or(0);
    assert!(sim.sim.advance());
    let v2 = gd
        .wait_view(Duration::from_secs(5), |v| {
            v["pending"].as_array().is_some_and(|p| p.iter().any(|p| p["name"] == "speech-tts-6d5c4b3a2-z9y8x"))
        })
        .await
        .unwrap();
    assert!(v2["revision"].as_u64().unwrap_or(0) > rev);
    for path in ["/healthz", "/readyz"] {
        let r = reqwest::get(format!("{}{path}", gd.url)).await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path}");
    }
    // Read-only by construction: every request gpudash made was a GET (get, list or watch).
    let verbs = sim.sim.verb_counts();
    assert!(verbs.contains_key("watch") && verbs.contains_key("list"), "{verbs:?}");
    assert!(
        verbs.keys().all(|v| v == "get" || v == "list" || v == "watch"),
        "gpudash issued a non-read verb: {verbs:?}"
    );
    assert!(sim.sim.requests().iter().all(|r| r.method == "GET"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_diagnosis_code_is_raised_from_scenario_files() {
    let extra = gpudash_tests::root().join("tests/scenarios/diagnoses.yaml");
    let mut scenario = demo_scenario();
    let more = Scenario::from_files(&[&extra]).unwrap();
    scenario.objects.extend(more.objects);
    let sim = start(Simulator::new(scenario), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let gd = Gpudash::watching(&sim.url(), &[]).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(10), |v| v["source"]["synced"] == true).await.unwrap();
    let diags = v["diagnoses"].as_array().cloned().unwrap_or_default();
    let find = |code: &str, name: &str| diags.iter().any(|d| d["code"] == code && d["name"] == name);
    assert!(find("runtime-handler-missing", "sandbox-fails"), "{diags:?}");
    assert!(find("shared-gpu-request-too-large", "wants-two-replicas"), "{diags:?}");
    assert!(find("insufficient-gpu", "anomaly-detector-6f8d7b5c4-r7zq9"));
    assert!(find("device-plugin-missing", "xavier-nx-03"));
    assert!(find("runtimeclass-missing", "pose-estimator-7d9f8b6c5"));
    assert!(find("gpu-pod-without-runtimeclass", "ocr-model-7c5b8d9f6-m2x7c"));
    assert!(find("unified-memory-overcommit", "orin-nx-02"));
    assert!(find("gpu-time-slice-contention", "orin-agx-01"));
    let sev: Vec<&str> = diags.iter().filter_map(|d| d["severity"].as_str()).collect();
    let rank = |s: &str| match s {
        "critical" => 0,
        "warning" => 1,
        _ => 2,
    };
    assert!(sev.windows(2).all(|w| rank(w[0]) <= rank(w[1])), "most severe first: {sev:?}");
    let t4 =
        v["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == "t4-shared-01").cloned().unwrap_or_default();
    assert_eq!(t4["gpu_resources"][0]["sharing"], "time-slicing");
    assert_eq!(t4["unified_memory"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_is_shown_as_connecting_with_the_error() {
    let dead = format!("http://127.0.0.1:{}", free_port());
    let (_dir, kc) = kubeconfig_file(&dead);
    let port = free_port();
    let db = tempfile::tempdir().unwrap();
    let p = Proc::spawn(
        &bin(),
        &[
            "serve".into(),
            "--kubeconfig".into(),
            kc.display().to_string(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--db".into(),
            db.path().join("h.db").display().to_string(),
        ],
    )
    .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    gpudash_tests::wait_http_ok(&format!("{url}/healthz"), Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", p.output()));
    let t = std::time::Instant::now();
    loop {
        let v: Value = reqwest::get(format!("{url}/api/v1/cluster")).await.unwrap().json().await.unwrap_or_default();
        if v["source"]["error"].is_string() {
            assert_eq!(v["source"]["synced"], false);
            assert!(v["source"]["stale_since"].is_string());
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no error shown: {v}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let r = reqwest::get(format!("{url}/readyz")).await.unwrap();
    assert_eq!(r.status().as_u16(), 503);
    drop(p);
}

/// Runs `gpudash args…`, expects a non-zero exit and one line naming the problem.
fn fails_with(args: &[String], want: &str) {
    let mut p = Proc::spawn(&bin(), args).expect("starting gpudash");
    let code = p.wait_exit(Duration::from_secs(20));
    let out = p.output();
    assert!(matches!(code, Some(c) if c != 0), "expected failure for {args:?}, got {code:?}:\n{out}");
    let err_line =
        out.lines().find(|l| l.starts_with("gpudash: error:")).unwrap_or_else(|| panic!("no error line:\n{out}"));
    assert!(err_line.contains(want), "expected {want:?} in {err_line:?}");
    assert!(!out.contains("panicked"), "{out}");
}

#[test]
fn start_up_problems_are_one_clear_line_and_a_non_zero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let bad_kc = dir.path().join("bad-kubeconfig");
    std::fs::write(&bad_kc, "apiVersion: v1\nkind: Config\nclusters: [this is not: a kubeconfig\n").unwrap();
    let db = dir.path().join("h.db").display().to_string();
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    fails_with(&s(&["serve", "--kubeconfig", &bad_kc.display().to_string(), "--db", &db]), "kubeconfig");
    fails_with(&s(&["serve", "--kubeconfig", "/nonexistent/kubeconfig", "--db", &db]), "cannot read kubeconfig");
    fails_with(&s(&["serve", "--demo", "--db", "/proc/gpudash/h.db", "--listen", "127.0.0.1:0"]), "--db");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().map(|a| a.to_string()).unwrap_or_default();
    fails_with(&s(&["serve", "--demo", "--db", &db, "--listen", &addr]), "cannot listen");
    fails_with(&s(&["serve", "--demo", "--db", &db, "--base-path", "no-slash"]), "--base-path");
    fails_with(
        &s(&["serve", "--demo", "--db", &db, "--frame-ancestors", "https://*.example.com"]),
        "wildcards are refused",
    );
    let bad_scenario = dir.path().join("bad.yaml");
    std::fs::write(
        &bad_scenario,
        "apiVersion: v1\nkind: Node\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Pod\nmetadata: {labels: {a: \
        b}}\n",
    )
    .unwrap();
    fails_with(&s(&["serve", "--demo", "--db", &db, &bad_scenario.display().to_string()]), "document 2: metadata.name");
    fails_with(
        &s(&["sim", "--scenario", &bad_scenario.display().to_string(), "--listen", "127.0.0.1:0"]),
        "document 2: metadata.name",
    );
    // No kubeconfig and no --demo: say what to do.
    let mut p = std::process::Command::new(bin());
    p.args(["serve", "--db", &db])
        .env_remove("KUBECONFIG")
        .env("HOME", dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST");
    let out = p.output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && text.contains("--demo"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_shows_a_model_update_stuck_on_a_full_gpu_then_fixed_and_history_keeps_both_ends() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let gd = Gpudash::watching(&sim.url(), &["--history-resolution", "0.1"]).await.unwrap();
    let deadlock = |v: &Value| {
        v["diagnoses"].as_array().into_iter().flatten().find(|d| d["code"] == "gpu-rollout-deadlock").cloned()
    };
    let v = gd.wait_view(Duration::from_secs(10), |v| v["source"]["synced"] == true).await.unwrap();
    assert!(deadlock(&v).is_none(), "{}", v["diagnoses"]);
    // The factory day's five steps, then the update.
    for _ in 0..6 {
        assert!(sim.sim.advance());
    }
    let v = gd.wait_view(Duration::from_secs(10), |v| deadlock(v).is_some()).await.unwrap();
    let d = deadlock(&v).unwrap_or_default();
    assert_eq!(
        (d["kind"].as_str(), d["namespace"].as_str(), d["name"].as_str()),
        (Some("Deployment"), Some("vision"), Some("ocr-model"))
    );
    let said = d["message"].as_str().unwrap_or("");
    for part in [
        "ocr-model-6b9d7f8c4-t5v8w",
        "ocr-model-7c5b8d9f6-m2x7c",
        "maxSurge 25% → 1 and maxUnavailable 25% → 0",
        "Recreate",
    ] {
        assert!(said.contains(part), "{part:?} not in {said}");
    }
    // Recorded (a tick is 0.1 s), then the operator's fix: the new pod holds the GPU, the
    // diagnosis is gone.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(sim.sim.advance());
    let v = gd
        .wait_view(Duration::from_secs(10), |v| {
            deadlock(v).is_none()
                && v["nodes"].as_array().into_iter().flatten().any(|n| {
                    n["name"] == "orin-nx-02"
                        && n["gpu_resources"][0]["holders"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|h| h["name"] == "ocr-model-6b9d7f8c4-t5v8w")
                })
        })
        .await
        .unwrap();
    assert!(!v["pending"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|p| p["name"].as_str().unwrap_or("").starts_with("ocr-model")));
    // History has the deadlock's start and end.
    let url = format!("{}/api/v1/history/diagnoses?range=1h", gd.url);
    let mut events = Vec::new();
    for _ in 0..50 {
        let h: Value = reqwest::get(&url).await.unwrap().json().await.unwrap_or_default();
        events = h["events"].as_array().cloned().unwrap_or_default();
        if events.iter().any(|e| e["code"] == "gpu-rollout-deadlock" && e["cleared"].is_number()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let e = events.iter().find(|e| e["code"] == "gpu-rollout-deadlock").cloned().unwrap_or_default();
    assert!(e["raised"].is_number() && e["cleared"].as_u64() >= e["raised"].as_u64(), "{events:?}");
    assert_eq!(e["name"], "ocr-model");
    // The loop puts the site back as it began.
    assert!(sim.sim.advance());
    gd.wait_view(Duration::from_secs(10), |v| {
        v["nodes"].as_array().into_iter().flatten().any(|n| {
            n["name"] == "orin-nx-02"
                && n["gpu_resources"][0]["holders"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|h| h["name"] == "ocr-model-7c5b8d9f6-m2x7c")
        })
    })
    .await
    .unwrap();
}
