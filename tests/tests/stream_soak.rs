//! Staying power under load: 200 live-stream clients and steady API requests against `gpudash
//! serve` while the simulated cluster churns, for `GPUDASH_SOAK_SECONDS` (`./test.sh`: several
//! minutes). The server's memory stays flat, every client keeps up, and one client that never
//! reads cannot hold the others back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use gpudash_sim::{demo_scenario, start, Simulator, TimelineMode};
use gpudash_tests::{flat, rss_mib, soak_duration, spawn_churn, Gpudash};
use tokio::io::AsyncWriteExt;

const CLIENTS: usize = 200;

/// One stream client: reads the stream as a browser's EventSource would and notes the latest
/// revision (`id:` line) it received.
fn spawn_client(url: String, last: Arc<AtomicU64>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let http = reqwest::Client::new();
        loop {
            let Ok(resp) = http.get(&url).header("accept", "text/event-stream").send().await else {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            };
            let mut body = resp.bytes_stream();
            let mut carry = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                carry.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(i) = carry.find('\n') {
                    if let Some(id) = carry[..i].strip_prefix("id:").and_then(|v| v.trim().parse::<u64>().ok()) {
                        last.fetch_max(id, Ordering::Relaxed);
                    }
                    carry.drain(..=i);
                }
            }
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_stream_clients_keep_up_and_memory_stays_flat() {
    let running = start(Simulator::new(demo_scenario()), ([127, 0, 0, 1], 0).into(), TimelineMode::Auto).await.unwrap();
    let gd = Gpudash::watching(&running.url(), &["--metrics-interval", "2"]).await.unwrap();
    let pid = gd.proc.pid();
    let churn = spawn_churn(running.sim.clone(), 20);

    // The slow client: asks for the stream and never reads a byte.
    let addr = gd.url.trim_start_matches("http://").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();

    let lasts: Vec<Arc<AtomicU64>> = (0..CLIENTS).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let clients: Vec<_> = lasts.iter().map(|l| spawn_client(format!("{}/api/v1/stream", gd.url), l.clone())).collect();

    // Steady API and page requests alongside.
    let base = gd.url.clone();
    let api_count = Arc::new(AtomicU64::new(0));
    let api_n = api_count.clone();
    let api = tokio::spawn(async move {
        let http = reqwest::Client::new();
        loop {
            for path in ["/api/v1/cluster", "/", "/pending", "/metrics", "/nodes/orin-agx-01", "/healthz"] {
                if let Ok(r) = http.get(format!("{base}{path}")).send().await {
                    assert!(r.status().is_success(), "{path}: {}", r.status());
                    let _ = r.bytes().await;
                    api_n.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
    });

    let run = soak_duration();
    let warmup = Duration::from_secs(15).min(run / 4);
    let t0 = Instant::now();
    let mut rss = Vec::new();
    let mut worst_lag = Duration::ZERO;
    let mut checks = 0;
    let mut revs = (u64::MAX, 0u64);
    while t0.elapsed() < run {
        tokio::time::sleep(Duration::from_secs(5)).await;
        if t0.elapsed() > warmup {
            rss.push(rss_mib(pid));
        }
        // Every client must reach the server's current revision promptly.
        let rev = gd.json("/api/v1/cluster").await.map(|v| v["revision"].as_u64().unwrap_or(0)).unwrap_or(0);
        revs = (revs.0.min(rev), revs.1.max(rev));
        let t = Instant::now();
        loop {
            let behind: Vec<usize> =
                lasts.iter().enumerate().filter(|(_, l)| l.load(Ordering::Relaxed) < rev).map(|(i, _)| i).collect();
            if behind.is_empty() {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{} of {CLIENTS} clients had not received revision {rev} after 5 s (e.g. client {})",
                behind.len(),
                behind[0]
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        worst_lag = worst_lag.max(t.elapsed());
        checks += 1;
    }
    churn.abort();
    api.abort();
    for c in &clients {
        c.abort();
    }
    drop(slow);
    let series: Vec<String> = rss.iter().map(|r| format!("{r:.1}")).collect();
    println!(
        "{run:?} with {CLIENTS} stream clients + 1 that never reads, {} API/page requests, {checks} checks \
         (revisions {} to {}): slowest catch-up {worst_lag:?}; RSS MiB after warm-up: {}",
        api_count.load(Ordering::Relaxed),
        revs.0,
        revs.1,
        series.join(" ")
    );
    assert!(checks >= 2, "the soak made too few checks");
    assert!(revs.1 >= revs.0 + checks, "the view did not change under churn: revisions {revs:?}");
    assert!(api_count.load(Ordering::Relaxed) > 0, "no API request succeeded");
    assert!(flat(&rss, 0.15, 8.0), "server memory grew: {series:?}");
}
