//! `--real`: the benchmark on a real control plane (kine on SQLite, kube-apiserver, the
//! controller-manager, the scheduler and kwok as the kubelets, built by scripts/control-plane.sh).
//!
//! Per size: the generated cluster is created through the API server (nodes given their GPU
//! capacity by a status patch, as the device plugin reports it; pods bound to their nodes, which
//! kwok then runs; the waiting pods left to the real scheduler), gpudash is started on the
//! plane's kubeconfig, and churn goes through the API server at a steady rate. The probe's
//! latency is measured twice: from the moment the API server's own watch delivers the change
//! (a watch this benchmark holds, like gpudash's) and from the write.

mod populate;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use gpudash_tests::control_plane::ControlPlane;
use serde_json::{json, Value};

use populate::{populate, wait_for, Populated};

use crate::{cluster, cpu_and_rss, pct, per_resource};

/// Polls gpudash until its view matches the cluster (every node's allocated GPUs as the API
/// server has them, every waiting pod listed); that view.
async fn first_correct_view(url: &str, cluster: &Populated) -> anyhow::Result<Value> {
    let local = reqwest::Client::new();
    let view: Arc<Mutex<Value>> = Arc::default();
    let last: Arc<Mutex<String>> = Arc::default();
    let (expected, waiting) = (&cluster.expected, cluster.waiting);
    let matched =
        wait_for("gpudash's view to match the cluster", Duration::from_secs(300), Duration::from_millis(20), || {
            let (local, view, last) = (&local, view.clone(), last.clone());
            async move {
                let Ok(r) = local.get(format!("{url}/api/v1/cluster")).send().await else { return false };
                let Ok(v) = r.json::<Value>().await else { return false };
                let ours: HashMap<&str, u64> = v["nodes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|n| {
                        let alloc =
                            n["gpu_resources"].as_array().into_iter().flatten().filter_map(|g| g["allocated"].as_u64());
                        (n["name"].as_str().unwrap_or(""), alloc.sum())
                    })
                    .collect();
                let wrong: Vec<String> = expected
                    .iter()
                    .filter(|(n, a)| ours.get(n.as_str()).unwrap_or(&0) != *a)
                    .take(5)
                    .map(|(n, a)| format!("{n}: {a} expected, {:?} shown", ours.get(n.as_str())))
                    .collect();
                let pending = v["pending"].as_array().map_or(0, Vec::len);
                let ok = wrong.is_empty() && pending >= waiting;
                if ok {
                    *view.lock().unwrap_or_else(|e| e.into_inner()) = v;
                } else {
                    *last.lock().unwrap_or_else(|e| e.into_inner()) =
                        format!("{wrong:?}; {pending} pending shown of {waiting}; synced {}", v["source"]["synced"]);
                }
                ok
            }
        })
        .await;
    if let Err(e) = matched {
        bail!("{e}: {}", last.lock().unwrap_or_else(|e| e.into_inner()));
    }
    let v = view.lock().unwrap_or_else(|e| e.into_inner()).take();
    Ok(v)
}

/// When moments were stamped, by probe number.
type Stamps = Arc<Mutex<HashMap<u64, Instant>>>;

/// The API server's watch on the probe node, as the benchmark's own client: when each sequence
/// number is delivered.
fn watch_probe(http: reqwest::Client, server: &str, delivered: Stamps) -> tokio::task::JoinHandle<()> {
    let url = format!("{server}/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Dprobe-node");
    tokio::spawn(async move {
        let Ok(r) = http.get(url).send().await else { return };
        let mut s = r.bytes_stream();
        let mut buf = Vec::new();
        while let Some(Ok(chunk)) = s.next().await {
            buf.extend_from_slice(&chunk);
            while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=i).collect();
                let at = Instant::now();
                let Ok(ev) = serde_json::from_slice::<Value>(&line) else { continue };
                if let Some(seq) =
                    ev["object"]["metadata"]["labels"]["gpudash.dev/seq"].as_str().and_then(|s| s.parse().ok())
                {
                    delivered.lock().unwrap_or_else(|e| e.into_inner()).entry(seq).or_insert(at);
                }
            }
        }
    })
}

/// Churn's bookkeeping: when each probe was written, the requests refused and those served.
#[derive(Clone, Default)]
struct Churned {
    sent: Stamps,
    errors: Arc<std::sync::atomic::AtomicUsize>,
    done: Arc<std::sync::atomic::AtomicUsize>,
}

/// Churn through the API server at `rate` a second: every tenth change relabels the probe node
/// (numbers from `seq_base` on); the rest create and delete GPU pods that the real scheduler
/// finds no room for.
fn churn(http: reqwest::Client, server: String, rate: u32, seq_base: u64, c: Churned) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate.max(1))));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for i in 1u64.. {
            tick.tick().await;
            let req = if i % 10 == 0 {
                let seq = seq_base + i / 10;
                c.sent.lock().unwrap_or_else(|e| e.into_inner()).insert(seq, Instant::now());
                http.patch(format!("{server}/api/v1/nodes/probe-node"))
                    .header("content-type", "application/merge-patch+json")
                    .body(json!({"metadata": {"labels": {"gpudash.dev/seq": seq.to_string()}}}).to_string())
            } else if i % 2 == 0 {
                let mut p = cluster::pod("churn", &format!("churn-{}", i % 50), None, Some(("nvidia.com/gpu", 1)), 1);
                if let Some(m) = p.as_object_mut() {
                    m.remove("status");
                }
                http.post(format!("{server}/api/v1/namespaces/churn/pods")).json(&p)
            } else {
                http.delete(format!("{server}/api/v1/namespaces/churn/pods/churn-{}", (i + 25) % 50))
            };
            let (errors, done) = (c.errors.clone(), c.done.clone());
            tokio::spawn(async move {
                match req.send().await {
                    // 404 and 409: the pod was already gone or still there, a churn step
                    // that changed nothing but was still served.
                    Ok(r) if r.status().is_success() || [404, 409].contains(&r.status().as_u16()) => {}
                    _ => {
                        errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            });
        }
    })
}

/// CPU % and RSS (MiB) of a control-plane process over `d`; not a number when it is not running.
async fn plane_use(plane: &ControlPlane, name: &str, d: Duration) -> (f64, f64) {
    match plane.pid(name) {
        Some(p) => cpu_and_rss(p, d).await,
        None => (f64::NAN, f64::NAN),
    }
}

/// `--real-hold SECONDS`: a fresh plane with the generated cluster of `nodes` nodes, held for
/// `secs` seconds for experiments by hand (its kubeconfig printed), then stopped.
pub async fn hold(nodes: usize, secs: u64) -> anyhow::Result<()> {
    let plane = ControlPlane::start().await?;
    let http = plane.http_client()?;
    let cluster = populate(&http, &plane.server, nodes).await?;
    println!(
        "plane at {} with {} objects; kubeconfig {}; held for {secs} s",
        plane.server,
        cluster.objects,
        plane.kubeconfig.display()
    );
    tokio::time::sleep(Duration::from_secs(secs)).await;
    Ok(())
}

/// One size on a fresh control plane; prints its rows.
pub async fn run(nodes: usize, client_counts: &[usize], rate: u32, secs: u64) -> anyhow::Result<()> {
    let plane = ControlPlane::start().await?;
    let http = plane.http_client()?;
    let server = plane.server.clone();
    let cluster = populate(&http, &server, nodes).await?;
    let Populated { objects, populate_s, .. } = cluster;

    // gpudash on the plane's kubeconfig.
    let dir = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let url = format!("http://127.0.0.1:{port}");
    let t0 = Instant::now();
    let (pid, _k) = crate::spawn_gpudash(&plane.kubeconfig, port, dir.path())?;
    let local = reqwest::Client::new();
    let ready_s = wait_for("gpudash /readyz", Duration::from_secs(300), Duration::from_millis(10), || {
        let r = local.get(format!("{url}/readyz")).send();
        async move { r.await.is_ok_and(|r| r.status().is_success()) }
    })
    .await?;
    let view = first_correct_view(&url, &cluster).await?;
    let first_view_s = t0.elapsed().as_secs_f64();
    let (_, idle_rss) = cpu_and_rss(pid, Duration::from_secs(3)).await;

    // The peer, on the same API server.
    let ours = per_resource(&view);
    let (kc, label) = (plane.kubeconfig.clone(), format!("real {nodes}"));
    tokio::task::spawn_blocking(move || crate::peer(&kc, &ours, &label, first_view_s)).await?;

    // Probe numbers go on from one client count to the next: the probe node keeps its label, and
    // a client's first view must not hold a number the next run will send again.
    let run = Run {
        plane: &plane,
        http: &http,
        url: &url,
        pid,
        rate,
        secs,
        nodes,
        objects,
        populate_s,
        ready_s,
        first_view_s,
        idle_rss,
    };
    let mut seq_base = 0u64;
    for &clients in client_counts {
        seq_base = run.clients(clients, seq_base).await;
        // Between client counts, the churn pods go, so each run starts from the same cluster.
        let _ = http.delete(format!("{server}/api/v1/namespaces/churn/pods")).send().await;
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    Ok(())
}

/// One size's run once gpudash has its first view: what each client count measures needs.
struct Run<'a> {
    plane: &'a ControlPlane,
    http: &'a reqwest::Client,
    url: &'a str,
    pid: u32,
    rate: u32,
    secs: u64,
    nodes: usize,
    objects: usize,
    populate_s: f64,
    ready_s: f64,
    first_view_s: f64,
    idle_rss: f64,
}

impl Run<'_> {
    /// `clients` stream clients under churn for the run's seconds, probes numbered from
    /// `seq_base`; prints the row and gives the next probe number.
    async fn clients(&self, clients: usize, seq_base: u64) -> u64 {
        let (http, server, secs) = (self.http, &self.plane.server, self.secs);
        let streams = crate::stream::Clients::spawn(self.url, clients);
        let all_first_s = streams.wait_ready(Duration::from_secs(120)).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let delivered: Stamps = Arc::default();
        let watch = watch_probe(http.clone(), server, delivered.clone());
        tokio::time::sleep(Duration::from_millis(500)).await;
        let churned = Churned::default();
        let churn = churn(http.clone(), server.clone(), self.rate, seq_base, churned.clone());
        let d = Duration::from_secs(secs);
        let (ours, api, kine) = tokio::join!(
            cpu_and_rss(self.pid, d),
            plane_use(self.plane, "kube-apiserver", d),
            plane_use(self.plane, "kine", d)
        );
        churn.abort();
        tokio::time::sleep(Duration::from_secs(1)).await;
        watch.abort();
        let served = churned.done.load(std::sync::atomic::Ordering::Relaxed);
        let errs = churned.errors.load(std::sync::atomic::Ordering::Relaxed);
        let delivered = delivered.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let sent = churned.sent.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut from_watch = streams.latencies(&delivered);
        let mut from_write = streams.latencies(&sent);
        let probes = sent.len();
        let Run { nodes, objects, populate_s, ready_s, first_view_s, idle_rss, .. } = *self;
        eprintln!(
            "{nodes} nodes, {clients} clients: the benchmark's own API watch delivered {} of {probes} probes; clients saw {} of {} \
                (probe, client) pairs",
            delivered.len(),
            from_write.len(),
            probes * clients
        );
        drop(streams);
        println!(
            "| real {nodes} | {objects} | {populate_s:.0} s | {clients} | {ready_s:.2} s | {first_view_s:.2} \
                s | {all_first_s:.2} s | {idle_rss:.1} MiB | {:.1} MiB | {:.1} % | {:.0} ({errs} failed) | {:.1} \
                / {:.1} / {:.1} ms | {:.1} ms | {} of {probes} | {:.0} MiB, {:.0} % | {:.0} MiB, {:.0} % |",
            ours.1,
            ours.0,
            served as f64 / secs as f64,
            pct(&mut from_watch, 0.50),
            pct(&mut from_watch, 0.95),
            pct(&mut from_watch, 0.99),
            pct(&mut from_write, 0.99),
            from_write.len() / clients.max(1),
            api.1,
            api.0,
            kine.1,
            kine.0,
        );
        sent.keys().max().copied().unwrap_or(seq_base) + 1
    }
}

/// The header of the real-server table.
pub fn header() {
    println!(
        "| size | objects | populate | clients | gpudash ready | first correct view | all clients' first \
        view | idle RSS | churn RSS | churn CPU | changes/s served | API watch→client p50 / p95 / p99 \
        | write→client p99 | probes seen (per client) | kube-apiserver RSS, CPU | kine RSS, CPU |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
}
