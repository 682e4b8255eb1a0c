//! One kube-rs watcher per kind, each feeding a reflector store, plus a metrics.k8s.io poller.
//! Handlers and the derivation read the stores; nothing here writes to the cluster — the only
//! requests are GET (list, watch, get).

mod liveness;
mod metrics;
mod reconnect;
mod strip;

use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Event, Node, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::runtime::reflector::{self, Store};
use kube::runtime::utils::Backoff as _;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

pub use liveness::WatchState;
use liveness::{Seen, SharedMetrics};
use metrics::spawn_metrics;
use reconnect::Reconnect;
use strip::{strip_event, strip_node, strip_pod, strip_quota, strip_rc, strip_rs};

use crate::derive::Inputs;
use crate::pod::Pod;

/// The stores the derivation reads.
#[derive(Clone)]
pub struct Stores {
    nodes: Store<Node>,
    pods: Store<Pod>,
    events: Store<Event>,
    runtime_classes: Store<RuntimeClass>,
    replica_sets: Store<ReplicaSet>,
    quotas: Store<ResourceQuota>,
    metrics: SharedMetrics,
    /// Watch health.
    pub state: Arc<WatchState>,
}

impl Stores {
    /// A consistent-enough snapshot of every store for one derivation.
    pub fn inputs(&self) -> Inputs {
        let m = self.metrics.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Inputs {
            nodes: self.nodes.state(),
            pods: self.pods.state(),
            events: self.events.state(),
            runtime_classes: self.runtime_classes.state(),
            replica_sets: self.replica_sets.state(),
            quotas: self.quotas.state(),
            node_metrics: m.0,
            pod_metrics: m.1,
        }
    }
}

fn spawn_kind<K>(
    state: &Arc<WatchState>,
    name: &'static str,
    api: Api<K>,
    cfg: watcher::Config,
    strip: fn(&mut K),
) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let idx = state.register(name);
    let (reader, writer) = reflector::store();
    let stream = watcher(api, cfg).modify(strip).reflect(writer);
    let state = state.clone();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        let mut backoff = Reconnect::default();
        while let Some(ev) = stream.next().await {
            let seen = match ev {
                Ok(watcher::Event::Init) => Seen::Init,
                Ok(watcher::Event::InitApply(_)) => Seen::InitApply,
                Ok(watcher::Event::InitDone) => Seen::InitDone,
                Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) => Seen::Change,
                Err(e) => Seen::Error(e),
            };
            let pause = match &seen {
                // 410 Gone is the server's "list again", not a failure: relist at once.
                Seen::Error(watcher::Error::WatchError(s)) if s.code == 410 => None,
                Seen::Error(_) => backoff.next(),
                _ => {
                    backoff.reset();
                    None
                }
            };
            state.on(idx, seen);
            if let Some(d) = pause {
                tokio::time::sleep(d).await;
            }
        }
    });
    reader
}

/// The Kubernetes client, with the liveness layer reporting to `state`.
pub fn client(mut cfg: kube::Config, state: &Arc<WatchState>) -> Result<Client, kube::Error> {
    // The client's own retry of 429/503/504 (up to 15 times, minutes in all) would hide an API
    // server outage from the watchers, so the view would not say it is stale. The watchers
    // retry with their own backoff, reset on success.
    cfg.default_retry = false;
    let st = state.clone();
    let beat: crate::heartbeat::Beat = Arc::new(move |res: &str, sig| st.heard(res, sig));
    Ok(kube::client::ClientBuilder::try_from(cfg)?.with_layer(&crate::heartbeat::HeartbeatLayer(beat)).build())
}

/// Starts every watcher, the metrics poller and the stall check.
pub fn start(client: Client, state: Arc<WatchState>, metrics_interval: Duration) -> Stores {
    // Each watch ends at its timeout and is re-opened, so a healthy server is heard from at
    // least that often (bookmarks and events come more often); a silence longer than the
    // stall limit means a stalled server or a half-open connection.
    let timeout = u32::try_from((state.stall_after.as_secs() * 2 / 3).max(1)).unwrap_or(20);
    let cfg = watcher::Config::default().timeout(timeout);
    let checker = Arc::downgrade(&state);
    let period = (state.stall_after / 10).clamp(Duration::from_millis(100), Duration::from_secs(1));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(period).await;
            match checker.upgrade() {
                Some(s) => s.check_silence(),
                None => return,
            }
        }
    });
    let nodes = spawn_kind(&state, "nodes", Api::<Node>::all(client.clone()), cfg.clone(), strip_node);
    let pods = spawn_kind(&state, "pods", Api::<Pod>::all(client.clone()), cfg.clone(), strip_pod);
    // Only warnings carry the reasons gpudash reads (FailedScheduling, FailedCreate, …).
    let events = spawn_kind(
        &state,
        "events",
        Api::<Event>::all(client.clone()),
        cfg.clone().fields("type=Warning"),
        strip_event,
    );
    let runtime_classes =
        spawn_kind(&state, "runtimeclasses", Api::<RuntimeClass>::all(client.clone()), cfg.clone(), strip_rc);
    let replica_sets = spawn_kind(&state, "replicasets", Api::<ReplicaSet>::all(client.clone()), cfg.clone(), strip_rs);
    let quotas = spawn_kind(&state, "resourcequotas", Api::<ResourceQuota>::all(client.clone()), cfg, strip_quota);
    let metrics = Arc::new(Mutex::new((None, None)));
    spawn_metrics(client, metrics_interval, metrics.clone(), state.notify.clone());
    Stores { nodes, pods, events, runtime_classes, replica_sets, quotas, metrics, state }
}
