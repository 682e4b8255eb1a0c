//! Every way a GPU is shared (issue 54), end to end. HAMi vGPU (`tests/scenarios/sharing/hami.yaml`,
//! shapes from HAMi's protocol document and code) and an MPS node without its control daemon
//! (`mps-daemon-missing.yaml`): served by the simulator and read through the API and in Chromium
//! (both languages, desktop and phone), and HAMi on the real control plane, where pods are
//! listed in protobuf and HAMi's annotations must survive that path too.

use std::time::Duration;

use fantoccini::Locator;
use gpudash_tests::browser::{shot, viewport, wait_text};
use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::{with_browser, Gpudash};
use serde_json::{json, Value};

fn gpu<'a>(v: &'a Value, node: &str) -> &'a Value {
    let n = v["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == node);
    &n.unwrap_or_else(|| panic!("node {node}: {}", v["nodes"]))["gpu_resources"][0]
}

fn row_labels(g: &Value) -> Vec<String> {
    g["rows"].as_array().into_iter().flatten().filter_map(|r| r.as_str().map(str::to_string)).collect()
}

/// The held slots of one row: (pod, label).
fn held(g: &Value, row: usize) -> Vec<(String, String)> {
    g["slots"][row]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            let h = usize::try_from(s["holder"].as_u64()?).ok()?;
            Some((g["holders"][h]["name"].as_str()?.to_string(), s["label"].as_str().unwrap_or("").to_string()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hami_vgpus_are_shown_by_card_through_the_api_and_in_chromium() {
    let files = gpudash_tests::scenario_files("sharing", 3);
    let mut args = vec!["--demo"];
    args.extend(files.iter().map(String::as_str));
    let gd = Gpudash::start(&args).await.unwrap();
    let v = gd.wait_view(Duration::from_secs(20), |v| v["source"]["synced"] == true).await.unwrap();
    let g = gpu(&v, "v100-hami-01");
    assert_eq!((&g["sharing"], &g["physical_gpus"], &g["replicas_per_gpu"]), (&json!("vgpu"), &json!(2), &json!(10)));
    assert_eq!(g["placement_known"], true);
    assert_eq!(
        row_labels(g),
        [
            "GPU 0 · free 16768/32768 MiB, 50 % cores",
            "GPU 1 · free 24768/32768 MiB, 100 % cores",
            "card not yet written by HAMi",
        ]
    );
    assert_eq!(held(g, 0), [("llm-chat-6d5c4b3a2-k8m4n".to_string(), "16000 MiB · 50 %".to_string())]);
    assert_eq!(held(g, 1).len(), 2);
    // HAMi's memory and cores resources are amounts of a card, not GPUs of their own.
    let resources: Vec<&str> = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["gpu_resources"].as_array().into_iter().flatten())
        .filter_map(|g| g["resource"].as_str())
        .collect();
    assert!(!resources.iter().any(|r| r.contains("gpumem") || r.contains("gpucores")), "{resources:?}");
    // An MPS node whose plugin waits for its control daemon (`mps-daemon-missing.yaml`).
    let mps = v["diagnoses"].as_array().into_iter().flatten().find(|d| d["name"] == "l4-mps-01").cloned();
    assert_eq!(mps.as_ref().map(|d| d["code"].clone()), Some(json!("gpu-mps-daemon-missing")), "{mps:?}");
    let ja = gd.json("/api/v1/cluster?lang=ja").await.unwrap();
    assert!(
        gpu(&ja, "a10-hami-02")["rows"][1].as_str().is_some_and(|r| r.contains("空き 17271/23028 MiB")),
        "{}",
        gpu(&ja, "a10-hami-02")["rows"]
    );
    // Shares no card can give (`hami-waiting.yaml`), in both languages.
    let said = |v: &Value, name: &str| -> Vec<(String, String)> {
        v["diagnoses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["name"] == name)
            .map(|d| (d["code"].as_str().unwrap_or("").to_string(), d["message"].as_str().unwrap_or("").to_string()))
            .collect()
    };
    let embed = said(&v, "embed-5d6c7b8a9-t4u5v");
    assert_eq!(embed.len(), 1, "{embed:?}");
    assert_eq!(embed[0].0, "insufficient-gpu-memory");
    assert!(embed[0].1.contains("v100-hami-01 GPU 1: 24768 of 32768 MiB free"), "{}", embed[0].1);
    assert!(
        said(&ja, "embed-5d6c7b8a9-t4u5v")[0].1.contains("32768 MiB 中 24768 MiB 空き"),
        "{:?}",
        said(&ja, "embed-5d6c7b8a9-t4u5v")
    );
    assert_eq!(said(&v, "llm-70b-0").first().map(|d| d.0.as_str()), Some("gpu-share-exceeds-gpu"));
    assert!(said(&v, "tiny-0").is_empty());
    let p = v["pending"].as_array().into_iter().flatten().find(|p| p["name"] == "embed-5d6c7b8a9-t4u5v").cloned();
    assert_eq!(
        p.map(|p| p["message"].clone()),
        Some(json!("no available node, 2 nodes do not meet")),
        "HAMi's own event"
    );

    let url = gd.url.clone();
    with_browser(|c| async move {
        for (lang, caption) in [("en", "2 GPUs × 10 HAMi vGPU replicas"), ("ja", "GPU 2 基 × HAMi vGPU 10 レプリカ")]
        {
            for (w, h) in [(1920, 1080), (390, 844)] {
                viewport(&c, w, h).await?;
                c.goto(&format!("{url}/nodes/v100-hami-01?lang={lang}")).await?;
                wait_text(&c, ".gpu-caption", caption, Duration::from_secs(5)).await?;
                let rows = c.find_all(Locator::Css("article.node[data-node='v100-hami-01'] .slot-row")).await?;
                assert_eq!(rows.len(), 3, "two cards and the pod HAMi has not placed yet");
                let first = rows[0].find(Locator::Css(".slot-row-label")).await?.text().await?;
                assert!(first.starts_with("GPU 0"), "{first}");
                assert_eq!(rows[1].find_all(Locator::Css("li.slot.held")).await?.len(), 2);
                assert_eq!(rows[1].find_all(Locator::Css("li.slot.free")).await?.len(), 8);
                shot(&c, &format!("sharing-hami-{lang}-{w}.png")).await?;
            }
        }
        Ok(())
    })
    .await
    .unwrap();
}

/// A kwok node registered by HAMi (its annotation as HAMi v2.5+ writes it) and pods with HAMi's
/// record of their cards, created on the real API server: gpudash lists pods in protobuf there,
/// and must keep that annotation on that path too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hami_annotations_survive_the_real_api_servers_protobuf_lists() {
    let plane = ControlPlane::start().await.unwrap();
    // As HAMi v2.5 and later write it (JSON; Go's omitempty drops index 0 and numa 0).
    const CARD: &str = "GPU-7d1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6";
    let register = format!(
        r#"[{{"id":"{CARD}","count":4,"devmem":23028,"devcore":100,"type":"NVIDIA-NVIDIA A10","mode":"hami-core","health":true}}]"#
    );
    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "a10-hami-1", "labels": {"kubernetes.io/hostname": "a10-hami-1", "gpu": "on"},
                     "annotations": {"kwok.x-k8s.io/node": "fake", "hami.io/node-nvidia-register": register}},
        "spec": {}});
    let status = json!({"status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"},
                                   "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"}}});
    plane.add_nodes(&[(node, status)]).await.unwrap();
    let pod = |name: &str, mem: u32, cores: u32| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default",
                            "annotations": {"hami.io/vgpu-devices-allocated": format!("{CARD},NVIDIA,{mem},{cores}:;"),
                                            "hami.io/bind-phase": "success"}},
               "spec": {"nodeName": "a10-hami-1", "schedulerName": "hami-scheduler",
                        "containers": [{"name": "m", "image": "vllm:0.6",
                                        "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": mem.to_string(),
                                                                 "nvidia.com/gpucores": cores.to_string()}}}]}})
    };
    // Two that wait (no hami-scheduler runs here: they stay Pending, as they would under it):
    // one larger than the card, one larger than what is free on it.
    let waiting = |name: &str, mem: u32| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default"},
               "spec": {"schedulerName": "hami-scheduler",
                        "containers": [{"name": "m", "image": "vllm:0.6",
                                        "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": mem.to_string()}}}]}})
    };
    plane
        .apply(&[pod("chat", 12000, 60), pod("embed", 4000, 20), waiting("too-big", 30000), waiting("wide", 20000)])
        .unwrap();
    let kc = plane.kubeconfig.display().to_string();
    let gd = Gpudash::start(&["--kubeconfig", &kc]).await.unwrap();
    let v = gd
        .wait_view(Duration::from_secs(60), |v| {
            v["pending"].as_array().map(Vec::len) == Some(2)
                && v["nodes"].as_array().into_iter().flatten().any(|n| {
                    n["name"] == "a10-hami-1" && n["gpu_resources"][0]["holders"].as_array().map(Vec::len) == Some(2)
                })
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", plane.logs(20)));
    let g = gpu(&v, "a10-hami-1");
    assert_eq!(g["sharing"], "vgpu");
    assert_eq!(row_labels(g), ["GPU 0 · free 7028/23028 MiB, 20 % cores"]);
    let mut on_card = held(g, 0);
    on_card.sort();
    assert_eq!(
        on_card,
        [("chat".to_string(), "12000 MiB · 60 %".to_string()), ("embed".to_string(), "4000 MiB · 20 %".to_string())]
    );
    let code = |name: &str| {
        v["diagnoses"].as_array().into_iter().flatten().find(|d| d["name"] == name).map(|d| d["code"].clone())
    };
    assert_eq!(code("too-big"), Some(json!("gpu-share-exceeds-gpu")), "{}", v["diagnoses"]);
    assert_eq!(code("wide"), Some(json!("insufficient-gpu-memory")), "{}", v["diagnoses"]);
}
