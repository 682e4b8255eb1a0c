//! What a person sees, in headless Chromium: the overview, node, pending, diagnoses, kiosk and
//! embed pages of `gpudash serve --demo`, live updates without reload, hostile names as text.
//! Screenshots go to `screenshots/` (named in the README).

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fantoccini::Locator;
use gpudash_tests::browser::{hydrated, shot, text, viewport, wait_text};
use gpudash_tests::{root, with_browser, Gpudash};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_pages_show_the_demo_cluster_live() {
    let edge = root().join("sim/scenarios/edge.yaml").display().to_string();
    let late = root().join("tests/scenarios/browser-timeline.yaml").display().to_string();
    let gd = Gpudash::start(&["--demo", &edge, &late, "--kiosk-rotate", "4"]).await.unwrap();
    let url = gd.url.clone();
    let result = with_browser(|c| async move {
        // Overview: every node, slot grids, memory bars, the demo marked as simulated.
        c.goto(&format!("{url}/")).await?;
        hydrated(&c).await?;
        c.execute("window.__gd_marker = 42", vec![]).await?;
        let status = text(&c, ".status").await?;
        assert!(status.contains("SIMULATED"), "{status}");
        for node in ["k3s-server-01", "orin-agx-01", "orin-nano-01", "orin-nx-02", "xavier-nx-03", "gpu-x86-01"] {
            c.find(Locator::Css(&format!("article.node[data-node='{node}']")))
                .await
                .with_context(|| node.to_string())?;
        }
        let nano = text(&c, "article.node[data-node='orin-nano-01']").await?;
        assert!(nano.contains("defect-detector"), "{nano}");
        assert!(nano.contains("1 pending"), "{nano}");
        assert!(nano.contains("1 whole GPU · 1/1 held"), "{nano}");
        let agx = c.find_all(Locator::Css("article.node[data-node='orin-agx-01'] li.slot")).await?;
        assert_eq!(agx.len(), 4, "AGX Orin: 1 GPU × 4 replicas");
        let nx = text(&c, "article.node[data-node='orin-nx-02'] .memory").await?;
        assert!(nx.contains("Limits exceed the board"), "{nx}");
        let mig = text(&c, "article.node[data-node='gpu-x86-01']").await?;
        assert!(mig.contains("MIG slices · 3/7 held") && mig.contains("1g.5gb"), "{mig}");
        shot(&c, "overview.png").await?;

        // Live: a node joins and a hostile-named pod goes Pending, without a reload.
        wait_text(&c, "article.node", "late-arrival-01", Duration::from_secs(20)).await?;
        let marker = c.execute("return window.__gd_marker", vec![]).await?;
        assert_eq!(marker, 42, "the page was reloaded");

        // Pending page: the Orin Nano's second model with its reasons as node counts.
        c.goto(&format!("{url}/pending")).await?;
        hydrated(&c).await?;
        let card = wait_text(&c, "article.pending", "anomaly-detector-6f8d7b5c4-r7zq9", Duration::from_secs(5)).await?;
        assert!(card.contains("Insufficient nvidia.com/gpu"), "{card}");
        assert!(card.contains("1 of 8 nodes"), "{card}");
        assert!(card.contains("1 × nvidia.com/gpu"), "{card}");
        assert!(card.contains("insufficient-gpu"), "{card}");
        // The hostile name and message are text, not markup.
        let evil = wait_text(&c, "article.pending", "<img src=x onerror=alert(1)>", Duration::from_secs(5)).await?;
        assert!(evil.contains("<img src=x onerror=alert(1)>"), "{evil}");
        let imgs = c.execute("return document.querySelectorAll('img, main script').length", vec![]).await?;
        assert_eq!(imgs, 0, "cluster strings were rendered as HTML");
        shot(&c, "pending.png").await?;

        // Node page: every holder with its runtimeClass; a server-rendered page kept live by its
        // own small script (no reload: tests/tests/agent.rs watches it update).
        c.goto(&format!("{url}/nodes/orin-agx-01")).await?;
        let count = "const n = s => document.querySelectorAll(s).length; \
                     return [n('meta[http-equiv=refresh]'), n('script[src$=\"/refresh.js\"]')]";
        let live = c.execute(count, vec![]).await?;
        assert_eq!(live, serde_json::json!([0, 1]));
        let holders = text(&c, ".panel table").await?;
        assert!(holders.contains("whisper-asr-7b8d9c6f4-q9m3n") && holders.contains("nvidia"), "{holders}");
        shot(&c, "node.png").await?;

        // Diagnoses: most severe first, linking to the object.
        c.goto(&format!("{url}/diagnoses")).await?;
        hydrated(&c).await?;
        let first = text(&c, ".diagnosis-item").await?;
        assert!(first.contains("critical"), "{first}");
        let links = c.find_all(Locator::Css(".diagnosis-item a.obj")).await?;
        assert!(!links.is_empty());
        // Each says how long it has held (the alert's age too), its start on hover.
        let since = c.find_all(Locator::Css(".diagnosis-item time.since")).await?;
        let items = c.find_all(Locator::Css(".diagnosis-item")).await?;
        assert_eq!(since.len(), items.len(), "every diagnosis has its since");
        let at = since[0].attr("datetime").await?.unwrap_or_default();
        assert!(at.ends_with('Z') && at.len() == 20, "{at}");
        let age = since[0].text().await?;
        assert!(age.starts_with("for ") && age.ends_with('s'), "{age}");
        shot(&c, "diagnoses.png").await?;

        // History: charts served as SVG images that load.
        // History is a plain document (charts are images): it loads no WASM.
        c.goto(&format!("{url}/history?range=1h")).await?;
        let loaded = c
            .execute("return performance.getEntriesByType('resource').map(e => e.name).filter(n => /gpudash(_bg\\.wasm|\\.js)/.test(n)).length", vec![])
            .await?;
        assert_eq!(loaded, 0, "the history page loads the bundle");
        let status = text(&c, ".status").await?;
        assert!(status.contains("Snapshot"), "{status}");
        let t = Instant::now();
        loop {
            let loaded = c.execute("const i = [...document.querySelectorAll('.chart img')]; return i.length > 3 && i.every(x => x.complete && \
                x.naturalWidth > 0)", vec![]).await?;
            if loaded == true {
                break;
            }
            if t.elapsed() > Duration::from_secs(10) {
                bail!("history charts did not load");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        shot(&c, "history.png").await?;

        // Kiosk at 1920×1080: dark, no controls, rotates to the pending page by itself.
        viewport(&c, 1920, 1080).await?;
        c.goto(&format!("{url}/?kiosk=1")).await?;
        hydrated(&c).await?;
        let class = c.execute("return document.documentElement.className", vec![]).await?;
        assert!(class.as_str().is_some_and(|s| s.contains("kiosk")), "{class}");
        let controls = c
            .execute("return document.querySelectorAll('form, button, select, input, nav, details').length", vec![])
            .await?;
        assert_eq!(controls, 0, "kiosk shows controls");
        let size = c
            .execute("return parseFloat(getComputedStyle(document.querySelector('.card-head h2')).fontSize)", vec![])
            .await?;
        assert!(size.as_f64().unwrap_or(0.0) >= 26.0, "kiosk node names are too small to read from 5 m: {size}");
        shot(&c, "kiosk-overview.png").await?;
        wait_text(&c, "h1.page-title", "Pending pods", Duration::from_secs(10)).await?;
        shot(&c, "kiosk-pending.png").await?;
        Ok(())
    })
    .await;
    if let Err(e) = result {
        panic!("{e:#}\n--- gpudash output ---\n{}", gd.proc.output());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embed_mode_under_a_base_path_has_no_chrome_and_allows_only_listed_frame_ancestors() {
    let gd =
        Gpudash::start_with_base(&["--demo", "--frame-ancestors", "https://portal.example.com"], "/gpu").await.unwrap();
    let r = reqwest::get(format!("{}/?embed=1", gd.url)).await.unwrap();
    let csp = r.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(csp.contains("frame-ancestors https://portal.example.com"), "{csp}");
    let url = gd.url.clone();
    let result = with_browser(|c| async move {
        c.goto(&format!("{url}/?embed=1")).await?;
        hydrated(&c).await?;
        let nav = c.execute("return document.querySelectorAll('nav').length", vec![]).await?;
        assert_eq!(nav, 0, "embed mode shows page chrome");
        c.find(Locator::Css("article.node[data-node='orin-nano-01']")).await?;
        // Links keep the base path and the embed flag.
        let href = c.find(Locator::Css("article.node[data-node='orin-nano-01'] h2 a")).await?.attr("href").await?;
        assert_eq!(href.as_deref(), Some("/gpu/nodes/orin-nano-01?embed=1"));
        shot(&c, "embed.png").await?;
        Ok(())
    })
    .await;
    if let Err(e) = result {
        panic!("{e:#}\n--- gpudash output ---\n{}", gd.proc.output());
    }
    let plain = Gpudash::start(&["--demo"]).await.unwrap();
    let r = reqwest::get(format!("{}/", plain.url)).await.unwrap();
    let csp = r.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
}
