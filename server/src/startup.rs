//! Start-up: configuration checks, the kube client (real cluster or in-process simulator), the
//! database, the watchers, the HTTP server, and graceful shutdown. Every failure that stops
//! start-up is one line saying what is wrong and what to do.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use app::model::{ClusterView, Source, SourceMode};
use kube::config::{KubeConfigOptions, Kubeconfig};
use leptos::config::LeptosOptions;
use tokio::sync::watch;

use crate::cli::{self, ServeArgs, SimArgs};
use crate::derive::Options;
use crate::http::{self, AppState};
use crate::publish::{self, Snapshot};
use gpudash_web::cli::{init_logging, shutdown_signal};

/// How long gpudash may have been stopped for a diagnosis open before and after to keep its
/// first time (longer, whether it held in between is not known: it starts again).
const CARRY_SINCE_WITHIN: i64 = 600;

/// Finds the directory holding `pkg/` (the browser bundle).
fn site_root(arg: Option<PathBuf>) -> PathBuf {
    if let Some(p) = arg {
        return p;
    }
    let mut candidates = vec![PathBuf::from("target/site")];
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            candidates.push(dir.join("site"));
            candidates.push(dir.join("../site"));
            candidates.push(dir.join("../../site"));
        }
    }
    candidates.into_iter().find(|c| c.join("pkg").is_dir()).unwrap_or_else(|| PathBuf::from("target/site"))
}

/// Loads the kube client config the way kubectl does; `None` when there is no cluster config.
async fn kube_config(args: &ServeArgs) -> anyhow::Result<Option<kube::Config>> {
    let opts = KubeConfigOptions { context: args.context.clone(), ..KubeConfigOptions::default() };
    if let Some(path) = &args.kubeconfig {
        let kc = Kubeconfig::read_from(path).map_err(|e| {
            anyhow!("cannot read kubeconfig {}: {e} — check the file or pass another with --kubeconfig", path.display())
        })?;
        let cfg = kube::Config::from_custom_kubeconfig(kc, &opts).await.map_err(|e| {
            anyhow!("bad kubeconfig {}: {e} — check its clusters, users and contexts (--context)", path.display())
        })?;
        return Ok(Some(cfg));
    }
    let has_file = std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty())
        || std::env::var_os("HOME").is_some_and(|h| PathBuf::from(h).join(".kube/config").exists());
    let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
    if !has_file && !in_cluster {
        return Ok(None);
    }
    if has_file {
        let cfg = kube::Config::from_kubeconfig(&opts)
            .await
            .map_err(|e| anyhow!("bad kubeconfig ($KUBECONFIG or ~/.kube/config): {e} — fix it, choose one with --kubeconfig, or run with --demo"))?;
        return Ok(Some(cfg));
    }
    kube::Config::incluster()
        .map(Some)
        .map_err(|e| anyhow!("in-cluster config failed: {e} — is the ServiceAccount token mounted?"))
}

/// `gpudash fleet`.
pub async fn fleet(args: gpudash_fleet::FleetArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    gpudash_fleet::run(args).await
}

/// `gpudash serve`: builds the application, then runs it until SIGTERM or Ctrl-C.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    build(&args).await?.run(shutdown_signal()).await
}

/// Everything `serve` runs, built in one place: the listener and router, the background tasks
/// (derivation, history recorder, retention) in one set, and what shutdown must close.
pub struct App {
    listener: tokio::net::TcpListener,
    router: axum::Router,
    tasks: tokio::task::JoinSet<()>,
    stop: watch::Sender<bool>,
    pool: Option<sqlx::SqlitePool>,
    /// Kept alive while serving (demo mode's in-process simulator).
    sim: Option<gpudash_sim::RunningSim>,
    /// Demo mode's node agents.
    agents: Option<crate::demo_agents::DemoAgents>,
    /// The address actually bound.
    pub addr: std::net::SocketAddr,
    /// Header-read timeout and connection cap.
    limits: crate::http::serve::Limits,
}

/// Checks the configuration and builds the application (nothing is served yet).
pub async fn build(args: &ServeArgs) -> anyhow::Result<App> {
    // Checked first: a --timezone the database does not have stops gpudash before it opens
    // anything.
    let zone: Arc<str> = crate::http::zone::at_start(args.timezone.as_deref())?.into();
    // Leptos renders on the tokio executor; this only fails if already initialised.
    let _ = any_spawner::Executor::init_tokio();
    let base = cli::base_path(&args.base_path)?;
    let ancestors = cli::frame_ancestors(&args.frame_ancestors)?;
    let unified_selector = match &args.unified_memory_selector {
        Some(s) => Options::parse_selector(s).map_err(|e| anyhow!("--unified-memory-selector: {e}"))?,
        None => Vec::new(),
    };
    let access = args.auth.access(&base)?;
    let cfg = if args.demo { None } else { kube_config(args).await? };
    let demo = cfg.is_none();
    if demo && !args.demo && !args.demo_if_no_cluster {
        return Err(anyhow!("no kubeconfig ($KUBECONFIG, ~/.kube/config) and not running in a cluster — pass --kubeconfig, or run with --demo to watch \
            the built-in simulated cluster"));
    }
    let Watched { cfg, mode, sim, agents: demo_agents } = source(args, cfg).await?;
    let listener = crate::http::serve::bind(args.listen).map_err(|e| {
        anyhow!("cannot listen on {}: {e} — choose another address with --listen (or GPUDASH_LISTEN)", args.listen)
    })?;
    let addr = listener.local_addr().context("listener address")?;
    let server_url = cfg.cluster_url.to_string();
    let state =
        crate::watchers::WatchState::new(mode, server_url.clone(), Duration::from_secs(args.watch_stall.max(3)));
    let client = crate::watchers::client(cfg, &state).map_err(|e| {
        anyhow!("cannot build the Kubernetes client: {e} — check the kubeconfig's server and TLS settings")
    })?;
    let agents = crate::watchers::AgentSettings {
        namespace: args.agent_namespace.clone().unwrap_or_else(own_namespace),
        interval: Duration::from_secs_f64(args.agent_interval.clamp(0.2, 3600.0)),
    };
    let agent_stale_after = (agents.interval * 3).max(Duration::from_secs(3));
    let stores = crate::watchers::start(client, state, Duration::from_secs(args.metrics_interval.max(1)), agents);
    // Opened while the watchers list (a new database's tables take ~10 ms to make): the first
    // view waits for the lists, not for history.
    let (hcfg, health, pool) = open_history(args, demo).await?;
    let initial =
        ClusterView { source: Source { mode, server: server_url, ..Source::default() }, ..ClusterView::default() };
    let (tx, rx) = watch::channel(Arc::new(Snapshot::new(initial)));
    let held_not_running_after =
        Duration::from_secs_f64((args.held_not_running_minutes * 60.0).clamp(1.0, 7.0 * 86400.0));
    let held_idle_after = Duration::from_secs_f64((args.held_idle_minutes * 60.0).clamp(1.0, 30.0 * 86400.0));
    let opts = Options { unified_selector, agent_stale_after, held_not_running_after, held_idle_after };
    let (stop, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    let cache = carried_since(pool.as_ref()).await;
    let readers = crate::publish::Readers::default();
    tasks.spawn(publish::run(stores.clone(), opts.clone(), tx, stop_rx.clone(), cache, readers.clone()));
    if let Some(p) = pool.clone() {
        tasks.spawn(crate::history::recorder::run(p.clone(), hcfg, rx.clone(), health.clone(), stop_rx.clone()));
        tasks.spawn(crate::history::retention::run(p, hcfg, health.clone(), stop_rx.clone()));
    }
    let leptos = LeptosOptions::builder()
        .output_name("gpudash")
        .site_root(site_root(args.site_root.clone()).to_string_lossy().to_string())
        .site_pkg_dir("pkg")
        .build();
    let st = AppState {
        snapshots: rx,
        watch: stores.state.clone(),
        base: base.clone(),
        leptos,
        rotate: args.kiosk_rotate,
        lang: args.lang,
        zone: zone.clone(),
        shutdown: stop_rx,
        stream_clients: Arc::default(),
        readers,
        access: Arc::new(access),
        history: crate::history::http::History { pool: pool.clone(), health, cfg: hcfg, zone },
        fit: Some(crate::http::FitSource { inputs: Arc::new(move || stores.inputs()), opts }),
        csp_base: crate::http::csp_base(&ancestors).into(),
    };
    let router = http::router(st, &ancestors);
    tracing::info!("dashboard at http://{addr}{base}/");
    let limits = crate::http::serve::Limits {
        header_read: Duration::from_secs_f64(args.header_read_timeout.clamp(0.1, 3600.0)),
        max_connections: args.max_connections.max(16),
    };
    Ok(App { listener, router, tasks, stop, pool, sim, agents: demo_agents, addr, limits })
}

/// What gpudash watches: a cluster, or the in-process simulator with its demo agents.
struct Watched {
    cfg: kube::Config,
    mode: SourceMode,
    sim: Option<gpudash_sim::RunningSim>,
    agents: Option<crate::demo_agents::DemoAgents>,
}

/// The cluster of `cfg`, or (none) the in-process simulator.
async fn source(args: &ServeArgs, cfg: Option<kube::Config>) -> anyhow::Result<Watched> {
    let mut demo_agents = None;
    match cfg {
        Some(c) => {
            tracing::info!(server = %c.cluster_url, "gpudash {}: cluster mode, watching {}", env!("CARGO_PKG_VERSION"), c.cluster_url);
            Ok(Watched { cfg: c, mode: SourceMode::Cluster, sim: None, agents: None })
        }
        None => {
            let scenario = if args.scenarios.is_empty() {
                gpudash_sim::demo_scenario()
            } else {
                gpudash_sim::Scenario::from_files(&args.scenarios).map_err(|e| anyhow!("scenario: {e}"))?
            };
            let simulator = gpudash_sim::Simulator::new(scenario);
            simulator.set_timeline_speed(args.demo_speed);
            let running = gpudash_sim::start(simulator, ([127, 0, 0, 1], 0).into(), gpudash_sim::TimelineMode::Auto)
                .await
                .context("starting the in-process simulator")?;
            let why = if args.demo { "--demo" } else { "no kubeconfig found" };
            tracing::info!(simulator = %running.url(), "gpudash {}: demo mode ({why}), watching a SIMULATED K3s cluster at \
                {}", env!("CARGO_PKG_VERSION"), running.url());
            let url = running.url().parse().context("simulator URL")?;
            if args.demo_agents {
                match crate::demo_agents::start(&running.sim, &running.url(), args.scenarios.is_empty()) {
                    Ok(a) => demo_agents = Some(a),
                    Err(e) => tracing::info!("demo runs without node agents: {e:#}"),
                }
            }
            Ok(Watched { cfg: kube::Config::new(url), mode: SourceMode::Demo, sim: Some(running), agents: demo_agents })
        }
    }
}

/// History's settings, health and database: a path that cannot be created or opened is a
/// configuration error; a file that is corrupt or from a newer gpudash is left untouched and the
/// live view runs without history.
async fn open_history(
    args: &ServeArgs,
    demo: bool,
) -> anyhow::Result<(crate::history::Config, Arc<crate::history::Health>, Option<sqlx::SqlitePool>)> {
    let db_path =
        args.db.clone().unwrap_or_else(|| crate::db::default_path(if demo { "demo.db" } else { "history.db" }));
    let hcfg = crate::history::Config {
        resolution: Duration::from_secs_f64(args.history_resolution.clamp(0.05, 3600.0)),
        full_window: Duration::from_secs(args.history_full_days.max(1) * 86_400),
        keep: Duration::from_secs(args.history_keep_days.max(args.history_full_days).max(1) * 86_400),
        max_bytes: args.history_max_mb.max(1) << 20,
        ..crate::history::Config::default()
    };
    let health = Arc::new(crate::history::Health::default());
    let pool = match crate::db::open(&db_path).await {
        Ok(p) => Some(p),
        Err(e @ (crate::db::DbError::Migrate(..) | crate::db::DbError::Corrupt(..))) => {
            let msg = crate::error::logged(
                "history disabled: the database file is damaged or from a newer gpudash — it was left untouched; \
                 move it aside or pass another --db",
                &e,
            );
            health.set(crate::history::Writer::Open, Some(msg));
            None
        }
        Err(e) => return Err(anyhow!("database: {e} — choose a writable path with --db")),
    };
    Ok((hcfg, health, pool))
}

/// The derivation's cache, handed the diagnoses that held when gpudash last stopped: those
/// that still hold keep their first time (read before the recorder closes them at its start).
async fn carried_since(pool: Option<&sqlx::SqlitePool>) -> crate::derive::Cache {
    let carried = match pool {
        Some(p) => crate::history::query::open_diagnoses(p, jiff::Timestamp::now().as_second(), CARRY_SINCE_WITHIN)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot read the open diagnoses from history; their times start now");
                Vec::new()
            }),
        None => Vec::new(),
    };
    let carried = carried.into_iter().filter_map(|(code, kind, ns, name, raised)| {
        let at = jiff::Timestamp::from_second(raised).ok()?;
        Some(((code, kind, ns, name), crate::derive::ts(&at)))
    });
    let mut cache = crate::derive::Cache::default();
    cache.carry_since(carried);
    cache
}

impl App {
    /// Serves until `signal` completes, then shuts down in order: stop accepting connections,
    /// end the live streams (so in-flight requests can finish), let the recorder write its last
    /// batch and the other tasks end (10 s at most), close the database.
    pub async fn run(self, signal: impl std::future::Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let Self { listener, router, mut tasks, stop, pool, sim, agents, limits, .. } = self;
        let stop_streams = stop.clone();
        let server = crate::http::serve::serve(listener, router, limits, async move {
            signal.await;
            tracing::info!("shutting down: no new connections, ending live streams");
            let _ = stop_streams.send(true);
        });
        let result = server.await.context("HTTP server");
        let _ = stop.send(true);
        let drained = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(r) = tasks.join_next().await {
                if let Err(e) = r {
                    tracing::warn!(error = %e, "a background task failed");
                }
            }
        })
        .await;
        if drained.is_err() {
            tracing::warn!("background tasks did not end within 10 s; stopping them");
            tasks.abort_all();
        }
        if let Some(p) = &pool {
            p.close().await;
        }
        drop(agents);
        drop(sim);
        tracing::info!("stopped");
        result
    }
}

/// The namespace gpudash runs in (its service account's), else `gpudash`.
fn own_namespace() -> String {
    std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "gpudash".into())
}

/// `gpudash sim`.
pub async fn sim(args: SimArgs) -> anyhow::Result<()> {
    init_logging(cli::LogFormat::Text);
    let scenario = if args.scenarios.is_empty() {
        gpudash_sim::demo_scenario()
    } else {
        gpudash_sim::Scenario::from_files(&args.scenarios).map_err(|e| anyhow!("{e}"))?
    };
    let mode = if args.manual_timeline { gpudash_sim::TimelineMode::Manual } else { gpudash_sim::TimelineMode::Auto };
    let simulator = gpudash_sim::Simulator::new(scenario);
    simulator.set_kubernetes_minor(args.kubernetes_version);
    simulator.set_timeline_speed(args.timeline_speed);
    let running = gpudash_sim::start(simulator, args.listen, mode)
        .await
        .map_err(|e| anyhow!("cannot listen on {}: {e} — choose another address with --listen", args.listen))?;
    if let Some(path) = &args.kubeconfig_out {
        std::fs::write(path, running.kubeconfig())
            .map_err(|e| anyhow!("cannot write kubeconfig {}: {e}", path.display()))?;
        tracing::info!(kubeconfig = %path.display(), "kubeconfig written");
    }
    tracing::info!(
        "simulated K3s API at {} (read-only; writes get 405 and are logged at /_sim/requests)",
        running.url()
    );
    shutdown_signal().await;
    running.stop();
    Ok(())
}
