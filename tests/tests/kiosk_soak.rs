//! A wall screen left on: headless Chromium on the kiosk page while the simulated cluster
//! churns, for `GPUDASH_SOAK_SECONDS` (`./test.sh`: several minutes). The page keeps following
//! the cluster without a reload, rotates, and its JS heap (after a forced GC) and DOM stay flat.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::{flat, soak_duration, spawn_churn, with_browser, Gpudash};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kiosk_page_runs_under_churn_without_growing() {
    let running = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Auto).await.unwrap();
    let gd = Gpudash::watching(&running.url(), &["--kiosk-rotate", "7"]).await.unwrap();
    let churn = spawn_churn(running.sim.clone(), 20);
    let url = gd.url.clone();
    let result = with_browser(|c| async move {
        c.set_window_size(1920, 1080).await?;
        c.goto(&format!("{url}/?kiosk=1")).await?;
        gpudash_tests::browser::hydrated(&c).await?;
        let run = soak_duration();
        // The allocator reaches its high-water mark over the first scope renewals.
        let warmup = Duration::from_secs(45).min(run / 4);
        let t0 = Instant::now();
        let (mut heap, mut wasm, mut dom, mut revs, mut titles) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        while t0.elapsed() < run {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let v = c
                .execute(
                    "window.gc && window.gc();
                     const m = /revision (\\d+)/.exec(document.querySelector('.status-text')?.textContent || '');
                     return [performance.memory.usedJSHeapSize, document.getElementsByTagName('*').length,
                             m ? Number(m[1]) : 0, document.querySelector('h1.page-title')?.textContent || 'overview',
                             !!window.gc, window.gpudashWasmMemory ? window.gpudashWasmMemory.buffer.byteLength : -1];",
                    vec![],
                )
                .await?;
            let a = v.as_array().context("sample")?;
            if a.get(4).and_then(|g| g.as_bool()) != Some(true) {
                bail!("window.gc is missing: Chromium was not started with --js-flags=--expose-gc");
            }
            let wasm_bytes = a.get(5).and_then(|w| w.as_f64()).unwrap_or(-1.0);
            if wasm_bytes < 0.0 {
                bail!("the page does not expose its WASM memory (window.gpudashWasmMemory)");
            }
            revs.push(a[2].as_u64().unwrap_or(0));
            titles.push(a[3].as_str().unwrap_or("").to_string());
            if t0.elapsed() > warmup {
                heap.push(a[0].as_f64().unwrap_or(0.0) / 1048576.0);
                wasm.push(wasm_bytes / 1048576.0);
                dom.push(a[1].as_f64().unwrap_or(0.0));
            }
        }
        let fmt = |s: &[f64]| s.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(" ");
        println!(
            "kiosk page for {run:?} under churn: revisions {}→{}; after warm-up, JS heap MiB: {}; WASM memory MiB: {}; DOM elements: {}",
            revs.first().copied().unwrap_or(0),
            revs.last().copied().unwrap_or(0),
            fmt(&heap),
            fmt(&wasm),
            fmt(&dom)
        );
        let first = revs.iter().copied().find(|r| *r > 0).unwrap_or(0);
        let last = revs.last().copied().unwrap_or(0);
        anyhow::ensure!(last > first + 10, "the kiosk stopped following the cluster: revisions {revs:?}");
        anyhow::ensure!(
            titles.iter().any(|t| t.contains("Pending")) && titles.iter().any(|t| !t.contains("Pending")),
            "the kiosk did not rotate: {titles:?}"
        );
        anyhow::ensure!(flat(&heap, 0.25, 1.0), "the JS heap grew: {}", fmt(&heap));
        // Linear memory never shrinks: any growth after warm-up is a leak (one 64 KiB page of
        // slack for the allocator's high-water mark).
        anyhow::ensure!(flat(&wasm, 0.0, 0.0625), "the WASM memory grew: {}", fmt(&wasm));
        anyhow::ensure!(flat(&dom, 0.5, 200.0), "the DOM grew: {}", fmt(&dom));
        Ok(())
    })
    .await;
    churn.abort();
    if let Err(e) = result {
        panic!("{e:#}\n--- gpudash output ---\n{}", gd.proc.output());
    }
}
