//! `--real`: the benchmark on a real control plane (kine on SQLite, kube-apiserver, the
//! controller-manager, the scheduler and kwok as the kubelets, built by scripts/control-plane.sh).
//!
//! Per size: the generated cluster is created through the API server (nodes given their GPU
//! capacity by a status patch, as the device plugin reports it; pods bound to their nodes, which
//! kwok then runs; the waiting pods left to the real scheduler), gpudash is started on the
//! plane's kubeconfig, and churn goes through the API server at a steady rate. The probe's
//! latency is measured twice: from the moment the API server's own watch delivers the change
//! (a watch this benchmark holds, like gpudash's) and from the write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use gpudash_tests::control_plane::ControlPlane;
use serde_json::{json, Value};

use crate::{cluster, cpu_and_rss, pct, per_resource};

/// The namespaces the generated pods and the churn use.
fn namespaces() -> Vec<String> {
    (0..7).map(|i| format!("ns-{i}")).chain(["ml".into(), "churn".into()]).collect()
}

/// The API path of an object's collection.
fn collection(o: &Value) -> anyhow::Result<String> {
    let ns = o["metadata"]["namespace"].as_str();
    Ok(match (o["kind"].as_str().unwrap_or(""), ns) {
        ("Node", _) => "/api/v1/nodes".into(),
        ("Namespace", _) => "/api/v1/namespaces".into(),
        ("RuntimeClass", _) => "/apis/node.k8s.io/v1/runtimeclasses".into(),
        ("Pod", Some(ns)) => format!("/api/v1/namespaces/{ns}/pods"),
        (kind, _) => bail!("the real benchmark does not create {kind}"),
    })
}

/// POSTs `objects`, `parallel` at a time; the number refused (already existing counts as made).
async fn create_all(
    http: &reqwest::Client,
    server: &str,
    objects: Vec<Value>,
    parallel: usize,
) -> anyhow::Result<usize> {
    let mut failed = 0;
    let mut reqs = futures::stream::iter(objects.into_iter().map(|o| {
        let (http, server) = (http.clone(), server.to_string());
        async move {
            let url = format!("{server}{}", collection(&o)?);
            // A refusal for too many requests (the API server's priority and fairness) is retried.
            for _ in 0..20 {
                let r = http.post(&url).json(&o).send().await?;
                let status = r.status().as_u16();
                if r.status().is_success() || status == 409 {
                    return Ok(());
                }
                let text = r.text().await.unwrap_or_default();
                if status != 429 && status < 500 {
                    bail!("{url}: {status} {}", text.chars().take(300).collect::<String>());
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            bail!("{url}: still refused after 20 tries")
        }
    }))
    .buffer_unordered(parallel);
    while let Some(r) = reqs.next().await {
        if let Err(e) = r {
            failed += 1;
            if failed <= 3 {
                eprintln!("create: {e:#}");
            }
        }
    }
    Ok(failed)
}

/// Items of a list, paged (`limit`/`continue`), as metadata only when `meta`.
async fn list(http: &reqwest::Client, server: &str, path: &str, meta: bool) -> anyhow::Result<Vec<Value>> {
    let mut items = Vec::new();
    let mut cont = String::new();
    for _ in 0..1000 {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut req = http.get(format!("{server}{path}{sep}limit=2000&continue={cont}"));
        if meta {
            req = req.header("accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
        }
        let page: Value = req.send().await?.error_for_status()?.json().await?;
        items.extend(page["items"].as_array().cloned().unwrap_or_default());
        cont = page["metadata"]["continue"].as_str().unwrap_or("").to_string();
        if cont.is_empty() {
            return Ok(items);
        }
    }
    bail!("{path}: more than 1000 pages")
}

/// Polls `ok` every `every` until it holds or `limit` passes; the seconds it took.
async fn wait_for<F, Fut>(what: &str, limit: Duration, every: Duration, mut ok: F) -> anyhow::Result<f64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t = Instant::now();
    while t.elapsed() < limit {
        if ok().await {
            return Ok(t.elapsed().as_secs_f64());
        }
        tokio::time::sleep(every).await;
    }
    bail!("{what}: not within {limit:?}")
}

/// One size on a fresh control plane; prints its rows.
pub async fn run(nodes: usize, client_counts: &[usize], rate: u32, secs: u64) -> anyhow::Result<()> {
    let plane = ControlPlane::start().await?;
    let http = plane.http_client()?;
    let server = plane.server.clone();
    let g = cluster::generate(nodes, 30);
    let mut setup = Vec::new();
    let mut node_objs = Vec::new();
    let mut pods = Vec::new();
    for mut o in g.objects {
        match o["kind"].as_str() {
            Some("Node") => {
                o["metadata"]["annotations"] = json!({"kwok.x-k8s.io/node": "fake"});
                node_objs.push(o);
            }
            Some("Pod") => {
                if let Some(m) = o.as_object_mut() {
                    m.remove("status");
                }
                pods.push(o);
            }
            Some("RuntimeClass") => setup.push(o),
            // The real scheduler writes its own events.
            _ => {}
        }
    }
    let generated_waiting = pods.iter().filter(|p| p["spec"]["nodeName"].is_null()).count();
    let objects = setup.len() + node_objs.len() + pods.len() + namespaces().len();
    setup.extend(
        namespaces().into_iter().map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}})),
    );
    let t = Instant::now();
    let mut failed = create_all(&http, &server, setup, 4).await?;
    // The ServiceAccount admission refuses pods until the namespace's default account exists.
    for ns in namespaces() {
        let url = format!("{server}/api/v1/namespaces/{ns}/serviceaccounts/default");
        wait_for(
            &format!("{ns}'s default ServiceAccount"),
            Duration::from_secs(60),
            Duration::from_millis(200),
            || {
                let r = http.get(&url).send();
                async move { r.await.is_ok_and(|r| r.status().is_success()) }
            },
        )
        .await?;
    }
    let patches: Vec<(String, Value)> = node_objs
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
            (name, json!({"status": {"capacity": n["status"]["capacity"], "allocatable": n["status"]["allocatable"]}}))
        })
        .collect();
    failed += create_all(&http, &server, node_objs, 8).await?;
    // The device plugin's report: capacity and allocatable by status patch, until every node
    // shows them (kwok's node stages keep what is there).
    for round in 0..10 {
        let have: HashMap<String, Value> = list(&http, &server, "/api/v1/nodes", false)
            .await?
            .into_iter()
            .map(|n| (n["metadata"]["name"].as_str().unwrap_or("").to_string(), n["status"]["allocatable"].clone()))
            .collect();
        let todo: Vec<&(String, Value)> =
            patches.iter().filter(|(n, p)| have.get(n) != Some(&p["status"]["allocatable"])).collect();
        if todo.is_empty() {
            break;
        }
        if round == 9 {
            bail!("{} nodes still without their GPU capacity after 10 rounds of status patches", todo.len());
        }
        let mut reqs = futures::stream::iter(todo.into_iter().map(|(name, p)| {
            http.patch(format!("{server}/api/v1/nodes/{name}/status"))
                .header("content-type", "application/merge-patch+json")
                .body(p.to_string())
                .send()
        }))
        .buffer_unordered(8);
        while reqs.next().await.is_some() {}
    }
    failed += create_all(&http, &server, pods, 8).await?;
    let created_s = t.elapsed().as_secs_f64();
    // kwok runs the bound pods: wait until only the waiting pods are not Running.
    let not_running = "/api/v1/pods?fieldSelector=status.phase!%3DRunning";
    let running_s = wait_for("kwok running every bound pod", Duration::from_secs(1800), Duration::from_secs(2), || {
        let (http, server) = (&http, &server);
        async move { list(http, server, not_running, true).await.is_ok_and(|l| l.len() <= generated_waiting) }
    })
    .await?;
    // The real scheduler has the last word on the waiting pods: wait until it has tried each,
    // then take the expected view from the API server, not from the generator.
    let unbound = "/api/v1/pods?fieldSelector=spec.nodeName%3D";
    wait_for("the scheduler trying every unbound pod", Duration::from_secs(300), Duration::from_secs(1), || {
        let (http, server) = (&http, &server);
        async move {
            list(http, server, unbound, false).await.is_ok_and(|l| {
                l.iter().all(|p| {
                    p["status"]["conditions"].as_array().into_iter().flatten().any(|c| c["type"] == "PodScheduled")
                })
            })
        }
    })
    .await?;
    let mut expected: HashMap<String, u64> = HashMap::new();
    let mut waiting = 0;
    for p in list(&http, &server, "/api/v1/pods", false).await? {
        let Some(node) = p["spec"]["nodeName"].as_str() else {
            waiting += 1;
            continue;
        };
        let gpus: u64 = p["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["resources"]["limits"].as_object().into_iter().flatten())
            .filter(|(r, _)| r.starts_with("nvidia.com/"))
            .filter_map(|(_, q)| q.as_str().and_then(|q| q.parse::<u64>().ok()))
            .sum();
        *expected.entry(node.to_string()).or_default() += gpus;
    }
    let populate_s = t.elapsed().as_secs_f64();
    eprintln!(
        "{nodes} nodes: {objects} objects created in {created_s:.1} s ({failed} refused), every bound pod Running {running_s:.1} s later"
    );

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
    // The first correct view: every node's allocated GPUs as the API server has them, every
    // waiting pod listed.
    let view: Arc<Mutex<Value>> = Arc::default();
    let last: Arc<Mutex<String>> = Arc::default();
    let matched =
        wait_for("gpudash's view to match the cluster", Duration::from_secs(300), Duration::from_millis(20), || {
            let (local, url, expected, view, last) = (&local, &url, &expected, view.clone(), last.clone());
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
    let first_view_s = t0.elapsed().as_secs_f64();
    let (_, idle_rss) = cpu_and_rss(pid, Duration::from_secs(3)).await;

    // The peer, on the same API server.
    let ours = per_resource(&view.lock().unwrap_or_else(|e| e.into_inner()));
    let (kc, label) = (plane.kubeconfig.clone(), format!("real {nodes}"));
    tokio::task::spawn_blocking(move || crate::peer(&kc, &ours, &label, first_view_s)).await?;

    // Probe numbers go on from one client count to the next: the probe node keeps its label, and
    // a client's first view must not hold a number the next run will send again.
    let mut seq_base = 0u64;
    for &clients in client_counts {
        let streams = crate::stream::Clients::spawn(&url, clients);
        let all_first_s = streams.wait_ready(Duration::from_secs(120)).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The API server's watch on the probe node: when each sequence number is delivered.
        let delivered: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
        let watch = {
            let (http, delivered) = (http.clone(), delivered.clone());
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
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        // Churn through the API server: every tenth change relabels the probe node; the rest
        // create and delete GPU pods that the real scheduler finds no room for.
        let sent: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
        let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let churn = {
            let (http, server, sent, errors, done) =
                (http.clone(), server.clone(), sent.clone(), errors.clone(), done.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate.max(1))));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                for i in 1u64.. {
                    tick.tick().await;
                    let req = if i % 10 == 0 {
                        let seq = seq_base + i / 10;
                        sent.lock().unwrap_or_else(|e| e.into_inner()).insert(seq, Instant::now());
                        http.patch(format!("{server}/api/v1/nodes/probe-node"))
                            .header("content-type", "application/merge-patch+json")
                            .body(json!({"metadata": {"labels": {"gpudash.dev/seq": seq.to_string()}}}).to_string())
                    } else if i % 2 == 0 {
                        let mut p =
                            cluster::pod("churn", &format!("churn-{}", i % 50), None, Some(("nvidia.com/gpu", 1)), 1);
                        if let Some(m) = p.as_object_mut() {
                            m.remove("status");
                        }
                        http.post(format!("{server}/api/v1/namespaces/churn/pods")).json(&p)
                    } else {
                        http.delete(format!("{server}/api/v1/namespaces/churn/pods/churn-{}", (i + 25) % 50))
                    };
                    let (errors, done) = (errors.clone(), done.clone());
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
        };
        let d = Duration::from_secs(secs);
        let other = |name| plane.pid(name).map(|p| cpu_and_rss(p, d));
        let (ours, api, kine) = tokio::join!(
            cpu_and_rss(pid, d),
            async {
                match other("kube-apiserver") {
                    Some(f) => f.await,
                    None => (f64::NAN, f64::NAN),
                }
            },
            async {
                match other("kine") {
                    Some(f) => f.await,
                    None => (f64::NAN, f64::NAN),
                }
            }
        );
        churn.abort();
        tokio::time::sleep(Duration::from_secs(1)).await;
        watch.abort();
        let served = done.load(std::sync::atomic::Ordering::Relaxed);
        let errs = errors.load(std::sync::atomic::Ordering::Relaxed);
        let delivered = delivered.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let sent = sent.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut from_watch = streams.latencies(&delivered);
        let mut from_write = streams.latencies(&sent);
        let probes = sent.len();
        seq_base = sent.keys().max().copied().unwrap_or(seq_base) + 1;
        eprintln!(
            "{nodes} nodes, {clients} clients: the benchmark's own API watch delivered {} of {probes} probes; clients saw {} of {} (probe, client) pairs",
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
        // Between client counts, the churn pods go, so each run starts from the same cluster.
        let _ = http.delete(format!("{server}/api/v1/namespaces/churn/pods")).send().await;
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    Ok(())
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
