//! `gpudash-bench --hostile-lists SECONDS`: issue 58's probe, repeated. A 100-node site with
//! 10,000 Pending pods (any tenant can make them) and 90 days of history; 20 readers each of
//! `/pending`, `/diagnoses`, the 90-day by-pod report page and `GET /api/v1/reports` for the same
//! range, all at once for SECONDS, while `/healthz` is timed every 50 ms and gpudash's RSS read
//! every 250 ms. Printed: each path's answers (by status) and latency, `/healthz` p50/p99/worst,
//! RSS at rest and at its highest against the shipped manifest's 256 MiB limit.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpudash_sim::{start, Scenario, Simulator, TimelineMode};
use serde_json::json;

use crate::{cluster, history, pct, proc};

/// The shipped manifest's memory limit (`deploy/manifests/gpudash.yaml`).
const LIMIT_MIB: f64 = 256.0;

#[derive(Default)]
struct Tally {
    by_status: BTreeMap<u16, usize>,
    ms: Vec<f64>,
    errors: usize,
}

pub async fn lists(seconds: u64, readers: usize, pending: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let now = jiff::Timestamp::now().as_second();
    let from = now - 90 * 86_400;
    let t = Instant::now();
    {
        let pool = gpudash::db::open(&dir.path().join("h.db")).await?;
        // 90 days of a 100-node site, busy sampled every 10 minutes (what retention keeps).
        history::fill(&pool, 100, (from, now), 13, 600).await?;
        gpudash::history::report::sum_busy_hours(&pool, now + 3600).await?;
        pool.close().await;
    }
    println!("history: 90 days of 100 nodes written in {:.1} s", t.elapsed().as_secs_f64());

    let mut objects = cluster::generate(100, 30).objects;
    for k in 0..pending {
        objects.push(cluster::pod(
            &format!("tenant-{}", k % 20),
            &format!("flood-{k:05}"),
            None,
            Some(("nvidia.com/gpu", 1)),
            1,
        ));
    }
    let text = serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": objects}))?;
    let scenario = Scenario::from_text("hostile", &text).map_err(|e| anyhow::anyhow!("{e}"))?;
    let sim = start(Simulator::new(scenario), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await?;
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, sim.kubeconfig())?;
    let port = gpudash_tests::free_port();
    let (pid, _gpudash) = proc::spawn_gpudash(&kc, port, dir.path())?;
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?;
    let t = Instant::now();
    loop {
        let ready = http.get(format!("{url}/readyz")).send().await.is_ok_and(|r| r.status().is_success());
        if ready {
            break;
        }
        anyhow::ensure!(t.elapsed() < Duration::from_secs(120), "gpudash not ready within 120 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rest_mib = proc::rss_kib(pid) as f64 / 1024.0;
    let v: serde_json::Value = http.get(format!("{url}/api/v1/cluster")).send().await?.json().await?;
    let listed = v["pending"].as_array().map_or(0, Vec::len);
    let derive_ms = crate::last_derive_ms(&http, &url).await.unwrap_or(f64::NAN);
    println!(
        "gpudash ready in {:.1} s: {listed} Pending pods in the view, the last derivation {derive_ms:.0} ms, RSS \
         {rest_mib:.0} MiB at rest",
        t.elapsed().as_secs_f64()
    );

    // GPUDASH_BENCH_PATHS=lists|reports: one half only (to see which one costs what).
    let only = std::env::var("GPUDASH_BENCH_PATHS").unwrap_or_default();
    let paths: Vec<String> = [
        "/pending".to_string(),
        "/diagnoses".to_string(),
        format!("/reports?from={from}&to={now}&by=pod"),
        format!("/api/v1/reports?from={from}&to={now}&by=pod"),
    ]
    .into_iter()
    .enumerate()
    .filter(|(i, _)| match only.as_str() {
        "lists" => *i < 2,
        "reports" => *i >= 2,
        _ => true,
    })
    .map(|(_, p)| p)
    .collect();
    let until = Instant::now() + Duration::from_secs(seconds);
    let tallies: Vec<Arc<Mutex<Tally>>> = paths.iter().map(|_| Arc::default()).collect();
    let mut tasks = Vec::new();
    for (path, tally) in paths.iter().zip(&tallies) {
        for _ in 0..readers {
            let (http, url, path, tally) = (http.clone(), url.clone(), path.clone(), tally.clone());
            tasks.push(tokio::spawn(async move {
                while Instant::now() < until {
                    let t = Instant::now();
                    let r = http.get(format!("{url}{path}")).send().await;
                    let status = match r {
                        Ok(r) => {
                            let s = r.status().as_u16();
                            let _ = r.bytes().await;
                            Some(s)
                        }
                        Err(_) => None,
                    };
                    let mut g = tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    match status {
                        Some(s) => *g.by_status.entry(s).or_default() += 1,
                        None => g.errors += 1,
                    }
                    g.ms.push(t.elapsed().as_secs_f64() * 1000.0);
                }
            }));
        }
    }
    let mut health = Vec::new();
    let mut health_failed = 0;
    let mut peak_mib = rest_mib;
    let mut last_rss = Instant::now();
    while Instant::now() < until {
        let t = Instant::now();
        match http.get(format!("{url}/healthz")).timeout(Duration::from_secs(10)).send().await {
            Ok(r) if r.status().is_success() => health.push(t.elapsed().as_secs_f64() * 1000.0),
            _ => health_failed += 1,
        }
        if last_rss.elapsed() >= Duration::from_millis(250) {
            peak_mib = peak_mib.max(proc::rss_kib(pid) as f64 / 1024.0);
            last_rss = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for t in tasks {
        let _ = t.await;
    }
    peak_mib = peak_mib.max(proc::rss_kib(pid) as f64 / 1024.0);
    println!(
        "\n{readers} readers of each path for {seconds} s (build: {}):",
        std::env::var("GPUDASH_BENCH_BIN").unwrap_or_else(|_| "release".into())
    );
    println!("| path | answers (by status) | p50 | p99 | worst |");
    println!("|---|---|---|---|---|");
    for (path, tally) in paths.iter().zip(&tallies) {
        let mut g = tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let statuses: Vec<String> = g.by_status.iter().map(|(s, n)| format!("{n}× {s}")).collect();
        let errors = if g.errors > 0 { format!(", {} failed", g.errors) } else { String::new() };
        let shown = path.split('?').next().unwrap_or(path);
        let (p50, p99) = (pct(&mut g.ms, 0.5), pct(&mut g.ms, 0.99));
        let worst = g.ms.iter().copied().fold(0.0, f64::max);
        println!("| `{shown}` | {}{errors} | {p50:.0} ms | {p99:.0} ms | {worst:.0} ms |", statuses.join(", "));
    }
    let worst = health.iter().copied().fold(0.0, f64::max);
    let n = health.len();
    println!(
        "\n/healthz while they read: {n} answers, p50 {:.1} ms, p99 {:.1} ms, worst {worst:.1} ms, {health_failed} failed",
        pct(&mut health, 0.5),
        pct(&mut health, 0.99)
    );
    println!(
        "RSS: {rest_mib:.0} MiB at rest, {peak_mib:.0} MiB at its highest (the manifest's limit: {LIMIT_MIB:.0} MiB)"
    );
    drop(sim);
    Ok(())
}
