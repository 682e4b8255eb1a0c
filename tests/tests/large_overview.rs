//! A site larger than the live overview: the demo plus 52 GPU servers. The overview is the
//! paged, server-rendered one — nodes by GPU product, a page of cards with the nodes needing
//! attention first, links to the other pages — light on first load, kept live without the
//! bundle, and turned page by page on a kiosk.

use std::time::{Duration, Instant};

use anyhow::bail;
use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::browser::{shot, text};
use gpudash_tests::{first_load, with_browser, Gpudash};
use serde_json::{json, Value};

/// An x86 server with one L4, as its kubelet and the device plugin report it.
fn server(i: usize, ready: bool) -> Value {
    let name = format!("store-{i:02}");
    let alloc = json!({"cpu": "16", "memory": "65536Mi", "pods": "110", "nvidia.com/gpu": "1"});
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
            "nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.product": "NVIDIA-L4",
            "factory.example.com/store": if i.is_multiple_of(2) { "north" } else { "south" }}},
        "spec": {"providerID": format!("k3s://{name}")},
        "status": {
            "capacity": alloc, "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
                            "reason": if ready { "KubeletReady" } else { "KubeletNotReady" },
                            "message": if ready { "kubelet is posting ready status" } else { "container runtime is down" }}],
            "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.31.6+k3s1", "kernelVersion": "6.8.0-49-generic",
                         "containerRuntimeVersion": "containerd://1.7.23-k3s2", "osImage": "Ubuntu 24.04.1 LTS"}}
    })
}

/// The `data-node` of each card, in order.
fn cards(html: &str) -> Vec<String> {
    html.split("<article data-node=\"")
        .skip(1)
        .filter(|a| a.split('>').next().is_some_and(|tag| tag.contains("class=\"card node\"")))
        .filter_map(|a| a.split('"').next().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_site_gets_a_light_paged_overview_that_stays_live() {
    let sim = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await.unwrap();
    for i in 0..52 {
        sim.sim.apply(server(i, true)).unwrap();
    }
    let gd = Gpudash::watching(&sim.url(), &[]).await.unwrap();
    gd.wait_view(Duration::from_secs(20), |v| v["nodes"].as_array().is_some_and(|n| n.len() == 60)).await.unwrap();
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let (http, url) = (http.clone(), format!("{}{path}", gd.url));
        async move {
            let r = http.get(url).send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r.text().await.unwrap()
        }
    };

    // Page 1: no bundle, no boot state; the summary counts all 60; the cards start with the
    // nodes needing attention (the demo's: the Xavier without its device plugin, the full Nano
    // a model waits for, the over-committed NX…); 24 cards and a link to page 2.
    let html = get("/").await;
    assert!(html.contains("class=\"sheet\"") && !html.contains("gd-boot") && !html.contains("_bg.wasm"));
    assert!(html.contains("/refresh.js") && html.contains("/pkg/pages.css"));
    assert!(html.contains("60 nodes"), "the summary counts every node");
    let first = cards(&html);
    assert_eq!(first.len(), 24, "{first:?}");
    for needs in ["xavier-nx-03", "orin-nano-01", "orin-nx-02"] {
        assert!(first.iter().position(|n| n == needs).is_some_and(|p| p < 8), "{needs} first: {first:?}");
    }
    assert!(html.contains("rel=\"next\"") && html.contains("page=2") && !html.contains("rel=\"prev\""));
    assert!(html.contains(">NVIDIA-L4</a>") && html.contains(">52 (52)<"), "the L4 group counts its nodes");
    // Its first load, gzip as served: the page, both stylesheets and the script — no WASM.
    let parts = first_load(&html);
    assert_eq!(parts, ["/pkg/gpudash.css", "/pkg/pages.css", "/refresh.js"]);
    let mut weight = 0;
    for path in std::iter::once("/").chain(parts.iter().map(String::as_str)) {
        let r = http.get(format!("{}{path}", gd.url)).header("accept-encoding", "gzip").send().await;
        let r = r.unwrap();
        assert_eq!(r.headers().get("content-encoding").and_then(|v| v.to_str().ok()), Some("gzip"), "{path}");
        weight += r.bytes().await.unwrap().len();
    }
    assert!(weight < 40 * 1024, "the paged overview's first load: {weight} B gzip");

    // The last page has the rest; every node is on exactly one page.
    let mut all = first.clone();
    for p in [2, 3] {
        let html = get(&format!("/?page={p}")).await;
        all.extend(cards(&html));
        assert_eq!(html.contains("rel=\"next\""), p < 3, "page {p}");
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!((n, all.len()), (60, 60));
    // A group narrows the cards (and says which); the filters narrow everything.
    let l4 = get("/?group=NVIDIA-L4&page=3").await;
    assert!(cards(&l4).len() == 52 - 48 && cards(&l4).iter().all(|n| n.starts_with("store-")), "{:?}", cards(&l4));
    assert!(l4.contains("52 nodes") && l4.contains("class=\"current\""));
    let north = get("/?label=factory.example.com/store%3Dnorth").await;
    assert!(north.contains("26 nodes") && cards(&north).len() == 24, "{:?}", cards(&north));
    // In Japanese.
    let ja = get("/?lang=ja").await;
    assert!(ja.contains("60 台の Node") && ja.contains("GPU 別の Node") && ja.contains("次のページ"));

    // In the browser: a server going NotReady moves to the front of page 1 and the page follows
    // without a reload; a kiosk turns its pages by itself.
    let url = gd.url.clone();
    let sim2 = sim.sim.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/")).await?;
        c.execute("window.__gd_marker = 42", vec![]).await?;
        sim2.apply(server(37, false))?;
        let t = Instant::now();
        loop {
            let down = c
                .execute("return document.querySelector(\"article.node[data-node='store-37']\") !== null", vec![])
                .await?;
            if down == true {
                break;
            }
            if t.elapsed() > Duration::from_secs(15) {
                bail!("store-37 did not come to page 1: {}", text(&c, ".sheet").await?);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        assert_eq!(c.execute("return window.__gd_marker", vec![]).await?, 42, "the page was reloaded");
        shot(&c, "large-overview.png").await?;
        c.goto(&format!("{url}/?kiosk=1&rotate=2")).await?;
        c.execute("window.__gd_marker = 7", vec![]).await?;
        let t = Instant::now();
        while !c.current_url().await?.as_str().contains("page=2") {
            if t.elapsed() > Duration::from_secs(15) {
                bail!("the kiosk did not turn to page 2: {}", c.current_url().await?);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        assert_eq!(c.execute("return window.__gd_marker", vec![]).await?, 7, "the kiosk reloaded");
        assert!(text(&c, ".sheet-summary").await?.contains("page 2 of 3"));
        Ok(())
    })
    .await
    .unwrap();
}
