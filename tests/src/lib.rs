//! Helpers for the end-to-end tests: find the built binary and bundle, start `gpudash` and
//! `gpudash sim` processes on free loopback ports, and drive headless Chromium through
//! chromedriver. Every process is killed on drop; the browser is closed even when a test fails.

pub mod browser;
pub mod control_plane;
pub mod demo_shape;
pub mod helm;
pub mod postgres;
pub mod real_node;
pub mod view;

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use futures::FutureExt;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Cargo's target directory (`CARGO_TARGET_DIR`, else `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

/// The `gpudash` binary built by `cargo build -p gpudash`.
pub fn bin() -> PathBuf {
    let p = target_dir().join("debug/gpudash");
    assert!(p.exists(), "{} is missing: run `cargo build -p gpudash` first (./test.sh does)", p.display());
    p
}

/// The site root built by `cargo xtask site`.
pub fn site_root() -> PathBuf {
    target_dir().join("site")
}

/// A view (or part of one) without the diagnoses' `since`: two gpudash processes that started
/// at different times agree on everything else (how long each has seen a diagnosis is its own).
pub fn without_since(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => {
            m.iter().filter(|(k, _)| k.as_str() != "since").map(|(k, x)| (k.clone(), without_since(x))).collect()
        }
        serde_json::Value::Array(a) => a.iter().map(without_since).collect(),
        other => other.clone(),
    }
}

/// A free loopback port.
/// The last `n` lines of a text (a log's tail for an error message).
pub fn last_lines(text: &str, n: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(n)..].join("\n")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(0)
}

/// Where tests write screenshots (README names it).
pub fn screenshot_dir() -> PathBuf {
    let d = root().join("screenshots");
    let _ = std::fs::create_dir_all(&d);
    d
}

/// A child process killed on drop, with its output captured to a file.
pub struct Proc {
    child: Child,
    /// The log file (stdout and stderr).
    pub log: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl Proc {
    /// Starts `program args…`, logging to a temp file.
    pub fn spawn(program: &Path, args: &[String]) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let mut p = Self::spawn_logged(program, args, &dir.path().join("out.log"))?;
        p._dir = Some(dir);
        Ok(p)
    }

    /// Starts `program args…` with `env` added to its environment, logging to a temp file.
    pub fn spawn_env(program: &Path, args: &[String], env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let log = dir.path().join("out.log");
        let f = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(f.try_clone()?)
            .stderr(f)
            .spawn()
            .with_context(|| format!("spawning {}", program.display()))?;
        Ok(Self { child, log, _dir: Some(dir) })
    }

    /// Starts `program args…`, appending its output to `log` (kept after the process ends).
    pub fn spawn_logged(program: &Path, args: &[String], log: &Path) -> anyhow::Result<Self> {
        let f = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(f.try_clone()?)
            .stderr(f)
            .spawn()
            .with_context(|| format!("spawning {}", program.display()))?;
        Ok(Self { child, log: log.to_path_buf(), _dir: None })
    }

    /// What the process printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether it has exited, and with which code.
    pub fn exited(&mut self) -> Option<i32> {
        self.child.try_wait().ok().flatten().map(|s| s.code().unwrap_or(-1))
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if let Some(c) = self.exited() {
                return Some(c);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Sends SIGKILL.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The OS process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Proc {
    /// Stops the process (SIGTERM first when it has children, SIGKILL after 3 s) and checks that
    /// nothing it started outlives it: its descendants (demo agents and their tegrastats
    /// commands, …) must be gone within 3 s of the kill. Any left are killed and
    /// the test fails (unless it is already failing).
    fn drop(&mut self) {
        let running = matches!(self.child.try_wait(), Ok(None));
        let family = if running { descendants(self.pid()) } else { Vec::new() };
        if !family.is_empty() {
            // A process with children is stopped as Kubernetes stops a container: SIGTERM, a
            // grace period for it to stop what it started, then SIGKILL.
            let _ = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status();
            let _ = self.wait_exit(Duration::from_secs(3));
        }
        self.kill();
        let t = Instant::now();
        let mut left = family.clone();
        while !left.is_empty() && t.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(50));
            let live: Vec<u32> = processes().into_iter().map(|p| p.0).collect();
            left.retain(|pid| live.contains(pid));
        }
        if !left.is_empty() {
            for pid in &left {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            if !std::thread::panicking() {
                panic!("processes started by {} outlived it by 3 s: {left:?}", self.log.display());
            }
        }
    }
}

/// Every live descendant of `pid` (children, their children, …).
pub fn descendants(pid: u32) -> Vec<u32> {
    let all = processes();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for c in all.iter().filter(|x| x.1 == p).map(|x| x.0) {
            if !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

/// Polls `url` until it answers 200 or `limit` passes.
pub async fn wait_http_ok(url: &str, limit: Duration) -> anyhow::Result<()> {
    let t = Instant::now();
    let client = reqwest::Client::new();
    loop {
        if let Ok(r) = client.get(url).timeout(Duration::from_secs(2)).send().await {
            if r.status().is_success() {
                return Ok(());
            }
        }
        if t.elapsed() > limit {
            bail!("{url} did not answer 200 within {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A running `gpudash serve`.
pub struct Gpudash {
    /// The process.
    pub proc: Proc,
    /// `http://127.0.0.1:port` plus base path.
    pub url: String,
    _db: tempfile::TempDir,
}

impl Gpudash {
    /// Starts `gpudash serve` with extra args, waits for /readyz.
    pub async fn start(extra: &[&str]) -> anyhow::Result<Self> {
        Self::start_with_base(extra, "").await
    }

    /// Starts `gpudash serve` watching the (simulated) API server at `server`, with extra args.
    pub async fn watching(server: &str, extra: &[&str]) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let kc = dir.path().join("kubeconfig");
        std::fs::write(&kc, gpudash_sim::kubeconfig(server))?;
        let kc = kc.display().to_string();
        let mut args = vec!["--kubeconfig", kc.as_str()];
        args.extend_from_slice(extra);
        Self::launch(&args, "", dir).await
    }

    /// As `start`, under a base path.
    pub async fn start_with_base(extra: &[&str], base: &str) -> anyhow::Result<Self> {
        Self::launch(extra, base, tempfile::tempdir()?).await
    }

    /// As `start`, on `port` (for a peer that must know gpudash's address before it starts:
    /// an identity provider's redirect).
    pub async fn start_on(port: u16, extra: &[&str]) -> anyhow::Result<Self> {
        Self::launch_on(port, extra, "", tempfile::tempdir()?).await
    }

    /// Starts the process with its database (and anything else it needs) in `db`.
    async fn launch(extra: &[&str], base: &str, db: tempfile::TempDir) -> anyhow::Result<Self> {
        Self::launch_on(free_port(), extra, base, db).await
    }

    async fn launch_on(port: u16, extra: &[&str], base: &str, db: tempfile::TempDir) -> anyhow::Result<Self> {
        let mut args: Vec<String> = vec![
            "serve".into(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--db".into(),
            db.path().join("history.db").display().to_string(),
            "--site-root".into(),
            site_root().display().to_string(),
        ];
        if !base.is_empty() {
            args.push("--base-path".into());
            args.push(base.into());
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        // Demo mode's node agents change what a scenario's nodes show a second after start; the
        // tests written for the scenarios as the API alone tells them run without them (the
        // agent tests ask for them).
        if extra.contains(&"--demo") && !extra.iter().any(|a| a.starts_with("--demo-agents")) {
            args.extend(["--demo-agents".to_string(), "false".to_string()]);
        }
        let proc = Proc::spawn(&bin(), &args)?;
        let url = format!("http://127.0.0.1:{port}{base}");
        if let Err(e) = wait_http_ok(&format!("{url}/readyz"), Duration::from_secs(60)).await {
            return Err(anyhow!("{e}\n--- gpudash output ---\n{}", proc.output()));
        }
        Ok(Self { proc, url, _db: db })
    }

    /// GET a path below the base as JSON.
    pub async fn json(&self, path: &str) -> anyhow::Result<serde_json::Value> {
        Ok(reqwest::get(format!("{}{path}", self.url)).await?.error_for_status()?.json().await?)
    }

    /// `POST /api/v1/fit` with a workload as YAML (`Content-Type: application/yaml`): the
    /// answer's JSON, whatever its status (a 422 is a result too).
    pub async fn fit_yaml(&self, yaml: &str) -> anyhow::Result<serde_json::Value> {
        let r = reqwest::Client::new()
            .post(format!("{}/api/v1/fit", self.url))
            .header("content-type", "application/yaml")
            .body(yaml.to_string())
            .send()
            .await?;
        Ok(r.json().await?)
    }

    /// Polls `/api/v1/cluster` until `pred` holds.
    pub async fn wait_view(
        &self,
        limit: Duration,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> anyhow::Result<serde_json::Value> {
        let t = Instant::now();
        loop {
            let v = self.json("/api/v1/cluster").await?;
            if pred(&v) {
                return Ok(v);
            }
            if t.elapsed() > limit {
                bail!("condition not met within {limit:?}; last view: {v}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Writes a kubeconfig for a simulator URL into a temp dir; returns (dir, path).
pub fn kubeconfig_file(url: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, gpudash_sim::kubeconfig(url)).unwrap_or_else(|e| panic!("write kubeconfig: {e}"));
    (dir, path)
}

/// Runs `f` with a headless Chromium session, closing the session and chromedriver afterwards
/// whatever happens (including a panic inside `f`).
pub async fn with_browser<F, Fut, T>(f: F) -> anyhow::Result<T>
where
    F: FnOnce(fantoccini::Client) -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    with_browser_in(None, f).await
}

/// As [`with_browser`], with the browser in a time zone and language (`Some(("Asia/Tokyo",
/// "ja"))`: a reader in Japan), as its machine's `TZ` and locale set them.
pub async fn with_browser_in<F, Fut, T>(place: Option<(&str, &str)>, f: F) -> anyhow::Result<T>
where
    F: FnOnce(fantoccini::Client) -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let port = free_port();
    let env: Vec<(&str, &str)> = place.map(|(tz, _)| vec![("TZ", tz)]).unwrap_or_default();
    let driver = Proc::spawn_env(Path::new("/usr/bin/chromedriver"), &[format!("--port={port}")], &env)
        .context("chromedriver not found: install Debian's chromium-driver (./test.sh does)")?;
    let url = format!("http://127.0.0.1:{port}");
    let t = Instant::now();
    while reqwest::get(format!("{url}/status")).await.is_err() {
        if t.elapsed() > Duration::from_secs(20) {
            bail!("chromedriver did not start: {}", driver.output());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let profile = tempfile::tempdir()?;
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), {
        let mut o = serde_json::json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                     "--window-size=1600,1200", "--enable-precise-memory-info", "--js-flags=--expose-gc",
                     format!("--user-data-dir={}", profile.path().display())],
        });
        if let Some((_, lang)) = place {
            if let Some(a) = o["args"].as_array_mut() {
                a.push(format!("--lang={lang}").into());
            }
            o["prefs"] = serde_json::json!({"intl": {"accept_languages": lang}});
        }
        o
    });
    let client = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&url)
        .await
        .map_err(|e| anyhow!("cannot start Chromium via chromedriver: {e}"))?;
    let result = std::panic::AssertUnwindSafe(f(client.clone())).catch_unwind().await;
    let _ = client.close().await;
    drop(driver);
    match result {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// Sends a POST that declares a `len`-byte body but sends only its first bytes, and returns the
/// status line: for checking that oversized bodies are refused from their declared length
/// (a client still sending a large body would see the connection close instead).
pub fn post_declared(url: &str, path: &str, len: usize) -> String {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://").split('/').next().unwrap_or("");
    let Ok(mut s) = std::net::TcpStream::connect(addr) else { return String::new() };
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n{{"
    );
    if s.write_all(head.as_bytes()).is_err() {
        return String::new();
    }
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).lines().next().unwrap_or("").to_string()
}

/// How long the soak tests run: `GPUDASH_SOAK_SECONDS` (`./test.sh` sets several minutes),
/// else one minute.
pub fn soak_duration() -> Duration {
    let s = std::env::var("GPUDASH_SOAK_SECONDS").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(60);
    Duration::from_secs(s.clamp(10, 1800))
}

/// A process's resident memory in MiB (`VmRSS`), or 0 when it cannot be read.
pub fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Waits (blocking) until `addr` accepts a TCP connection or `limit` passes.
pub fn wait_tcp(addr: &str, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if std::net::TcpStream::connect(addr).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// `(pid, ppid, pgrp)` of every live process (zombies left out), from /proc.
fn processes() -> Vec<(u32, u32, u32)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid pgrp …"
            let f: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            if f.first() == Some(&"Z") {
                return None;
            }
            Some((pid, f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
        })
        .collect()
}

/// The live children of `pid`.
pub fn children_of(pid: u32) -> Vec<u32> {
    processes().into_iter().filter(|p| p.1 == pid).map(|p| p.0).collect()
}

/// The live members of process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    processes().into_iter().filter(|p| p.2 == pgid).map(|p| p.0).collect()
}

/// Whether a series of memory samples is flat: the largest sample of the last third is within
/// `slack` (a fraction) plus `abs` of the largest of the first third. Warm-up samples should be
/// dropped by the caller.
pub fn flat(samples: &[f64], slack: f64, abs: f64) -> bool {
    let third = (samples.len() / 3).max(1);
    let max = |s: &[f64]| s.iter().copied().fold(0.0, f64::max);
    let (first, last) = (max(&samples[..third]), max(&samples[samples.len() - third..]));
    last <= first * (1.0 + slack) + abs
}

/// Churn in the simulator until the handle is aborted: `per_sec` changes a second — Pending GPU
/// pods created and deleted in namespace `churn` (at most 20 alive), and every tenth change a
/// node cordoned or uncordoned.
pub fn spawn_churn(sim: gpudash_sim::Simulator, per_sec: u32) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let nodes: Vec<String> = sim.state("Node").into_iter().map(|k| k.name).collect();
        let mut tick = tokio::time::interval(Duration::from_secs(1) / per_sec.max(1));
        let mut n: u64 = 0;
        loop {
            tick.tick().await;
            n += 1;
            if n.is_multiple_of(10) && !nodes.is_empty() {
                let name = &nodes[(n as usize / 10) % nodes.len()];
                if let Some(mut node) = sim.get("Node", "", name) {
                    let on = node["spec"]["unschedulable"] != true;
                    node["spec"]["unschedulable"] = serde_json::json!(on);
                    let _ = sim.apply(node);
                }
                continue;
            }
            let _ = sim.apply(serde_json::json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("churn-{n}"), "namespace": "churn", "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
                "status": {"phase": "Pending"}
            }));
            if n > 20 {
                sim.delete("Pod", "churn", &format!("churn-{}", n - 20));
            }
        }
    })
}

/// The scenario files (`*.yaml`) of `tests/scenarios/<dir>`, sorted; panics unless there are
/// exactly `expect` of them (a file added or lost must be noticed by its test).
pub fn scenario_files(dir: &str, expect: usize) -> Vec<String> {
    let dir = root().join("tests/scenarios").join(dir);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path().display().to_string()))
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), expect, "{files:?}");
    files
}

/// The kubectl the tests run: the one on the PATH, unless the control plane's (built with it,
/// `target/control-plane/bin/kubectl`) is newer — a machine without an image kubectl has only
/// Debian's 1.20.
pub fn kubectl_program() -> PathBuf {
    static CHOSEN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CHOSEN
        .get_or_init(|| {
            let minor = |p: &Path| -> Option<u32> {
                let out = Command::new(p).args(["version", "--client", "-o", "json"]).output().ok()?;
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
                v["clientVersion"]["minor"].as_str()?.trim_end_matches('+').parse().ok()
            };
            let built = control_plane::kubectl_bin();
            let path = PathBuf::from("kubectl");
            match (minor(&path), built.exists().then(|| minor(&built)).flatten()) {
                (Some(p), Some(b)) if b > p => built,
                (None, Some(_)) => built,
                _ => path,
            }
        })
        .clone()
}

/// kubectl's discovery cache for a kubeconfig: a folder beside it, not `~/.kube/cache`. That one
/// is keyed by host and port, and the tests' servers take ephemeral ports on 127.0.0.1 — a server
/// that serves no DRA, started on a port an earlier test's server (with DRA) had, was answered
/// from the earlier one's cached discovery (seen in CI: kubectl listed `resource.k8s.io/v1`
/// instead of saying the resource type is not served).
pub fn kubectl_cache_dir(kc: &Path) -> PathBuf {
    kc.with_file_name("kubectl-cache")
}

/// The tests' kubectl command for a kubeconfig, its discovery cache beside it.
pub fn kubectl_command(kc: &Path) -> Command {
    let mut cmd = Command::new(kubectl_program());
    cmd.arg("--kubeconfig").arg(kc).arg("--cache-dir").arg(kubectl_cache_dir(kc));
    cmd
}

/// Runs kubectl with a kubeconfig; returns whether it succeeded and its stdout and stderr.
pub fn kubectl(kc: &Path, args: &[&str]) -> (bool, String) {
    let out = kubectl_command(kc)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("kubectl not found ({e}): ./test.sh installs it"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Runs each kubectl command (off the runtime's workers) and asserts it succeeds and prints
/// every expected text.
pub async fn expect_kubectl(kc: &Path, cases: &[(&[&str], &[&str])]) {
    for (args, want) in cases {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let kc2 = kc.to_path_buf();
        let (ok, out) = tokio::task::spawn_blocking(move || {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            kubectl(&kc2, &a)
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(ok, "kubectl {args:?} failed:\n{out}");
        for w in *want {
            assert!(out.contains(w), "kubectl {args:?}: expected {w:?} in:\n{out}");
        }
    }
}

/// What a page's first load fetches besides the page itself: its stylesheets, scripts and
/// images, and the WASM module when it hydrates (the loader imports it): paths below the site,
/// sorted. The page-weight test and the benchmark count the same.
pub fn first_load(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for tag in html.split('<').skip(1) {
        let attr =
            |name: &str| tag.split(&format!(" {name}=\"")).nth(1).and_then(|v| v.split('"').next()).map(str::to_string);
        let is = |name: &str| tag.starts_with(name) && tag[name.len()..].starts_with([' ', '>', '/']);
        // The bundle: the loader's script (`modulepreload`) and its WASM (`preload`), which the
        // loader imports.
        let src = if is("link")
            && ["stylesheet", "modulepreload", "preload"].iter().any(|r| tag.contains(&format!("rel=\"{r}\"")))
        {
            attr("href")
        } else if is("script") || is("img") {
            attr("src")
        } else {
            None
        };
        out.extend(src.filter(|s| s.starts_with('/')).map(|s| s.replace("&amp;", "&")));
    }
    out.sort();
    out.dedup();
    out
}
