//! The command line. Every flag is also an environment variable (`GPUDASH_…`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use gpudash_web::cli::{base_path, frame_ancestors, AuthArgs, ConfigError, LogFormat};

/// gpudash: what Kubernetes hides about your edge GPUs.
#[derive(Debug, Parser)]
#[command(name = "gpudash", version, about, long_about = None)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Watch a cluster (or the built-in simulator with --demo) and serve the dashboard.
    Serve(Box<ServeArgs>),
    /// Run only the simulated K3s API and write a kubeconfig for it.
    Sim(SimArgs),
    /// One screen over many sites: follow each site's gpudash and keep their history in
    /// PostgreSQL.
    Fleet(Box<gpudash_fleet::FleetArgs>),
    /// A read-only MCP server on stdin and stdout for an assistant: reads a gpudash site.
    Mcp(crate::mcp::McpArgs),
    /// Print a simulated Jetson's tegrastats lines (recorded from a real board), as
    /// `tegrastats --interval N` does: what demo mode's agents read.
    #[command(hide = true)]
    SimTegrastats(SimTegrastatsArgs),
}

/// `gpudash sim-tegrastats`.
#[derive(Debug, Parser, Clone)]
pub struct SimTegrastatsArgs {
    /// The recorded board (agx-orin-64gb, orin-nano-8gb, agx-xavier, tx1).
    #[arg(long)]
    pub board: String,
    /// Milliseconds between lines.
    #[arg(long, default_value_t = 1000)]
    pub interval: u64,
    /// Lines to print before ending (default: a day's worth).
    #[arg(long, default_value_t = 86_400)]
    pub count: u64,
    /// The GPU busy and idle in turns (the recordings are of idle boards).
    #[arg(long)]
    pub work: bool,
}

/// `gpudash serve`.
#[derive(Debug, Parser, Clone)]
pub struct ServeArgs {
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster config).
    #[arg(long, env = "GPUDASH_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current context).
    #[arg(long, env = "GPUDASH_CONTEXT")]
    pub context: Option<String>,
    /// Address to serve the dashboard on.
    #[arg(long, env = "GPUDASH_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// SQLite history database (default: gpudash/history.db in the user's data directory;
    /// demo.db in demo mode).
    #[arg(long, env = "GPUDASH_DB")]
    pub db: Option<PathBuf>,
    /// Serve under this path prefix (e.g. /gpu behind a portal's reverse proxy).
    #[arg(long, env = "GPUDASH_BASE_PATH", default_value = "")]
    pub base_path: String,
    /// Watch the built-in simulated K3s cluster instead of a real one.
    #[arg(long, env = "GPUDASH_DEMO")]
    pub demo: bool,
    /// Use demo mode when no kubeconfig or in-cluster config is found.
    #[arg(long, env = "GPUDASH_DEMO_IF_NO_CLUSTER")]
    pub demo_if_no_cluster: bool,
    /// In demo mode, start a gpudash-agent per GPU node against the simulator's kubelet sockets
    /// (when the agent binary is beside gpudash).
    #[arg(long, env = "GPUDASH_DEMO_AGENTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub demo_agents: bool,
    /// Play the demo's timeline this many times faster than written (a soak: 150 plays a factory
    /// day in under ten minutes).
    #[arg(long, env = "GPUDASH_DEMO_SPEED", default_value_t = 1.0)]
    pub demo_speed: f64,
    /// Scenario files for --demo (default: the built-in edge scenario).
    #[arg(value_name = "SCENARIO.yaml")]
    pub scenarios: Vec<PathBuf>,
    /// Directory holding pkg/ (the browser bundle and CSS).
    #[arg(long, env = "GPUDASH_SITE_ROOT")]
    pub site_root: Option<PathBuf>,
    /// Treat nodes matching this label selector as unified-memory boards (key=value,key2).
    #[arg(long, env = "GPUDASH_UNIFIED_MEMORY_SELECTOR")]
    pub unified_memory_selector: Option<String>,
    /// Language when neither `?lang=` nor the browser's `Accept-Language` names one: `en` or
    /// `ja` (pins a kiosk whose browser cannot be configured).
    #[arg(long, env = "GPUDASH_LANG", default_value = "en", value_parser = parse_lang)]
    pub lang: app::i18n::Lang,
    /// Time zone for times on pages and charts when the reader's browser has not said its own
    /// (IANA name, e.g. Asia/Tokyo); default: `TZ`, else UTC. Every time is shown with its zone.
    #[arg(long, env = "GPUDASH_TIMEZONE")]
    pub timezone: Option<String>,
    /// Kiosk rotation between overview and pending, in seconds (0: off).
    #[arg(long, env = "GPUDASH_KIOSK_ROTATE", default_value_t = 20)]
    pub kiosk_rotate: u32,
    /// How often to poll metrics.k8s.io, in seconds.
    #[arg(long, env = "GPUDASH_METRICS_INTERVAL", default_value_t = 15)]
    pub metrics_interval: u64,
    /// How often to pull each node's gpudash-agent (`/v1/report`), in seconds. An agent not
    /// heard from for three times this (at least 3 s) is shown stale.
    #[arg(long, env = "GPUDASH_AGENT_INTERVAL", default_value_t = 5.0)]
    pub agent_interval: f64,
    /// Minutes a pod may hold GPU units without running (image pull back-off, crash loop,
    /// containers never started) before gpu-held-not-running says so (at least 1 s).
    #[arg(long, env = "GPUDASH_HELD_NOT_RUNNING_MINUTES", default_value_t = 10.0)]
    pub held_not_running_minutes: f64,
    /// Minutes a holder's GPU may stay under 5 % busy (as its node's gpudash-agent measures it)
    /// while a pod that could go there waits for it, before gpu-held-idle says so.
    #[arg(long, env = "GPUDASH_HELD_IDLE_MINUTES", default_value_t = 120.0)]
    pub held_idle_minutes: f64,
    /// The namespace whose pods labelled `app.kubernetes.io/name=gpudash-agent` are pulled
    /// (default: gpudash's own namespace in a cluster, `gpudash` outside one).
    #[arg(long, env = "GPUDASH_AGENT_NAMESPACE")]
    pub agent_namespace: Option<String>,
    /// Seconds a watch may stay silent before the view is marked stale (watches are re-opened
    /// every two thirds of this, so a healthy API server always speaks sooner; minimum 3).
    #[arg(long, env = "GPUDASH_WATCH_STALL", default_value_t = 30)]
    pub watch_stall: u64,
    /// Origins allowed to embed gpudash in a frame (CSP frame-ancestors); none by default.
    #[arg(long, env = "GPUDASH_FRAME_ANCESTORS", value_delimiter = ',')]
    pub frame_ancestors: Vec<String>,
    /// Seconds a connection has to send its request headers before it is closed.
    #[arg(long, env = "GPUDASH_HEADER_READ_TIMEOUT", default_value_t = 10.0)]
    pub header_read_timeout: f64,
    /// Connections open at once (lowered to fit the open-files limit); more are closed at once.
    #[arg(long, env = "GPUDASH_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,
    /// Log format.
    #[arg(long, env = "GPUDASH_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// History sampling resolution, seconds.
    #[arg(long, env = "GPUDASH_HISTORY_RESOLUTION", default_value_t = 10.0)]
    pub history_resolution: f64,
    /// Days of full-resolution history before rolling up to 10-minute min/avg/max.
    #[arg(long, env = "GPUDASH_HISTORY_FULL_DAYS", default_value_t = 7)]
    pub history_full_days: u64,
    /// Days of history kept in all.
    #[arg(long, env = "GPUDASH_HISTORY_KEEP_DAYS", default_value_t = 90)]
    pub history_keep_days: u64,
    /// Hard cap on the history database's size, MiB.
    #[arg(long, env = "GPUDASH_HISTORY_MAX_MB", default_value_t = 512)]
    pub history_max_mb: u64,
    /// Sign-in.
    #[command(flatten)]
    pub auth: AuthArgs,
}

/// `gpudash sim`.
#[derive(Debug, Parser, Clone)]
pub struct SimArgs {
    /// Scenario files (default: the built-in edge scenario).
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenarios: Vec<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "GPUDASH_SIM_LISTEN", default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Where to write a kubeconfig for kubectl and `gpudash serve --kubeconfig`.
    #[arg(long)]
    pub kubeconfig_out: Option<PathBuf>,
    /// Run timeline steps only when POST /_sim/advance is called.
    #[arg(long)]
    pub manual_timeline: bool,
    /// Play timelines this many times faster than written.
    #[arg(long, default_value_t = 1.0)]
    pub timeline_speed: f64,
    /// The Kubernetes version to speak, `1.NN`: 1.33 and older serve no `resource.k8s.io/v1`
    /// (Dynamic Resource Allocation), as a K3s of that line.
    #[arg(long, value_parser = kubernetes_minor, default_value = "1.34")]
    pub kubernetes_version: u32,
}

/// Parses `1.NN` (or `v1.NN`) into NN.
pub fn kubernetes_minor(s: &str) -> Result<u32, String> {
    let t = s.trim().trim_start_matches('v');
    t.strip_prefix("1.")
        .and_then(|m| m.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .filter(|m| (20..=99).contains(m))
        .ok_or_else(|| format!("{s:?}: expected a Kubernetes version such as 1.34 (1.20 to 1.99)"))
}

/// `--lang`: `en` or `ja` (a tag such as `ja-JP` is read as its language).
fn parse_lang(s: &str) -> Result<app::i18n::Lang, String> {
    app::i18n::Lang::parse(s).ok_or_else(|| format!("unknown language {s:?}: gpudash speaks en and ja"))
}
