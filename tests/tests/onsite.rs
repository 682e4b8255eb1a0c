//! GPUs as they are on site, end to end: the on-site scenario files
//! (`tests/scenarios/onsite/*.yaml`) served by the simulator, derived by `gpudash serve`, read
//! through `GET /api/v1/cluster`, and the time-sliced Jetson without feature discovery drawn in
//! Chromium as one GPU of four replica slots.

use std::time::Duration;

use fantoccini::Locator;
use gpudash_tests::browser::{hydrated, shot, wait_text};
use gpudash_tests::{with_browser, Gpudash};
use serde_json::Value;

fn node<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == name).unwrap_or_else(|| panic!("node {name}"))
}

fn diagnosis<'a>(v: &'a Value, code: &str, name: &str) -> &'a Value {
    v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["code"] == code && d["name"] == name)
        .unwrap_or_else(|| panic!("no {code} for {name}: {}", v["diagnoses"]))
}

fn message(v: &Value, code: &str, name: &str) -> String {
    diagnosis(v, code, name)["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_on_site_case_is_told_right_through_the_api_and_in_chromium() {
    let mut args = vec!["--demo".to_string()];
    args.extend(gpudash_tests::scenario_files("onsite", 7));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let gd = Gpudash::start(&args).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true).await.unwrap();

    // K3s --default-runtime nvidia: no runtimeClassName warning there, nor for nvidia-cdi pods.
    assert_eq!(node(&v, "orin-agx-dr")["default_runtime"], "nvidia");
    let warned: Vec<&str> = v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["code"] == "gpu-pod-without-runtimeclass")
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert_eq!(warned, vec!["asr-runc-6c7d8e9f0-p5q6r"]);

    // A time-sliced Jetson without feature-discovery labels: one GPU, four replicas.
    let g = &node(&v, "orin-nx-tsl")["gpu_resources"][0];
    assert_eq!(
        (&g["sharing"], &g["physical_gpus"], &g["replicas_per_gpu"]),
        (&"time-slicing".into(), &1.into(), &4.into())
    );
    diagnosis(&v, "gpu-time-slice-contention", "orin-nx-tsl");

    // No device plugin, GPU used through the runtime.
    let np = node(&v, "orin-nano-np");
    assert_eq!(np["gpu_users_outside"].as_array().map(Vec::len), Some(3));
    assert_eq!(diagnosis(&v, "gpu-used-outside-scheduler", "orin-nano-np")["severity"], "warning");
    assert_eq!(diagnosis(&v, "device-plugin-missing", "orin-nano-np")["severity"], "warning");

    // A GPU out of service.
    let l4 = &node(&v, "gpu-l4-02")["gpu_resources"][0];
    assert_eq!((&l4["capacity"], &l4["allocatable"], &l4["out_of_service"]), (&2.into(), &1.into(), &1.into()));
    assert_eq!(diagnosis(&v, "gpu-unhealthy", "gpu-l4-02")["severity"], "critical");
    assert!(message(&v, "insufficient-gpu", "vlm-caption-8d7c6b5a4-i8o9p").contains("the GPU it needs has failed"));

    // A board gone dark.
    let dark = node(&v, "orin-agx-dark");
    assert_eq!(dark["ready"], false);
    assert_eq!(dark["down"]["status"], "Unknown");
    assert_eq!(dark["down"]["evict_at"], "2026-11-30T02:19:12Z");
    let terminating: Vec<&Value> = dark["gpu_resources"][0]["holders"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["terminating"] == true)
        .collect();
    assert_eq!(terminating.len(), 1);
    assert!(message(&v, "gpu-node-down", "orin-agx-dark").contains("not serving"));
    let contention = v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| d["code"] == "gpu-time-slice-contention" && d["name"] == "orin-agx-dark");
    assert!(!contention, "no contention on a board that is down");

    // The device plugin crash-looping on the only board of its line.
    let crash = message(&v, "device-plugin-missing", "orin-nx-crash");
    assert!(crash.contains("CrashLoopBackOff") && crash.contains("restarted 14 times"), "{crash}");
    let waiting = message(&v, "insufficient-gpu", "blade-wear-7e6d5c4b3-r2t3y");
    assert!(waiting.contains("fix the plugin") && !waiting.contains("free one"), "{waiting}");

    // The Orin Nano's second model waiting on the board's memory with a replica free.
    let mem = message(&v, "insufficient-memory", "pack-counter-5d4c3b2a1-p6a7s");
    assert!(mem.contains("A nvidia.com/gpu unit is free there"), "{mem}");

    let url = gd.url.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/nodes/orin-nx-tsl")).await?;
        let rows = c.find_all(Locator::Css("article.node[data-node='orin-nx-tsl'] .slot-row")).await?;
        assert_eq!(rows.len(), 1, "one physical GPU");
        assert_eq!(rows[0].find(Locator::Css(".slot-row-label")).await?.text().await?, "GPU 0");
        let slots = rows[0].find_all(Locator::Css("li.slot")).await?;
        assert_eq!(slots.len(), 4, "four replica slots");
        assert_eq!(c.find_all(Locator::Css("article.node[data-node='orin-nx-tsl'] li.slot.held")).await?.len(), 3);
        wait_text(&c, ".gpu-caption", "1 GPU × 4 time-slicing replicas", Duration::from_secs(5)).await?;
        shot(&c, "onsite-jetson-no-gfd.png").await?;
        c.goto(&format!("{url}/")).await?;
        hydrated(&c).await?;
        let out = c.find_all(Locator::Css("article.node[data-node='gpu-l4-02'] li.slot.out")).await?;
        assert_eq!(out.len(), 1, "the failed GPU is drawn out of service");
        wait_text(&c, "article.node[data-node='orin-agx-dark'] .node-problem", "not serving", Duration::from_secs(5))
            .await?;
        let outside = c.find_all(Locator::Css("article.node[data-node='orin-nano-np'] li.slot.outside")).await?;
        assert_eq!(outside.len(), 3);
        shot(&c, "onsite-overview.png").await?;
        Ok(())
    })
    .await
    .unwrap();
}

/// What the node decided after binding (`tests/scenarios/after/*.yaml`), served by the
/// simulator and read through the API in both languages. The preemption's event is a week old
/// by now (the API server keeps events an hour): it is told by the real-plane test instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_node_decided_after_binding_is_told_through_the_api() {
    let mut args = vec!["--demo".to_string()];
    args.extend(gpudash_tests::scenario_files("after", 5));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let gd = Gpudash::start(&args).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true).await.unwrap();
    let m = message(&v, "gpu-admission-rejected", "seam-checker-7b6c5d4e3");
    assert!(m.starts_with("3 GPU pod(s) of ReplicaSet vision/seam-checker-7b6c5d4e3 refused by the kubelet"), "{m}");
    assert!(message(&v, "gpu-admission-rejected", "label-reader").contains("UnexpectedAdmissionError"));
    let m = message(&v, "gpu-model-oom-killed", "llm-chat-6c5b4a39d-x8y9z");
    assert!(m.contains("OOMKilled, exit 137) 6 time(s)") && m.contains("unified-memory board"), "{m}");
    let m = message(&v, "gpu-pod-evicted", "asr-whisper-5f4e3d2c1");
    assert!(m.contains("The node was low on resource: memory.") && m.contains("MemoryPressure"), "{m}");
    let d = diagnosis(&v, "gpu-held-not-running", "pallet-reader-7d6c5b4a3-u8i9o");
    assert_eq!((d["severity"].as_str(), d["node"].as_str()), (Some("critical"), Some("orin-nx-dock")));
    // The eviction's replacement is never told that every unit is held.
    let p = v["pending"].as_array().into_iter().flatten().find(|p| p["name"] == "asr-whisper-5f4e3d2c1-p0o9i").cloned();
    let told = p
        .as_ref()
        .and_then(|p| p["problems"].as_array())
        .into_iter()
        .flatten()
        .find(|d| d["code"] == "insufficient-gpu");
    let told = told.and_then(|d| d["message"].as_str()).unwrap_or_default();
    assert!(told.contains("a unit is free on orin-agx-press") && !told.contains("already held"), "{told}");
    // Japanese: the same diagnoses, their sentences in Japanese.
    let ja = gd.json("/api/v1/cluster?lang=ja").await.unwrap();
    let m = message(&ja, "gpu-held-not-running", "pallet-reader-7d6c5b4a3-u8i9o");
    assert!(m.contains("動いていません"), "{m}");
}
