//! GPU-hours reports through the real server: the demo's history, read back per workload, with
//! each resource's share of a GPU (a time-slicing replica a quarter, a MIG 1g slice a seventh of
//! an A100, a whole GPU one) in the figures; the CSV with its BOM and Japanese headers; bad
//! queries answered 400; the page in headless Chromium in Japanese at 1920 and 390 px with no
//! English left outside the data.

use std::time::Duration;

use gpudash_tests::browser::{shot, text, viewport};
use gpudash_tests::{with_browser, Gpudash};
use serde_json::Value;

fn row<'a>(r: &'a Value, ns: &str, workload: &str) -> &'a Value {
    r["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|x| x["namespace"] == ns && x["workload"] == workload)
        .unwrap_or_else(|| panic!("no {ns} {workload} in {r}"))
}

/// Every run of three or more Latin letters in the page's main text outside the data (names in
/// `.mono` and the namespace column, the chart's legend) that is not a term Japanese pages keep.
const ENGLISH_LEFT: &str = r#"
const keep = new Set(['GPU', 'Pod', 'Namespace', 'MIG', 'GiB', 'CSV', 'UTC']);
const left = [];
const walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
while (walk.nextNode()) {
  const n = walk.currentNode;
  const el = n.parentElement;
  if (el.closest('.mono, tbody td:first-child, .legend, svg')) continue;
  for (const w of (n.textContent.match(/[A-Za-z]{3,}/g) || [])) if (!keep.has(w)) left.push(w);
}
return left;
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demos_gpu_hours_per_workload_in_the_api_the_csv_and_the_page() {
    let gd = Gpudash::start(&["--demo"]).await.unwrap();
    // The recorder writes the first synced view within a tick (10 s); then the intervals run.
    let t = std::time::Instant::now();
    let r = loop {
        let r = gd.json("/api/v1/reports?by=workload").await.unwrap();
        let triton = r["rows"].as_array().into_iter().flatten().find(|x| x["workload"] == "StatefulSet/triton-server");
        if triton.is_some_and(|x| x["held_gpu_seconds"].as_f64().unwrap_or(0.0) >= 3.0) {
            break r;
        }
        assert!(t.elapsed() < Duration::from_secs(40), "no GPU-hours recorded in 40 s: {r}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let held = |ns: &str, w: &str| row(&r, ns, w)["held_gpu_seconds"].as_f64().unwrap_or(-1.0);
    let whole = held("ml", "StatefulSet/triton-server");
    assert!(whole >= 3.0, "triton held a whole A100 for the seconds since start: {whole}");
    // Recorded at the same tick: the shares are exact ratios.
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.max(1.0);
    assert!(close(held("vision", "Deployment/yolo-detector"), whole / 4.0), "a time-slicing replica of four: {r}");
    assert!(close(held("ml", "StatefulSet/batch-embed"), whole * 2.0 / 7.0), "two MIG 1g slices of an A100: {r}");
    // The demo's Pending model waited; the Jetson boards' memory is counted, the server's not.
    assert!(row(&r, "vision", "Deployment/anomaly-detector")["waited_seconds"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(row(&r, "vision", "Deployment/yolo-detector")["memory_gib_seconds"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(row(&r, "ml", "StatefulSet/triton-server")["memory_gib_seconds"].is_null());
    // A model on a Jetson without a GPU request still takes the board's memory.
    let counter = row(&r, "vision", "Deployment/people-counter");
    assert_eq!(counter["held_gpu_seconds"], 0.0);
    assert!(counter["memory_gib_seconds"].as_f64().unwrap_or(0.0) > 0.0, "{counter}");
    // Without node agents nothing was measured: used is unknown, never 0.
    assert!(row(&r, "ml", "StatefulSet/triton-server")["used_gpu_seconds"].is_null());

    let http = reqwest::Client::new();
    let csv = http.get(format!("{}/api/v1/reports?by=namespace&format=csv&lang=ja", gd.url)).send().await.unwrap();
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    let body = csv.text().await.unwrap_or_default();
    let body = body.strip_prefix('\u{feff}').unwrap_or_else(|| panic!("no BOM: {body}"));
    let head: Vec<&str> = body.lines().next().unwrap_or("").split(',').collect();
    assert_eq!(head[3], "確保 GPU 時間", "{head:?}");
    assert!(body.lines().skip(1).any(|l| l.starts_with("vision,")), "{body}");

    for (q, field) in [("by=team", "by"), ("month=2026-13", "month"), ("tz=9999", "tz"), ("from=5&to=1", "to")] {
        let resp = http.get(format!("{}/api/v1/reports?{q}", gd.url)).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{q}");
        let v: Value = resp.json().await.unwrap_or_default();
        assert_eq!(v["error"]["field"], field, "{q}: {v}");
    }

    let url = gd.url.clone();
    with_browser(|c| async move {
        for (w, h, name) in [(1920, 1080, "reports-ja-1920.png"), (390, 844, "reports-ja-390.png")] {
            viewport(&c, w, h).await?;
            c.goto(&format!("{url}/reports?lang=ja&by=workload")).await?;
            assert_eq!(text(&c, "h1.page-title").await?, "GPU 時間");
            let table = text(&c, "table.report").await?;
            assert!(table.contains("Deployment/yolo-detector") && table.contains("合計"), "{table}");
            let bars = c.execute("return document.querySelectorAll('.report-chart rect').length", vec![]).await?;
            assert!(bars.as_u64().unwrap_or(0) >= 2, "the chart draws the namespaces' bars: {bars}");
            let left = c.execute(ENGLISH_LEFT, vec![]).await?;
            assert_eq!(left.as_array().map(Vec::len), Some(0), "English left on the Japanese page: {left}");
            let csv = c.execute("return document.querySelector('a[download]').getAttribute('href')", vec![]).await?;
            assert!(
                csv.as_str().is_some_and(|h| h.contains("/api/v1/reports?")
                    && h.contains("format=csv")
                    && h.contains("lang=ja")),
                "{csv}"
            );
            // The page itself does not scroll sideways on a phone (the table scrolls in its box).
            let wide = c.execute("return document.documentElement.scrollWidth > window.innerWidth + 1", vec![]).await?;
            assert_eq!(wide, Value::Bool(false), "{name}: the page is wider than the screen");
            shot(&c, name).await?;
        }
        // Sorted by the wait: the demo's two Pending models first, the header marked.
        c.goto(&format!("{url}/reports?by=workload&sort=waited")).await?;
        let first = text(&c, "table.report tbody tr:first-child").await?;
        assert!(first.contains("anomaly-detector") || first.contains("label-reader"), "{first}");
        let sorted = c.execute("return document.querySelector('th[aria-sort=descending]').textContent", vec![]).await?;
        assert!(sorted.as_str().is_some_and(|t| t.contains("waiting")), "{sorted}");
        Ok(())
    })
    .await
    .unwrap();
}
