//! `gpudash fleet`: one screen over many sites. It follows each site's `/api/v1/stream` (its
//! bearer token, TLS verified, reconnecting with backoff), keeps each site's last view, serves a
//! card per site sorted by trouble (`page.rs`, `view.rs`), `GET /api/v1/fleet` and `/metrics`,
//! and records every site's series in PostgreSQL (`store.rs`). It never talks to a cluster:
//! sites behind NAT and firewalls expose only their gpudash.

pub mod http;
pub mod page;
pub mod sites;
pub mod store;
pub mod subscribe;
pub mod view;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Context as _};

use view::{FleetView, Known, Limits, SiteState};

/// `gpudash fleet`.
#[derive(Debug, Clone, clap::Parser)]
pub struct FleetArgs {
    /// The sites file (YAML: `sites: [{name, url, token_file?, ca_file?}]`).
    #[arg(long, env = "GPUDASH_FLEET_SITES")]
    pub sites: PathBuf,
    /// Address to serve the fleet page on.
    #[arg(long, env = "GPUDASH_FLEET_LISTEN", default_value = "127.0.0.1:8090")]
    pub listen: std::net::SocketAddr,
    /// PostgreSQL for the fleet's history (`postgres://user:password@host:5432/db`).
    #[arg(long, env = "GPUDASH_FLEET_DATABASE_URL")]
    pub database_url: String,
    /// Serve under this path prefix.
    #[arg(long, env = "GPUDASH_BASE_PATH", default_value = "")]
    pub base_path: String,
    /// Seconds a connected site may be silent before it is shown stale (a site sends a
    /// keep-alive every 15 s, so keep this above 15; a dropped connection is stale at once).
    #[arg(long, env = "GPUDASH_FLEET_STALE_AFTER", default_value_t = 30.0)]
    pub stale_after: f64,
    /// Seconds after its connection was lost (or it fell silent) before a site is shown
    /// unreachable.
    #[arg(long, env = "GPUDASH_FLEET_UNREACHABLE_AFTER", default_value_t = 120.0)]
    pub unreachable_after: f64,
    /// Seconds between history samples.
    #[arg(long, env = "GPUDASH_HISTORY_RESOLUTION", default_value_t = 10.0)]
    pub history_resolution: f64,
    /// Directory holding pkg/ (the stylesheet).
    #[arg(long, env = "GPUDASH_SITE_ROOT")]
    pub site_root: Option<PathBuf>,
    /// Seconds a connection has to send its request headers before it is closed.
    #[arg(long, env = "GPUDASH_HEADER_READ_TIMEOUT", default_value_t = 10.0)]
    pub header_read_timeout: f64,
    /// Connections open at once (lowered to fit the open-files limit); more are closed at once.
    #[arg(long, env = "GPUDASH_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,
    /// Sign-in, as on a site.
    #[command(flatten)]
    pub auth: gpudash_web::cli::AuthArgs,
    /// Log format.
    #[arg(long, env = "GPUDASH_LOG_FORMAT", value_enum, default_value_t = gpudash_web::cli::LogFormat::Text)]
    pub log_format: gpudash_web::cli::LogFormat,
}

/// The HTTP client the fleet follows `site` with: connect timeout, keep-alive, the site's CA,
/// and no redirects.
pub fn client(site: &sites::Site) -> anyhow::Result<reqwest::Client> {
    // No redirects: a site's answer must not send the fleet elsewhere in its own network.
    let mut b = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .tcp_keepalive(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none());
    if let Some(ca) = &site.ca_file {
        let pem = std::fs::read(ca).with_context(|| format!("site {}: ca_file {}", site.name, ca.display()))?;
        b = b.add_root_certificate(reqwest::Certificate::from_pem(&pem)?);
    }
    b.build().with_context(|| format!("site {}: HTTP client", site.name))
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.2, 86_400.0))
}

/// One follower per site, in a JoinSet watched by a supervisor: a follower that ends (it only
/// could by panicking) is logged, said on its card and started again.
fn follow_sites(
    sites: &[sites::Site],
    shared: &subscribe::Shared,
    changed: &Arc<tokio::sync::Notify>,
) -> anyhow::Result<()> {
    let mut followers = tokio::task::JoinSet::new();
    let mut by_task = std::collections::HashMap::new();
    for (i, s) in sites.iter().enumerate() {
        let c = client(s)?;
        let h = followers.spawn(subscribe::run(s.clone(), i, c.clone(), shared.clone(), changed.clone()));
        by_task.insert(h.id(), (i, s.clone(), c));
    }
    let (sh, ch) = (shared.clone(), changed.clone());
    tokio::spawn(async move {
        while let Some(ended) = followers.join_next_with_id().await {
            let (id, why) = match ended {
                Ok((id, ())) => (id, "ended".to_string()),
                Err(e) => (e.id(), if e.is_panic() { "panicked".to_string() } else { e.to_string() }),
            };
            let Some((i, site, c)) = by_task.remove(&id) else { continue };
            tracing::error!(site = %site.name, "the site's follower {why}; starting it again");
            if let Some(entry) = sh.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
                entry.2.connected = false;
                entry.2.error = Some(format!("the fleet's follower for this site {why} (restarted)"));
            }
            ch.notify_one();
            tokio::time::sleep(Duration::from_secs(1)).await;
            let h = followers.spawn(subscribe::run(site.clone(), i, c.clone(), sh.clone(), ch.clone()));
            by_task.insert(h.id(), (i, site, c));
        }
    });
    Ok(())
}

/// The recorder's loop: every site's series each `resolution`, retention every ten minutes,
/// and a last tick when `stopping` is set.
async fn record(
    mut recorder: store::Recorder,
    resolution: Duration,
    sh: subscribe::Shared,
    rx2: tokio::sync::watch::Receiver<Arc<FleetView>>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let snapshot = |shared: &subscribe::Shared| shared.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut tick = tokio::time::interval(resolution);
    let mut last_retain = 0i64;
    loop {
        let last = tokio::select! {
            _ = tick.tick() => false,
            _ = stopping.wait_for(|s| *s) => true,
        };
        let now = jiff::Timestamp::now().as_second();
        let fv = rx2.borrow().clone();
        let known = snapshot(&sh);
        let rows: Vec<(String, Option<Arc<app::model::ClusterView>>, bool)> = known
            .into_iter()
            .map(|(name, _, k)| {
                let live = fv.sites.iter().any(|s| s.name == name && s.state == SiteState::Live);
                (name, k.view, live)
            })
            .collect();
        if let Err(e) = recorder.record(&rows, now).await {
            tracing::error!(error = %e, "fleet history: a tick was not written (the next one retries)");
        }
        if last {
            tracing::info!("fleet history: last tick written, stopping");
            return;
        }
        if now - last_retain >= 600 {
            if let Err(e) = recorder.retain(now).await {
                tracing::error!(error = %e, "fleet history retention failed");
            }
            last_retain = now;
        }
    }
}

/// Runs the fleet service until SIGTERM or Ctrl-C.
pub async fn run(args: FleetArgs) -> anyhow::Result<()> {
    let sites = sites::load(&args.sites).map_err(|e| anyhow!("{e}"))?;
    let base = gpudash_web::cli::base_path(&args.base_path)?;
    let access = Arc::new(args.auth.access(&base)?);
    let pool = store::open(&args.database_url)
        .await
        .map_err(|e| anyhow!("fleet database: {e} — check --database-url (postgres://user:password@host:port/db)"))?;
    let limits = Limits { stale_after: secs(args.stale_after), unreachable_after: secs(args.unreachable_after) };
    let shared: subscribe::Shared =
        Arc::new(Mutex::new(sites.iter().map(|s| (s.name.clone(), s.url.clone(), Known::default())).collect()));
    let changed = Arc::new(tokio::sync::Notify::new());
    follow_sites(&sites, &shared, &changed)?;
    let snapshot = |shared: &subscribe::Shared| shared.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let first = view::fleet(&snapshot(&shared), jiff::Timestamp::now(), limits);
    let (tx, rx) = tokio::sync::watch::channel(Arc::new(first));
    // The view: on every site change, and each second (a silent site turns stale by the clock).
    let (sh, ch) = (shared.clone(), changed.clone());
    tokio::spawn(async move {
        loop {
            let _ = tokio::time::timeout(Duration::from_secs(1), ch.notified()).await;
            let next = view::fleet(&snapshot(&sh), jiff::Timestamp::now(), limits);
            let same = |a: &FleetView, b: &FleetView| a.sites == b.sites;
            if !same(&tx.borrow(), &next) {
                let _ = tx.send(Arc::new(next));
            }
        }
    });
    let hcfg =
        // The fleet's samples have no stops: a site's line is bounded by its heartbeat (5 minutes).
        gpudash_web::series::Config {
            resolution: secs(args.history_resolution),
            heartbeat: std::time::Duration::from_secs(300),
            ..gpudash_web::series::Config::default()
        };
    let recorder = store::Recorder::open(pool.clone(), hcfg, jiff::Timestamp::now().as_second())
        .await
        .map_err(|e| anyhow!("fleet database: {e}"))?;
    // Set on SIGTERM or Ctrl-C: the recorder writes a last tick (so that the next start's gap
    // begins where this run really stopped) and ends; the service waits for it.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let recording = tokio::spawn(record(recorder, hcfg.resolution, shared.clone(), rx.clone(), stopping));
    let max_step = i64::try_from(hcfg.heartbeat.as_secs() + 2 * hcfg.resolution.as_secs().max(1)).unwrap_or(320);
    let zone = gpudash_web::zone::at_start(None)?.into();
    let st = http::FleetState { view: rx, pool, base: base.clone(), max_step, zone };
    let root = args.site_root.clone().unwrap_or_else(|| PathBuf::from("target/site"));
    let app = http::router(st, &root, access);
    let listener = gpudash_web::serve::bind(args.listen)
        .map_err(|e| anyhow!("cannot listen on {}: {e} — choose another address with --listen", args.listen))?;
    tracing::info!("gpudash fleet: {} sites, page at http://{}{base}/", sites.len(), listener.local_addr()?);
    // gpudash serve's own accept loop: a header-read timeout and a connection cap, so that
    // slow or silent connections cannot hold the portal's page; SIGTERM or Ctrl-C ends it.
    let limits = gpudash_web::serve::Limits {
        header_read: Duration::from_secs_f64(args.header_read_timeout.clamp(0.1, 3600.0)),
        max_connections: args.max_connections.max(16),
    };
    let stopped = async move {
        gpudash_web::cli::shutdown_signal().await;
        let _ = stop.send(true);
    };
    let served = gpudash_web::serve::serve(listener, app, limits, stopped).await.context("HTTP server");
    if tokio::time::timeout(Duration::from_secs(10), recording).await.is_err() {
        tracing::warn!("fleet history: the last tick was not written within 10 s");
    }
    served
}
