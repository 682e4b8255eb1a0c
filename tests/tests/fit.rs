//! The what-if check over HTTP and in the browser, against the simulator's edge scenario.

use std::time::Duration;

use fantoccini::Locator;
use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::{screenshot_dir, with_browser, Gpudash};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fit_api_answers_in_scheduler_words_and_changes_nothing() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    let gd = Gpudash::watching(&sim.url(), &[]).await.unwrap();
    let http = reqwest::Client::new();
    let post = |body: serde_json::Value| http.post(format!("{}/api/v1/fit", gd.url)).json(&body).send();
    // The seed's story: a second model on the one-GPU Orin Nano.
    let r = post(json!({"gpu_count": "1", "memory_request": "1Gi", "memory_limit": "2Gi", "node_selector": "factory.example.com/line=press-3", "runtime_class": "nvidia"})).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: serde_json::Value = r.json().await.unwrap_or_default();
    assert_eq!(
        v["summary"],
        "0/8 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint(s), \
         6 node(s) didn't match Pod's node affinity/selector."
    );
    let nano =
        v["nodes"].as_array().into_iter().flatten().find(|n| n["node"] == "orin-nano-01").cloned().unwrap_or_default();
    assert_eq!(nano["reasons"][0], "Insufficient nvidia.com/gpu");
    assert!(
        v["suggestions"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s.as_str().unwrap_or("").contains("time-slicing replicas ≥ 2"))),
        "{v}"
    );
    // A pasted Deployment that fits on the MIG slices.
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e}\nspec:\n  replicas: 2\n  template:\n    spec:\n      runtimeClassName: \
        nvidia\n      containers: [{name: c, resources: {limits: {nvidia.com/mig-1g.5gb: \"1\"}}}]\n";
    let v: serde_json::Value = post(json!({"yaml": yaml})).await.unwrap().json().await.unwrap_or_default();
    assert_eq!(v["placeable"], 2, "{v}");
    assert!(v["summary"].as_str().unwrap_or("").starts_with("1/8 nodes can run it (gpu-x86-01)"), "{v}");
    // Bad input: the field is named.
    let r = post(json!({"memory_limit": "12GB"})).await.unwrap();
    assert_eq!(r.status().as_u16(), 422);
    let v: serde_json::Value = r.json().await.unwrap_or_default();
    assert_eq!(v["error"]["field"], "memory_limit");
    let r = http.post(format!("{}/api/v1/fit", gd.url)).body("{not json").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let huge = json!({"yaml": "#".repeat(100_000)});
    let v: serde_json::Value = post(huge).await.unwrap().json().await.unwrap_or_default();
    assert_eq!(v["error"]["field"], "yaml");
    assert!(gpudash_tests::post_declared(&gd.url, "/api/v1/fit", 1 << 20).starts_with("HTTP/1.1 413"));
    // Read-only: the cluster saw GETs only.
    assert!(
        sim.sim.verb_counts().keys().all(|v| v == "get" || v == "list" || v == "watch"),
        "{:?}",
        sim.sim.verb_counts()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fit_page_checks_a_form_in_the_browser() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let url = gd.url.clone();
    let result = with_browser(|c| async move {
        c.goto(&format!("{url}/fit")).await?;
        c.find(Locator::Css("input[name=gpu_count]")).await?.send_keys("1").await?;
        c.find(Locator::Css("input[name=memory_limit]")).await?.send_keys("2Gi").await?;
        c.find(Locator::Css("input[name=node_selector]"))
            .await?
            .send_keys("kubernetes.io/hostname=orin-nano-01")
            .await?;
        c.find(Locator::Css("input[name=runtime_class]")).await?.send_keys("nvidia").await?;
        c.find(Locator::Css(".fit-form button[type=submit]")).await?.click().await?;
        let verdict =
            c.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(".fit-result")).await?.text().await?;
        assert!(verdict.contains("It does not fit"), "{verdict}");
        assert!(verdict.contains("Insufficient nvidia.com/gpu"), "{verdict}");
        assert!(verdict.contains("time-slicing replicas ≥ 2"), "{verdict}");
        let png = c.screenshot().await?;
        std::fs::write(screenshot_dir().join("fit.png"), png)?;
        // A bad quantity is pointed at.
        c.goto(&format!("{url}/fit")).await?;
        c.find(Locator::Css("input[name=memory_request]")).await?.send_keys("2 gigs").await?;
        c.find(Locator::Css(".fit-form button[type=submit]")).await?.click().await?;
        let e = c.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(".fit-error")).await?.text().await?;
        assert!(e.contains("memory_request"), "{e}");
        let marked = c
            .execute("return document.querySelector('input[name=memory_request]').getAttribute('aria-invalid')", vec![])
            .await?;
        assert_eq!(marked, "true");
        Ok(())
    })
    .await;
    if let Err(e) = result {
        panic!("{e:#}\n{}", gd.proc.output());
    }
}

/// The demo's ocr-model as its operator would paste its next version (the default strategy).
const OCR_UPDATE: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: ocr-model, namespace: vision}
spec:
  replicas: 1
  selector: {matchLabels: {app: ocr-model}}
  template:
    metadata: {labels: {app: ocr-model}}
    spec:
      containers:
      - name: ocr
        image: registry.factory.local/vision/paddleocr-trt:2.9
        resources: {requests: {cpu: '1', memory: 6Gi, nvidia.com/gpu: '1'}, limits: {memory: 10Gi, nvidia.com/gpu: '1'}}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fit_page_says_whether_an_update_can_complete_in_both_languages() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    let url = gd.url.clone();
    let result = with_browser(|c| async move {
        for (lang, stuck, fix) in [
            ("en", "Its update cannot complete as written", "strategy Recreate"),
            ("ja", "この更新は書かれたままでは完了しません", "strategy Recreate"),
        ] {
            c.goto(&format!("{url}/fit?lang={lang}")).await?;
            c.find(Locator::Css("textarea[name=yaml]")).await?.send_keys(OCR_UPDATE).await?;
            c.find(Locator::Css(".fit-form button[type=submit]")).await?.click().await?;
            let update = c.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(".fit-update")).await?;
            assert_eq!(update.attr("data-completes").await?.as_deref(), Some("false"));
            let text = update.text().await?;
            for part in [stuck, fix, "gpu-rollout-deadlock", "25% → 1"] {
                assert!(text.contains(part), "{lang}: {part:?} not in {text}");
            }
            let png = c.screenshot().await?;
            std::fs::write(screenshot_dir().join(format!("fit-update-{lang}.png")), png)?;
        }
        // With Recreate the same update completes.
        c.goto(&format!("{url}/fit")).await?;
        let recreate = OCR_UPDATE.replace("  replicas: 1\n", "  replicas: 1\n  strategy: {type: Recreate}\n");
        c.find(Locator::Css("textarea[name=yaml]")).await?.send_keys(&recreate).await?;
        c.find(Locator::Css(".fit-form button[type=submit]")).await?.click().await?;
        let update = c.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(".fit-update")).await?;
        assert_eq!(update.attr("data-completes").await?.as_deref(), Some("true"));
        assert!(update.text().await?.contains("Its update can complete"));
        Ok(())
    })
    .await;
    if let Err(e) = result {
        panic!("{e:#}\n{}", gd.proc.output());
    }
}
