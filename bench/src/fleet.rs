//! `gpudash-bench --fleet SITES`: the fleet service under churn. SITES site streams are served
//! in process, each speaking `/api/v1/stream` exactly as a site does (its whole ClusterView
//! first — derived by gpudash's own derivation from a generated 10-node cluster — then real
//! `ViewDelta`s between revisions, keep-alives every 15 s); the release `gpudash fleet` follows
//! them all and records into a throwaway PostgreSQL; a client reads the fleet page's stream.
//! Measured: site change → fleet page event p50/p95/p99 (a card shows the site's new revision),
//! the fleet service's RSS, and the database's growth (`pg_database_size`: tables and indexes,
//! not the write-ahead log, which is recycled) per site, scaled to a day.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use app::model::{ClusterView, ViewDelta};
use futures::StreamExt;
use tokio::sync::broadcast;

/// A site's view derived by gpudash from a generated cluster.
fn site_view(nodes: usize) -> ClusterView {
    let g = crate::cluster::generate(nodes, 30);
    let decode =
        |kind: &str| -> Vec<serde_json::Value> { g.objects.iter().filter(|o| o["kind"] == kind).cloned().collect() };
    let inputs = gpudash::derive::Inputs {
        nodes: decode("Node").into_iter().filter_map(|o| serde_json::from_value(o).ok()).map(Arc::new).collect(),
        pods: decode("Pod").into_iter().filter_map(|o| serde_json::from_value(o).ok()).map(Arc::new).collect(),
        events: decode("Event").into_iter().filter_map(|o| serde_json::from_value(o).ok()).map(Arc::new).collect(),
        ..gpudash::derive::Inputs::default()
    };
    let source = app::model::Source { synced: true, ..app::model::Source::default() };
    gpudash::derive::derive(&inputs, &gpudash::derive::Options::default(), source, 1, jiff::Timestamp::now())
}

struct SiteFeed {
    view: Mutex<ClusterView>,
    tx: broadcast::Sender<bytes::Bytes>,
}

fn frame(event: &str, json: &str) -> bytes::Bytes {
    bytes::Bytes::from(format!("event: {event}\ndata: {json}\n\n"))
}

async fn serve_site(feed: Arc<SiteFeed>) -> anyhow::Result<u16> {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = l.local_addr()?.port();
    let app = axum::Router::new().route(
        "/api/v1/stream",
        axum::routing::get(move || {
            let feed = feed.clone();
            async move {
                let rx = feed.tx.subscribe();
                let first = {
                    let v = feed.view.lock().unwrap_or_else(|e| e.into_inner());
                    frame("message", &serde_json::to_string(&*v).unwrap_or_default())
                };
                let rest = tokio_stream::wrappers::BroadcastStream::new(rx).filter_map(|r| async move { r.ok() });
                let body =
                    futures::stream::once(async move { first }).chain(rest).map(Ok::<_, std::convert::Infallible>);
                ([("content-type", "text/event-stream")], axum::body::Body::from_stream(body))
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    Ok(port)
}

/// Serves `count` sites, the first `big` of them with `big_base`'s view, the rest with `base`'s;
/// the feeds and the fleet's `sites.yaml` naming them.
async fn start_sites(
    count: usize,
    big: usize,
    base: &ClusterView,
    big_base: &ClusterView,
) -> anyhow::Result<(Vec<Arc<SiteFeed>>, String)> {
    let mut feeds = Vec::new();
    let mut yaml = String::from("sites:\n");
    for i in 0..count {
        let (tx, _) = broadcast::channel(256);
        let view = if i < big { big_base.clone() } else { base.clone() };
        let feed = Arc::new(SiteFeed { view: Mutex::new(view), tx });
        let port = serve_site(feed.clone()).await?;
        yaml.push_str(&format!("- {{name: site-{i:03}, url: 'http://127.0.0.1:{port}'}}\n"));
        feeds.push(feed);
    }
    Ok((feeds, yaml))
}

/// Waits until every site is live in the fleet; when each big site (`site-000` … below `big`)
/// first was.
async fn wait_all_live(url: &str, sites: usize, big: usize) -> anyhow::Result<HashMap<String, Duration>> {
    let t = Instant::now();
    let mut big_live: HashMap<String, Duration> = HashMap::new();
    loop {
        let fleet = match reqwest::get(format!("{url}/api/v1/fleet")).await {
            Ok(r) => r.json::<serde_json::Value>().await.ok(),
            Err(_) => None,
        };
        let live: Vec<String> = fleet
            .as_ref()
            .and_then(|v| v["sites"].as_array())
            .into_iter()
            .flatten()
            .filter(|x| x["state"] == "live")
            .map(|x| x["name"].as_str().unwrap_or_default().to_string())
            .collect();
        for name in &live {
            let i: usize = name.trim_start_matches("site-").parse().unwrap_or(usize::MAX);
            if i < big {
                big_live.entry(name.clone()).or_insert(t.elapsed());
            }
        }
        if live.len() == sites {
            return Ok(big_live);
        }
        if t.elapsed() > Duration::from_secs(120) {
            anyhow::bail!("only {} of {sites} sites live after 120 s", live.len());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What the fleet page's reader counts: when each (site, revision) was sent, each latency seen
/// (whether the site is big), and the card events' bytes and count.
#[derive(Clone, Default)]
struct PageSeen {
    sent: Arc<Mutex<HashMap<(usize, u64), Instant>>>,
    lat: Arc<Mutex<Vec<(bool, Duration)>>>,
    bytes: Arc<Mutex<(u64, u64)>>,
}

/// Reads the fleet page's stream: every card first, then each changed card; a card carries its
/// site's revision, which ends the wait of every change sent up to it.
fn read_page(url: String, big: usize, seen: PageSeen) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Ok(r) = reqwest::get(format!("{url}/api/v1/fleet/stream")).await else { return };
        let mut body = r.bytes_stream();
        let mut buf = String::new();
        while let Some(Ok(c)) = body.next().await {
            buf.push_str(&String::from_utf8_lossy(&c));
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                if block.starts_with("event: card") {
                    card_event(&block, big, &seen);
                }
            }
        }
    })
}

fn card_event(block: &str, big: usize, seen: &PageSeen) {
    {
        let mut b = seen.bytes.lock().unwrap_or_else(|e| e.into_inner());
        b.0 += block.len() as u64;
        b.1 += 1;
    }
    let now = Instant::now();
    let mut sent = seen.sent.lock().unwrap_or_else(|e| e.into_inner());
    for card in block.split("data-site=\"site-").skip(1) {
        let i: usize = card.get(..3).and_then(|n| n.parse().ok()).unwrap_or(usize::MAX);
        let rev =
            card.split("data-revision=\"").nth(1).and_then(|r| r.split('"').next()).and_then(|r| r.parse::<u64>().ok());
        let Some(rev) = rev else { continue };
        let done: Vec<(usize, u64)> = sent.keys().filter(|(s, r)| *s == i && *r <= rev).copied().collect();
        for k in done {
            if let Some(t0) = sent.remove(&k) {
                seen.lat.lock().unwrap_or_else(|e| e.into_inner()).push((i < big, now - t0));
            }
        }
    }
}

/// Churn for `seconds`: each site changes `per_site_per_sec` times a second (a pod's memory use
/// and the pending count move, as on a busy site), spread evenly. The changes sent and the
/// fleet's peak RSS (KiB) meanwhile.
async fn churn_sites(
    feeds: &[Arc<SiteFeed>],
    per_site_per_sec: f64,
    seconds: u64,
    seen: &PageSeen,
    pid: u32,
) -> (u64, u64) {
    let sites = feeds.len();
    let every = Duration::from_secs_f64(1.0 / (per_site_per_sec * sites as f64));
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut peak_rss = 0;
    while t0.elapsed() < Duration::from_secs(seconds) {
        let i = (n as usize) % sites;
        let feed = &feeds[i];
        let (frame_bytes, rev) = {
            let mut v = feed.view.lock().unwrap_or_else(|e| e.into_inner());
            let old = v.clone();
            v.revision += 1;
            v.totals.pending = (v.totals.pending + 1) % 7;
            let k = (n as usize / sites) % v.nodes.len().max(1);
            if let Some(node) = v.nodes.get_mut(k) {
                let mut nv = (**node).clone();
                nv.memory.used_bytes = Some(nv.memory.used_bytes.unwrap_or(1 << 30) + 4096);
                *node = Arc::new(nv);
            }
            let d = ViewDelta::between(&old, &v);
            (frame("delta", &serde_json::to_string(&d).unwrap_or_default()), v.revision)
        };
        seen.sent.lock().unwrap_or_else(|e| e.into_inner()).insert((i, rev), Instant::now());
        let _ = feed.tx.send(frame_bytes);
        n += 1;
        if n.is_multiple_of(500) {
            peak_rss = peak_rss.max(crate::rss_kib(pid));
        }
        tokio::time::sleep(every).await;
    }
    (n, peak_rss)
}

/// The latencies seen, sorted: all of them, or the big sites' (`Some(true)`) or the small ones'.
fn sorted(all: &[(bool, Duration)], want: Option<bool>) -> Vec<Duration> {
    let mut v: Vec<Duration> = all.iter().filter(|(b, _)| want.is_none_or(|w| w == *b)).map(|(_, d)| *d).collect();
    v.sort();
    v
}

/// The `p` quantile of sorted latencies in milliseconds (not a number when there are none).
fn at(l: &[Duration], p: f64) -> f64 {
    l.get(((l.len() as f64 * p) as usize).min(l.len().saturating_sub(1))).map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}

/// The release `gpudash fleet` on `sites_file`, listening on `listen`, recording into `database`.
fn spawn_fleet(sites_file: &std::path::Path, listen: u16, database: &str) -> anyhow::Result<tokio::process::Child> {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    tokio::process::Command::new(root.join("target/release/gpudash"))
        .args(["fleet", "--sites"])
        .arg(sites_file)
        .args(["--listen", &format!("127.0.0.1:{listen}"), "--database-url", database])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting gpudash fleet (./bench.sh builds it)")
}

/// Runs the measurement and prints one table row: `big` sites of `big_nodes` nodes first, then
/// `sites` of `nodes`.
pub async fn run(
    sites: usize,
    nodes: usize,
    big: usize,
    big_nodes: usize,
    per_site_per_sec: f64,
    seconds: u64,
) -> anyhow::Result<()> {
    let pg = gpudash_tests::postgres::Postgres::start()?;
    let base = site_view(nodes);
    let view_bytes = serde_json::to_string(&base)?.len();
    let big_base = if big > 0 { site_view(big_nodes) } else { base.clone() };
    let big_bytes = serde_json::to_string(&big_base)?.len();
    let sites = sites + big;
    let (feeds, yaml) = start_sites(sites, big, &base, &big_base).await?;
    let dir = tempfile::tempdir()?;
    let sites_file = dir.path().join("sites.yaml");
    std::fs::write(&sites_file, yaml)?;
    let listen = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut fleet = spawn_fleet(&sites_file, listen, &pg.url)?;
    let pid = fleet.id().unwrap_or(0);
    let url = format!("http://127.0.0.1:{listen}");
    let big_live = wait_all_live(&url, sites, big).await?;
    // The first samples of every series are written on the recorder's first tick: measure the
    // database's growth from after it, the steady state.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let idle_rss = crate::rss_kib(pid);
    let db = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&pg.url).await?;
    let db_size = || async {
        sqlx::query_as::<_, (i64,)>("SELECT pg_database_size(current_database())")
            .fetch_one(&db)
            .await
            .map_or(0, |r| r.0)
    };
    let db0 = db_size().await;
    let seen = PageSeen::default();
    let reader = read_page(url.clone(), big, seen.clone());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let t0 = Instant::now();
    let (n, churn_peak) = churn_sites(&feeds, per_site_per_sec, seconds, &seen, pid).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let peak_rss = idle_rss.max(churn_peak).max(crate::rss_kib(pid));
    // Let the recorder write its ticks, then measure the database.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let db1 = db_size().await;
    reader.abort();
    let _ = fleet.kill().await;
    let all = seen.lat.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let l = sorted(&all, None);
    if big > 0 {
        let (b, s) = (sorted(&all, Some(true)), sorted(&all, Some(false)));
        let first = big_live.values().max().copied().unwrap_or_default();
        println!(
            "big sites: {big} × {big_nodes} nodes (view {:.1} MB), every one live {:.2} s after the fleet started; \
             change→fleet page p99 big {:.0} ms ({} seen), small {:.0} ms ({} seen)",
            big_bytes as f64 / 1e6,
            first.as_secs_f64(),
            at(&b, 0.99),
            b.len(),
            at(&s, 0.99),
            s.len()
        );
    }
    let (bytes, events) = *seen.bytes.lock().unwrap_or_else(|e| e.into_inner());
    println!(
        "fleet page stream: {events} card events, {:.0} bytes each on average",
        bytes as f64 / events.max(1) as f64
    );
    let wall = t0.elapsed().as_secs_f64();
    let grown = u64::try_from(db1.saturating_sub(db0)).unwrap_or(0);
    let per_site_day = grown as f64 / sites as f64 * (86_400.0 / wall) / (1024.0 * 1024.0);
    println!("| fleet: {sites} sites × {nodes} nodes (view {:.0} KB), {:.1} changes/s/site | {} changes, {} seen | change→fleet page p50 / p95 / p99 \
        **{:.0} / {:.0} / {:.0} ms** | fleet RSS idle {:.1} MiB, churn peak **{:.1} MiB** | PostgreSQL +{:.1} MiB in {wall:.0} s = **{per_site_day:.1} \
        MiB per site per day** at this churn |",
        view_bytes as f64 / 1000.0, per_site_per_sec, n, l.len(), at(&l, 0.5), at(&l, 0.95), at(&l, 0.99),
        idle_rss as f64 / 1024.0, peak_rss as f64 / 1024.0, grown as f64 / (1024.0 * 1024.0));
    Ok(())
}
