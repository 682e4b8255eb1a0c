//! `gpudash-bench`: builds nothing itself (run it through `./bench.sh`, which builds release),
//! starts the simulator with a generated cluster and churn, runs `gpudash serve` against it with
//! N stream clients, and prints one table row per size and client count.

mod agent;
mod cluster;
mod derive;
mod fleet;
mod history;
mod real;
mod soak;
mod stream;

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use gpudash_sim::{start, Scenario, Simulator, TimelineMode};
use serde_json::json;

struct Killer(Child);
impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A `kB` line of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), 0 when it cannot be read.
fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// utime + stime in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = s.rsplit_once(") ").map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
}

/// CPU use in percent of one core over `d`, and the RSS at the end, in MiB.
async fn cpu_and_rss(pid: u32, d: Duration) -> (f64, f64) {
    let t0 = cpu_ticks(pid);
    tokio::time::sleep(d).await;
    let t1 = cpu_ticks(pid);
    ((t1 - t0) as f64 / 100.0 / d.as_secs_f64() * 100.0, rss_kib(pid) as f64 / 1024.0)
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[derive(Default)]
struct Row {
    size: String,
    objects: usize,
    clients: usize,
    sync_s: f64,
    idle_rss: f64,
    idle_cpu: f64,
    churn_rss: f64,
    derive_ms: f64,
    first_view_s: f64,
    churn_cpu: f64,
    p50: f64,
    p95: f64,
    p99: f64,
    seen: usize,
    bytes_per_push: f64,
    pushes_per_s: f64,
}

/// The overview's first load as sent: `(gzip, brotli)` bytes of the page and what it loads
/// ([`gpudash_tests::first_load`]: its stylesheets and scripts, and the bundle when it is the
/// live overview; a large site's is the paged one, which loads no WASM). Chromium asks for brotli only over HTTPS, so a kiosk on
/// plain HTTP gets the gzip figure.
async fn page_weight(url: &str) -> anyhow::Result<(u64, u64)> {
    let http = reqwest::Client::new();
    let html = http.get(format!("{url}/")).send().await?.text().await?;
    let mut paths = vec!["/".to_string()];
    paths.extend(gpudash_tests::first_load(&html));
    let mut total = (0, 0);
    for path in &paths {
        for (enc, sum) in [("gzip", &mut total.0), ("br", &mut total.1)] {
            let r = http.get(format!("{url}{path}")).header("accept-encoding", enc).send().await?;
            let sent = r.headers().get("content-encoding").and_then(|v| v.to_str().ok()).unwrap_or("identity");
            anyhow::ensure!(sent == enc || !path.starts_with("/pkg/"), "{path}: asked for {enc}, got {sent}");
            *sum += r.bytes().await?.len() as u64;
        }
    }
    Ok(total)
}

/// `target/release/gpudash serve` on `kubeconfig`, listening on `port`, its database in `dir`:
/// its pid, and the guard that kills it.
pub(crate) fn spawn_gpudash(
    kubeconfig: &std::path::Path,
    port: u16,
    dir: &std::path::Path,
) -> anyhow::Result<(u32, Killer)> {
    let bin = root().join("target/release/gpudash");
    let child = Command::new(&bin)
        .args(["serve", "--kubeconfig"])
        .arg(kubeconfig)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--db"])
        .arg(dir.join("h.db"))
        .arg("--site-root")
        .arg(root().join("target/site"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("{} (build it with cargo build --release -p gpudash)", bin.display()))?;
    Ok((child.id(), Killer(child)))
}

async fn run(
    size: &str,
    nodes: usize,
    clients: usize,
    churn: u32,
    secs: u64,
) -> anyhow::Result<(Row, (u64, u64), app::model::ClusterView)> {
    let (scenario, expected) = if size == "demo" {
        let mut s = gpudash_sim::demo_scenario();
        s.timelines.clear();
        let extra = cluster::generate(0, 0);
        let text = serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": extra.objects}))?;
        s.objects.extend(Scenario::from_text("probe", &text).map_err(|e| anyhow::anyhow!("{e}"))?.objects);
        (s, Vec::new())
    } else if let Some(n) = size.strip_prefix("dra") {
        let g = cluster::generate_dra(n.parse().unwrap_or(nodes), 30);
        let text = serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": g.objects}))?;
        (Scenario::from_text("generated-dra", &text).map_err(|e| anyhow::anyhow!("{e}"))?, g.allocated)
    } else {
        let g = cluster::generate(nodes, 30);
        let text = serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": g.objects}))?;
        (Scenario::from_text("generated", &text).map_err(|e| anyhow::anyhow!("{e}"))?, g.allocated)
    };
    let objects = scenario.objects.len();
    let sim = start(Simulator::new(scenario), ([127, 0, 0, 1], 0).into(), TimelineMode::Manual).await?;
    let dir = tempfile::tempdir()?;
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, sim.kubeconfig())?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let url = format!("http://127.0.0.1:{port}");
    let t0 = Instant::now();
    let (pid, _k) = spawn_gpudash(&kc, port, dir.path())?;
    let http = reqwest::Client::new();
    loop {
        if let Ok(r) = http.get(format!("{url}/readyz")).send().await {
            if r.status().is_success() {
                break;
            }
        }
        if t0.elapsed() > Duration::from_secs(300) {
            bail!("gpudash did not sync within 300 s");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sync_s = t0.elapsed().as_secs_f64();
    let weight = page_weight(&url).await?;
    // The simulated browsers share this process: one whole view read first raises its glibc
    // mmap threshold, as any long-running client's would, so that the 200 first views below
    // measure gpudash rather than this process mapping and unmapping each multi-megabyte
    // buffer (1.4 s instead of 2.3-2.6 s at 1,000 nodes; the page-weight fetch did this before
    // the overview became light).
    let _ = http.get(format!("{url}/api/v1/cluster")).send().await?.bytes().await?;
    let (idle_cpu, idle_rss) = cpu_and_rss(pid, Duration::from_secs(3)).await;

    // Stream clients; churn starts when all have their first (whole) view, so that the latency
    // measured is the steady state's, not the initial download's.
    let sent: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let streams = stream::Clients::spawn(&url, clients);
    let initial_s = streams.wait_ready(Duration::from_secs(120)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    streams.reset_bytes();
    // Churn: every tenth change moves the probe; the rest flip pods between nodes' states.
    let dra_nodes: usize = size.strip_prefix("dra").and_then(|n| n.parse().ok()).unwrap_or(0);
    let churn_task = {
        let simh = sim.sim.clone();
        let sent = sent.clone();
        tokio::spawn(async move {
            let period = Duration::from_secs_f64(1.0 / f64::from(churn.max(1)));
            let mut tick = tokio::time::interval(period);
            for i in 1u64.. {
                tick.tick().await;
                if i % 10 == 0 {
                    let seq = i / 10;
                    sent.lock().unwrap_or_else(|e| e.into_inner()).insert(seq, Instant::now());
                    let _ = simh.apply(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "probe-node", "labels": {"gpudash.dev/seq": seq.to_string()}},
                        "status": {"capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}, "allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}, "conditions": [{"type": "Ready", "status": "True"}]}}));
                } else if dra_nodes > 0 && i % 2 == 1 {
                    // DRA churn: a claim's pod goes (reservedFor emptied), then comes back;
                    // the next claim is on another node.
                    let k = (i / 4) as usize;
                    let (node, j) = (k % dra_nodes, (k / dra_nodes) % 8);
                    let (node, pname) = (format!("node-{node:04}"), format!("p-{node:04}-{j:02}"));
                    let ns = format!("ns-{}", j % 7);
                    let pod = (i % 4 == 1).then_some(pname.as_str());
                    let _ =
                        simh.apply(cluster::dra_claim(&ns, &format!("{pname}-gpu"), &node, &format!("gpu-{j}"), pod));
                } else {
                    let name = format!("churn-{}", i % 50);
                    if i % 2 == 0 {
                        let _ = simh.apply(cluster::pod("churn", &name, None, Some(("nvidia.com/gpu", 1)), 1));
                    } else {
                        simh.delete("Pod", "churn", &name);
                    }
                }
            }
        })
    };
    let (churn_cpu, churn_rss) = cpu_and_rss(pid, Duration::from_secs(secs)).await;
    churn_task.abort();
    let elapsed = secs as f64;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut l = streams.latencies(&sent.lock().unwrap_or_else(|e| e.into_inner()));
    let (b, n) = streams.bytes();
    drop(streams);
    // The last derivation's duration, as gpudash reports it.
    let metrics = http.get(format!("{url}/metrics")).send().await?.text().await?;
    let derive_ms = metrics
        .lines()
        .find_map(|l| l.strip_prefix("gpudash_derive_seconds "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(f64::NAN, |s| s * 1000.0);
    let row = Row {
        size: size.into(),
        objects,
        clients,
        sync_s,
        idle_rss,
        idle_cpu,
        churn_rss,
        derive_ms,
        first_view_s: initial_s,
        churn_cpu,
        seen: l.len(),
        p50: pct(&mut l, 0.50),
        p95: pct(&mut l, 0.95),
        p99: pct(&mut l, 0.99),
        bytes_per_push: if n > 0 { b as f64 / n as f64 } else { f64::NAN },
        pushes_per_s: n as f64 / elapsed,
    };
    // gpudash's allocated GPUs per node, to compare with the peer.
    let view: serde_json::Value = http.get(format!("{url}/api/v1/cluster")).send().await?.json().await?;
    let ours: Vec<(String, u64)> = view["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| {
            (
                n["name"].as_str().unwrap_or("").to_string(),
                n["gpu_resources"].as_array().into_iter().flatten().filter_map(|g| g["allocated"].as_u64()).sum(),
            )
        })
        .collect();
    if !expected.is_empty() {
        let mismatched =
            expected.iter().filter(|(n, a)| ours.iter().find(|(m, _)| m == n).map(|x| x.1) != Some(*a)).count();
        if mismatched > 0 {
            eprintln!("WARNING: gpudash disagrees with the generator on {mismatched} nodes' allocated GPUs");
        }
    }
    let per_resource = per_resource(&view);
    // The peer runs (and is waited for) off the runtime's workers: blocking a worker can strand
    // a simulator task queued on it, and the peer then waits forever for an answer (seen at 1000
    // nodes on this 2-core machine).
    let size_owned = size.to_string();
    tokio::task::spawn_blocking(move || peer(&kc, &per_resource, &size_owned, sync_s)).await?;
    drop(sim);
    let view: app::model::ClusterView = serde_json::from_value(view)?;
    Ok((row, weight, view))
}

/// Allocated units per node and GPU resource in a view, to compare with the peer.
fn per_resource(view: &serde_json::Value) -> Vec<(String, String, u64)> {
    view["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| {
            let node = n["name"].as_str().unwrap_or("").to_string();
            n["gpu_resources"].as_array().into_iter().flatten().map(move |g| {
                (node.clone(), g["resource"].as_str().unwrap_or("").to_string(), g["allocated"].as_u64().unwrap_or(0))
            })
        })
        .collect()
}

/// kubectl-view-allocations, when installed (./bench.sh --peer installs it), on the same cluster.
fn peer(kc: &Path, ours: &[(String, String, u64)], size: &str, our_sync: f64) {
    let Some(bin) = ["target/peer/bin/kubectl-view-allocations"].iter().map(|p| root().join(p)).find(|p| p.exists())
    else {
        return;
    };
    let t = Instant::now();
    let Ok(mut child) = Command::new(&bin)
        .args(["-r", "gpu", "-o", "csv"])
        .env("KUBECONFIG", kc)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return;
    };
    let pid = child.id();
    // Read its output while it runs: at 1000 nodes the CSV outgrows the pipe, and a child
    // blocked on a full pipe never exits.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut text);
            }
            text
        })
    };
    let out_reader = drain(child.stdout.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>));
    let err_reader = drain(child.stderr.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>));
    let mut peak = 0;
    while child.try_wait().ok().flatten().is_none() {
        let hwm = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .unwrap_or(0);
        peak = peak.max(hwm);
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = t.elapsed().as_secs_f64();
    let out = out_reader.join().unwrap_or_default();
    let _ = err_reader.join();
    // CSV columns: Date,Kind,resource,node,pod,Requested,...; `-r gpu` keeps resources whose
    // name contains "gpu" (so not MIG profiles such as nvidia.com/mig-1g.5gb).
    let mut theirs: HashMap<(String, String), f64> = HashMap::new();
    for line in out.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() > 5 && f[1] == "node" {
            if let Ok(v) = f[5].parse::<f64>() {
                *theirs.entry((f[3].to_string(), f[2].to_string())).or_default() += v;
            }
        }
    }
    // Both directions: every (node, resource) the peer counts, and every one of ours it would count.
    let mut disagree: Vec<String> = Vec::new();
    for ((node, res), t) in &theirs {
        let a = ours.iter().find(|(n, r, _)| n == node && r == res).map_or(0, |x| x.2);
        if (t - a as f64).abs() >= 0.5 {
            disagree.push(format!("{node} {res}: peer {t}, gpudash {a}"));
        }
    }
    for (node, res, a) in ours.iter().filter(|(_, r, a)| r.contains("gpu") && *a > 0) {
        if !theirs.contains_key(&(node.clone(), res.clone())) {
            disagree.push(format!("{node} {res}: peer none, gpudash {a}"));
        }
    }
    let verdict = if disagree.is_empty() {
        format!("agree on allocated GPUs per node and resource ({} pairs)", theirs.len())
    } else {
        format!("DISAGREE on {}: {}", disagree.len(), disagree.iter().take(3).cloned().collect::<Vec<_>>().join("; "))
    };
    println!("| {size} | kubectl-view-allocations | {wall:.2} s | {:.1} MiB peak | gpudash first view {our_sync:.2} s | {verdict} |", peak as f64 / 1024.0);
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str, d: &str| {
        args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| d.to_string())
    };
    if let Some(n) = args.iter().position(|a| a == "--fleet").and_then(|i| args.get(i + 1)) {
        return fleet::run(
            n.parse().unwrap_or(100),
            get("--nodes", "10").parse().unwrap_or(10),
            get("--big", "0").parse().unwrap_or(0),
            get("--big-nodes", "1000").parse().unwrap_or(1000),
            get("--rate", "1").parse().unwrap_or(1.0),
            get("--seconds", "60").parse().unwrap_or(60),
        )
        .await;
    }
    if let Some(s) = args.iter().position(|a| a == "--demo-soak").and_then(|i| args.get(i + 1)) {
        return soak::run(s.parse().unwrap_or(600), get("--speed", "150").parse().unwrap_or(150.0)).await;
    }
    if let Some(n) = args.iter().position(|a| a == "--history-month").and_then(|i| args.get(i + 1)) {
        return history::month(n.parse().unwrap_or(1000), get("--hours", "6").parse().unwrap_or(6)).await;
    }
    if args.iter().any(|a| a == "--history") {
        return history::report().await;
    }
    if let Some(s) = args.iter().position(|a| a == "--agent").and_then(|i| args.get(i + 1)) {
        return agent::run(s.parse().unwrap_or(30)).await;
    }
    if let Some(n) = args.iter().position(|a| a == "--derive").and_then(|i| args.get(i + 1)) {
        derive::run(
            n.parse().unwrap_or(1000),
            get("--rounds", "50").parse().unwrap_or(50),
            args.iter().any(|a| a == "--dra"),
        );
        return Ok(());
    }
    if args.iter().any(|a| a == "--real") {
        let counts: Vec<usize> = get("--clients", "1,200").split(',').filter_map(|c| c.parse().ok()).collect();
        let rate: u32 = get("--rate", "20").parse().unwrap_or(20);
        let secs: u64 = get("--seconds", "30").parse().unwrap_or(30);
        real::header();
        for n in get("--sizes", "100,1000").split(',').filter_map(|n| n.parse().ok()) {
            real::run(n, &counts, rate, secs).await?;
        }
        return Ok(());
    }
    let sizes = get("--sizes", "demo,100,1000");
    let clients = get("--clients", "1,200");
    let churn: u32 = get("--churn", "200").parse().unwrap_or(200);
    let secs: u64 = get("--seconds", "15").parse().unwrap_or(15);
    println!("| size | objects | clients | initial sync | objects/s | idle RSS | idle CPU | churn RSS | churn CPU | derive | all clients' first view | \
        change→client p50 / p95 / p99 | probes seen | bytes/push | pushes/s |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut weight = (0, 0);
    let mut growth = Vec::new();
    for size in sizes.split(',') {
        let nodes = if size == "demo" { 0 } else { size.trim_start_matches("dra").parse().unwrap_or(10) };
        for c in clients.split(',').filter_map(|c| c.parse::<usize>().ok()) {
            let (r, w, view) = run(size, nodes, c, churn, secs).await?;
            if size == "demo" || weight.0 == 0 {
                weight = w;
            }
            if c == 1 {
                let hours = if view.nodes.len() > 200 { 1 } else { 6 };
                growth.push((size.to_string(), history::growth_per_day(&view, hours).await?, hours));
            }
            println!(
                "| {} | {} | {} | {:.2} s | {:.0} | {:.1} MiB | {:.1} % | {:.1} MiB | {:.1} % | {:.1} ms | {:.2} s | {:.1} / {:.1} / {:.1} ms | {} | \
                    {:.0} | {:.1} |",
                r.size, r.objects, r.clients, r.sync_s, r.objects as f64 / r.sync_s, r.idle_rss, r.idle_cpu, r.churn_rss, r.churn_cpu, r.derive_ms, r.first_view_s, r.p50, r.p95, r.p99, r.seen, r.bytes_per_push, r.pushes_per_s
            );
        }
    }
    println!(
        "\nfirst load of the overview (the page and what it loads, as served; first size run): {:.1} KiB gzip, {:.1} KiB brotli",
        weight.0 as f64 / 1024.0,
        weight.1 as f64 / 1024.0
    );
    for (size, g, hours) in growth {
        println!("SQLite growth, {size}: {:.2} MiB per simulated day ({:.1} MiB per 30 days; measured over {hours} simulated \
            hours)", g / 1048576.0, g * 30.0 / 1048576.0);
    }
    history::report().await?;
    Ok(())
}
