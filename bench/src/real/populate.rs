//! Populating the real control plane with the generated cluster: objects created through the
//! API server, nodes given their GPU capacity as the device plugin reports it, and the wait
//! until the scheduler, the controllers and kwok have acted.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use serde_json::{json, Value};

use crate::cluster;

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
pub(super) async fn wait_for<F, Fut>(what: &str, limit: Duration, every: Duration, mut ok: F) -> anyhow::Result<f64>
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

/// The generated cluster as the API server has it once populated: what each node's pods hold
/// and how many pods wait, as the real scheduler left them.
pub(super) struct Populated {
    pub(super) objects: usize,
    pub(super) populate_s: f64,
    pub(super) expected: HashMap<String, u64>,
    pub(super) waiting: usize,
}

/// The generated objects by what is done with them: the namespaced setup (RuntimeClass), the
/// nodes (for kwok) and the pods (without status: the API server and kwok write it).
fn sort_objects(objects: Vec<Value>) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let (mut setup, mut node_objs, mut pods) = (Vec::new(), Vec::new(), Vec::new());
    for mut o in objects {
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
    (setup, node_objs, pods)
}

/// Waits for each namespace's default ServiceAccount: its admission refuses pods until then.
async fn wait_service_accounts(http: &reqwest::Client, server: &str) -> anyhow::Result<()> {
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
    Ok(())
}

/// The device plugin's report: capacity and allocatable by status patch, until every node
/// shows them (kwok's node stages keep what is there).
async fn report_gpu_capacity(http: &reqwest::Client, server: &str, patches: &[(String, Value)]) -> anyhow::Result<()> {
    for round in 0..10 {
        let have: HashMap<String, Value> = list(http, server, "/api/v1/nodes", false)
            .await?
            .into_iter()
            .map(|n| (n["metadata"]["name"].as_str().unwrap_or("").to_string(), n["status"]["allocatable"].clone()))
            .collect();
        let todo: Vec<&(String, Value)> =
            patches.iter().filter(|(n, p)| have.get(n) != Some(&p["status"]["allocatable"])).collect();
        if todo.is_empty() {
            return Ok(());
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
    Ok(())
}

/// Waits until kwok runs every bound pod and the real scheduler has tried each unbound one; the
/// seconds until the first.
async fn wait_settled(http: &reqwest::Client, server: &str, generated_waiting: usize) -> anyhow::Result<f64> {
    let not_running = "/api/v1/pods?fieldSelector=status.phase!%3DRunning";
    let running_s =
        wait_for("kwok running every bound pod", Duration::from_secs(1800), Duration::from_secs(2), || async move {
            list(http, server, not_running, true).await.is_ok_and(|l| l.len() <= generated_waiting)
        })
        .await?;
    let unbound = "/api/v1/pods?fieldSelector=spec.nodeName%3D";
    wait_for(
        "the scheduler trying every unbound pod",
        Duration::from_secs(300),
        Duration::from_secs(1),
        || async move {
            list(http, server, unbound, false).await.is_ok_and(|l| {
                l.iter().all(|p| {
                    p["status"]["conditions"].as_array().into_iter().flatten().any(|c| c["type"] == "PodScheduled")
                })
            })
        },
    )
    .await?;
    Ok(running_s)
}

/// The GPU units each node's pods hold and the number of pods waiting, as the API server has
/// them (the real scheduler has the last word, not the generator).
async fn expected_view(http: &reqwest::Client, server: &str) -> anyhow::Result<(HashMap<String, u64>, usize)> {
    let mut expected: HashMap<String, u64> = HashMap::new();
    let mut waiting = 0;
    for p in list(http, server, "/api/v1/pods", false).await? {
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
    Ok((expected, waiting))
}

/// Creates the generated cluster of `nodes` nodes through the API server and waits until the
/// scheduler, the controllers and kwok have acted on it.
pub(super) async fn populate(http: &reqwest::Client, server: &str, nodes: usize) -> anyhow::Result<Populated> {
    let (mut setup, node_objs, pods) = sort_objects(cluster::generate(nodes, 30).objects);
    let generated_waiting = pods.iter().filter(|p| p["spec"]["nodeName"].is_null()).count();
    let objects = setup.len() + node_objs.len() + pods.len() + namespaces().len();
    setup.extend(
        namespaces().into_iter().map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}})),
    );
    let t = Instant::now();
    let mut failed = create_all(http, server, setup, 4).await?;
    wait_service_accounts(http, server).await?;
    let patches: Vec<(String, Value)> = node_objs
        .iter()
        .map(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
            (name, json!({"status": {"capacity": n["status"]["capacity"], "allocatable": n["status"]["allocatable"]}}))
        })
        .collect();
    failed += create_all(http, server, node_objs, 8).await?;
    report_gpu_capacity(http, server, &patches).await?;
    failed += create_all(http, server, pods, 8).await?;
    let created_s = t.elapsed().as_secs_f64();
    let running_s = wait_settled(http, server, generated_waiting).await?;
    let (expected, waiting) = expected_view(http, server).await?;
    let populate_s = t.elapsed().as_secs_f64();
    eprintln!(
        "{nodes} nodes: {objects} objects created in {created_s:.1} s ({failed} refused), every bound pod Running {running_s:.1} s later"
    );
    Ok(Populated { objects, populate_s, expected, waiting })
}
