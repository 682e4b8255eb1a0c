//! The gpudash-agent puller: finds agent pods among the pods already watched (label
//! `app.kubernetes.io/name=gpudash-agent` in the agents' namespace, Running, with an IP) and
//! pulls each one's report over HTTP. A failed pull keeps the last good report with its time,
//! so a silent agent is shown stale, never as zero.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Store;
use tokio::sync::Notify;

use crate::agent::{self, AgentSeen};
use crate::pod::Pod;

/// Node name → what its agent last said.
pub(crate) type SharedAgents = Arc<Mutex<BTreeMap<String, Arc<AgentSeen>>>>;

/// Where and how often agents are pulled.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The namespace agent pods run in.
    pub namespace: String,
    /// Time between pulls.
    pub interval: Duration,
}

/// The port the agent serves on unless its pod names a `report` port.
const DEFAULT_PORT: i32 = 9401;

/// (node, `namespace/name`, report URL) of each agent pod that can be pulled.
fn targets(pods: &[Arc<Pod>], namespace: &str) -> Vec<(String, String, String)> {
    pods.iter()
        .filter(|p| p.is_agent() && p.metadata.namespace.as_deref() == Some(namespace))
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .filter_map(|p| {
            let node = p.spec.as_ref()?.node_name.clone()?;
            let ip = p.status.as_ref()?.pod_ip.clone()?;
            let containers = p.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
            let ports = || containers.iter().flat_map(|c| c.ports.iter());
            let port = ports()
                .find(|x| x.name.as_deref() == Some("report"))
                .or_else(|| ports().next())
                .map_or(DEFAULT_PORT, |x| x.container_port);
            let host = if ip.contains(':') { format!("[{ip}]") } else { ip };
            let pod = format!("{namespace}/{}", p.metadata.name.as_deref().unwrap_or(""));
            Some((node, pod, format!("http://{host}:{port}/v1/report")))
        })
        .collect()
}

/// The largest report taken from an agent; a real one is a few KiB.
pub(crate) const MAX_REPORT: usize = 4 << 20;

async fn pull(client: &reqwest::Client, url: &str) -> Result<agent::Report, String> {
    let mut r = client.get(url).send().await.map_err(|e| format!("{url}: {}", e.without_url()))?;
    if !r.status().is_success() {
        return Err(format!("{url} answered {}", r.status()));
    }
    let too_big = |n: String| format!("{url}: a report of {n} bytes is not an agent's (at most {MAX_REPORT})");
    if let Some(len) = r.content_length().filter(|l| *l > MAX_REPORT as u64) {
        return Err(too_big(len.to_string()));
    }
    // Read no further than the cap, whatever the peer says its length is.
    let mut body = Vec::new();
    while let Some(chunk) = r.chunk().await.map_err(|e| format!("{url}: {}", e.without_url()))? {
        if body.len() + chunk.len() > MAX_REPORT {
            return Err(too_big(format!("more than {}", body.len() + chunk.len())));
        }
        body.extend_from_slice(&chunk);
    }
    agent::parse(&body).map_err(|e| format!("{url}: {e}"))
}

/// Pulls every agent each `interval`, for as long as the stores live.
pub(crate) fn spawn_agents(pods: Store<Pod>, settings: AgentSettings, agents: SharedAgents, notify: Arc<Notify>) {
    tokio::spawn(async move {
        let timeout = settings.interval.clamp(Duration::from_secs(1), Duration::from_secs(5));
        let client = match reqwest::Client::builder().timeout(timeout).no_proxy().build() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "cannot build the agent HTTP client: agents are not pulled");
                return;
            }
        };
        let mut warned: BTreeMap<String, String> = BTreeMap::new();
        loop {
            let found = targets(&pods.state(), &settings.namespace);
            let pulls = found.iter().map(|(_, _, url)| pull(&client, url));
            let results = futures::future::join_all(pulls).await;
            let now = jiff::Timestamp::now();
            let mut next: BTreeMap<String, Arc<AgentSeen>> = BTreeMap::new();
            {
                let prev = agents.lock().unwrap_or_else(|e| e.into_inner());
                for ((node, pod, _), got) in found.into_iter().zip(results) {
                    let old = prev.get(&node).filter(|o| o.pod == pod);
                    let seen = match got {
                        Ok(report) => {
                            if warned.remove(&pod).is_some() {
                                tracing::info!(%pod, %node, "gpudash-agent answers again");
                            }
                            AgentSeen { node: node.clone(), pod, report: Some(report), last_ok: Some(now), error: None }
                        }
                        Err(e) => {
                            if warned.get(&pod) != Some(&e) {
                                tracing::warn!(%pod, %node, error = %e, "gpudash-agent did not answer; its node's use is shown stale");
                                warned.insert(pod.clone(), e.clone());
                            }
                            AgentSeen {
                                node: node.clone(),
                                pod,
                                report: old.and_then(|o| o.report.clone()),
                                last_ok: old.and_then(|o| o.last_ok),
                                error: Some(e),
                            }
                        }
                    };
                    // Two agent pods on one node (a rollout): the one that answered wins.
                    if next.get(&node).is_none_or(|n| n.error.is_some()) {
                        next.insert(node, Arc::new(seen));
                    }
                }
            }
            *agents.lock().unwrap_or_else(|e| e.into_inner()) = next;
            notify.notify_one();
            tokio::time::sleep(settings.interval).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Arc<Pod> {
        let mut p: Pod = serde_json::from_value(json).unwrap_or_default();
        p.strip();
        Arc::new(p)
    }

    /// A peer posing as an agent that answers a GiB: with a Content-Length, or chunked without.
    async fn huge_peer(declared: bool) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/report", l.local_addr().unwrap());
        tokio::spawn(async move {
            let Ok((mut s, _)) = l.accept().await else { return };
            let mut req = [0u8; 4096];
            let _ = s.read(&mut req).await;
            let head = if declared {
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"
            } else {
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            };
            if s.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let block = vec![b' '; 1 << 16];
            let mut chunk = format!("{:x}\r\n", block.len()).into_bytes();
            chunk.extend_from_slice(&block);
            chunk.extend_from_slice(b"\r\n");
            // At most a GiB; the writes fail once the puller hangs up.
            for _ in 0..(1 << 14) {
                let w = if declared { s.write_all(&block).await } else { s.write_all(&chunk).await };
                if w.is_err() {
                    return;
                }
            }
        });
        url
    }

    #[tokio::test]
    async fn a_reply_past_the_cap_is_refused_without_reading_it_all() {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).no_proxy().build().unwrap();
        for declared in [true, false] {
            let url = huge_peer(declared).await;
            let t = std::time::Instant::now();
            let e = pull(&client, &url).await.err().unwrap_or_default();
            assert!(e.contains("is not an agent's"), "{declared}: {e}");
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{declared}: stopped at the cap, not after a GiB: {:?}",
                t.elapsed()
            );
            if declared {
                assert!(e.contains("1073741824"), "{e}");
            }
        }
    }

    #[test]
    fn agent_pods_are_found_by_label_namespace_and_phase() {
        let agent = |name: &str, ns: &str, phase: &str, ip: &str| {
            pod(serde_json::json!({
                "metadata": {"name": name, "namespace": ns, "labels": {"app.kubernetes.io/name": "gpudash-agent"}},
                "spec": {"nodeName": "n1", "containers": [{"name": "agent", "ports": [{"name": "report", "containerPort": 9555}]}]},
                "status": {"phase": phase, "podIP": ip}
            }))
        };
        let other = pod(serde_json::json!({
            "metadata": {"name": "x", "namespace": "gpudash", "labels": {"app": "x"}},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "ports": [{"containerPort": 80}]}]},
            "status": {"phase": "Running", "podIP": "10.0.0.9"}
        }));
        assert!(other.status.as_ref().is_some_and(|s| s.pod_ip.is_none()), "other pods' IPs are not kept");
        let pods = vec![
            agent("a", "gpudash", "Running", "10.42.0.7"),
            agent("b", "elsewhere", "Running", "10.42.0.8"),
            agent("c", "gpudash", "Pending", "10.42.0.9"),
            agent("d", "gpudash", "Running", "fd00::7"),
            other,
        ];
        let t = targets(&pods, "gpudash");
        let urls: Vec<&str> = t.iter().map(|x| x.2.as_str()).collect();
        assert_eq!(urls, ["http://10.42.0.7:9555/v1/report", "http://[fd00::7]:9555/v1/report"]);
        assert_eq!(t[0].1, "gpudash/a");
    }
}
