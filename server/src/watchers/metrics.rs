//! The metrics.k8s.io poller (K3s bundles metrics-server): node and pod memory use, polled, as
//! the API offers no watch for it. Absent metrics are `None`, never zero.

use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use tokio::sync::Notify;

use super::liveness::SharedMetrics;
use crate::derive::{NodeMetrics, PodMetrics};

#[derive(Deserialize)]
pub(crate) struct MetricsList<T> {
    #[serde(default = "Vec::new")]
    items: Vec<T>,
}

pub(crate) async fn get_metrics<T: DeserializeOwned>(
    client: &Client,
    path: &str,
) -> Result<Option<Vec<T>>, kube::Error> {
    let req = http::Request::get(path).body(Vec::new()).map_err(kube::Error::HttpError)?;
    match client.request::<MetricsList<T>>(req).await {
        Ok(l) => Ok(Some(l.items)),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 503 => Ok(None),
        Err(e) => Err(e),
    }
}

pub(crate) fn spawn_metrics(client: Client, interval: Duration, metrics: SharedMetrics, notify: Arc<Notify>) {
    tokio::spawn(async move {
        let mut warned = false;
        loop {
            let nodes = get_metrics::<NodeMetrics>(&client, "/apis/metrics.k8s.io/v1beta1/nodes").await;
            let pods = get_metrics::<PodMetrics>(&client, "/apis/metrics.k8s.io/v1beta1/pods").await;
            let next = match (nodes, pods) {
                (Ok(n), Ok(p)) => {
                    warned = false;
                    // Shared with every derivation until the next poll (no copy per revision).
                    (n.map(Arc::new), p.map(Arc::new))
                }
                (Err(e), _) | (_, Err(e)) => {
                    if !warned {
                        tracing::warn!(error = %e, "metrics.k8s.io unavailable; memory use shown as unknown");
                        warned = true;
                    }
                    (None, None)
                }
            };
            *metrics.lock().unwrap_or_else(|e| e.into_inner()) = next;
            notify.notify_one();
            tokio::time::sleep(interval).await;
        }
    });
}
