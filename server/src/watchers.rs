//! One kube-rs watcher per kind, each feeding a reflector store, plus a metrics.k8s.io poller.
//! Handlers and the derivation read the stores; nothing here writes to the cluster — the only
//! requests are GET (list, watch, get).

use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Event, Node};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::runtime::reflector::{self, Store};
use kube::runtime::utils::Backoff as _;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use tokio::sync::Notify;

use crate::derive::{Inputs, NodeMetrics, PodMetrics};
use crate::pod::Pod;
use app::model::{Source, SourceMode, SyncProgress};

/// One watched kind's health.
#[derive(Debug, Clone, Default)]
struct KindState {
    name: &'static str,
    synced: bool,
    seen: u64,
    stale_since: Option<jiff::Timestamp>,
    error: Option<String>,
    /// When the API server last sent anything for this kind (see [`crate::heartbeat`]).
    heard: Option<(Instant, jiff::Timestamp)>,
    /// Set while the kind's watch has been silent for longer than the stall limit: the time it
    /// was last heard from.
    silent_since: Option<jiff::Timestamp>,
}

/// The latest metrics.k8s.io lists (None: not available).
type SharedMetrics = Arc<Mutex<(Option<Vec<NodeMetrics>>, Option<Vec<PodMetrics>>)>>;

/// What the watchers report; read to build the status line.
#[derive(Debug)]
pub struct WatchState {
    kinds: Mutex<Vec<KindState>>,
    /// Woken on every change; the derivation loop coalesces.
    pub notify: Arc<Notify>,
    mode: SourceMode,
    server: String,
    /// A watch silent for longer than this is stalled.
    stall_after: Duration,
}

/// What a watcher saw, reduced to what the state needs.
enum Seen {
    Init,
    InitApply,
    InitDone,
    Change,
    Error(watcher::Error),
}

impl WatchState {
    /// The state for a source; `stall_after` is how long a watch may stay silent.
    pub fn new(mode: SourceMode, server: String, stall_after: Duration) -> Arc<Self> {
        Arc::new(Self { kinds: Mutex::new(Vec::new()), notify: Arc::new(Notify::new()), mode, server, stall_after })
    }

    /// The API server answered or spoke for `resource` (its plural name).
    fn heard(&self, resource: &str, signal: crate::heartbeat::Signal) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let Some(k) = kinds.iter_mut().find(|k| k.name == resource) else { return };
        let mut changed = false;
        match signal {
            crate::heartbeat::Signal::Spoke => {
                k.heard = Some((Instant::now(), jiff::Timestamp::now()));
                if k.silent_since.take().is_some() {
                    tracing::info!(kind = k.name, "watch is receiving again");
                    changed = true;
                }
            }
            // A watch re-opened after a failure: the server is back, and the stream replays
            // what changed since the last version seen (or says 410, and the kind relists).
            crate::heartbeat::Signal::Answered => {
                if k.synced && k.error.take().is_some() {
                    tracing::info!(kind = k.name, "watch re-opened");
                    k.stale_since = None;
                    changed = true;
                }
            }
        }
        drop(kinds);
        if changed {
            self.notify.notify_one();
        }
    }

    /// Marks kinds whose watch has been silent for longer than the limit.
    fn check_silence(&self) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = false;
        for k in kinds.iter_mut().filter(|k| k.synced && k.silent_since.is_none()) {
            if let Some((at, ts)) = k.heard.filter(|(at, _)| at.elapsed() > self.stall_after) {
                tracing::warn!(
                    kind = k.name,
                    silent_s = at.elapsed().as_secs(),
                    "watch stalled: nothing from the API server"
                );
                k.silent_since = Some(ts);
                changed = true;
            }
        }
        drop(kinds);
        if changed {
            self.notify.notify_one();
        }
    }

    fn register(&self, name: &'static str) -> usize {
        let mut k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        k.push(KindState { name, ..KindState::default() });
        k.len() - 1
    }

    fn on(&self, idx: usize, seen: Seen) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let Some(k) = kinds.get_mut(idx) else { return };
        match seen {
            Seen::Init => k.seen = 0,
            Seen::InitApply => k.seen += 1,
            Seen::InitDone => {
                k.synced = true;
                k.stale_since = None;
                k.error = None;
                k.silent_since = None;
            }
            Seen::Change => {
                k.seen += 1;
                if k.synced {
                    k.stale_since = None;
                    k.error = None;
                }
            }
            Seen::Error(e) => {
                let e = e.to_string();
                if k.error.is_none() {
                    tracing::warn!(kind = k.name, error = %e, "watch failed; retrying with backoff");
                }
                k.stale_since.get_or_insert_with(jiff::Timestamp::now);
                k.error = Some(e);
            }
        }
        drop(kinds);
        self.notify.notify_one();
    }

    /// Whether every kind finished its first list.
    pub fn synced(&self) -> bool {
        let k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        !k.is_empty() && k.iter().all(|k| k.synced)
    }

    /// The source block of the ClusterView.
    pub fn source(&self) -> Source {
        let k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let stale = k.iter().flat_map(|k| [k.stale_since, k.silent_since]).flatten().min();
        let silent = |k: &KindState| {
            k.silent_since.map(|_| {
                format!(
                    "{}: watch stalled — nothing from the API server for over {} s",
                    k.name,
                    self.stall_after.as_secs()
                )
            })
        };
        Source {
            mode: self.mode,
            synced: !k.is_empty() && k.iter().all(|k| k.synced),
            stale_since: stale.map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string()),
            error: k.iter().find_map(|k| k.error.as_ref().map(|e| format!("{}: {e}", k.name)).or_else(|| silent(k))),
            server: self.server.clone(),
            progress: SyncProgress {
                kinds_synced: u32::try_from(k.iter().filter(|k| k.synced).count()).unwrap_or(0),
                kinds_total: u32::try_from(k.len()).unwrap_or(0),
                objects: k.iter().map(|k| k.seen).sum(),
            },
        }
    }
}

/// The stores the derivation reads.
#[derive(Clone)]
pub struct Stores {
    nodes: Store<Node>,
    pods: Store<Pod>,
    events: Store<Event>,
    runtime_classes: Store<RuntimeClass>,
    replica_sets: Store<ReplicaSet>,
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

/// The watchers' retry delays: 250 ms doubling to 4 s, back to 250 ms after any success, with a
/// little jitter so that the kinds do not retry in lockstep (a 410 Gone relists at once).
/// kube-rs' default (800 ms doubling to 30 s, reset only after two quiet minutes, the same for
/// a 410) took over 10 s to follow an API server back after a 2.5 s restart; five watches
/// retrying every 4 s at worst cost a K3s server nothing.
#[derive(Debug, Clone)]
struct Reconnect {
    next: Duration,
}

impl Reconnect {
    const MIN: Duration = Duration::from_millis(250);
    const MAX: Duration = Duration::from_secs(4);
}

impl Default for Reconnect {
    fn default() -> Self {
        Self { next: Self::MIN }
    }
}

impl Iterator for Reconnect {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        let d = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        // Up to 10 % jitter, from the clock's nanoseconds.
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|t| t.subsec_nanos());
        Some(d + d / 10 * (nanos.unwrap_or(0) % 100) / 100)
    }
}

impl kube::runtime::utils::Backoff for Reconnect {
    fn reset(&mut self) {
        self.next = Self::MIN;
    }
}

fn strip_node(n: &mut Node) {
    n.managed_fields_mut().clear();
    if let Some(a) = n.metadata.annotations.as_mut() {
        a.retain(|k, _| k == crate::derive::node::UNIFIED_OVERRIDE || k == crate::derive::node::K3S_NODE_ARGS);
    }
    if let Some(s) = n.status.as_mut() {
        s.images = None;
        s.volumes_attached = None;
        s.volumes_in_use = None;
    }
}

/// Pods arrive projected ([`crate::pod`]); [`Pod::strip`] drops the rest that is never read.
fn strip_pod(p: &mut Pod) {
    p.strip();
}

fn strip_event(e: &mut Event) {
    e.managed_fields_mut().clear();
}

fn strip_rs(r: &mut ReplicaSet) {
    r.managed_fields_mut().clear();
    r.metadata.annotations = None;
    if let Some(t) = r.spec.as_mut().and_then(|s| s.template.as_mut()) {
        t.metadata = None;
        if let Some(ps) = t.spec.as_mut() {
            ps.volumes = None;
            for c in &mut ps.containers {
                c.env = None;
                c.command = None;
                c.args = None;
            }
        }
    }
}

fn strip_rc(r: &mut RuntimeClass) {
    r.managed_fields_mut().clear();
}

#[derive(Deserialize)]
struct MetricsList<T> {
    #[serde(default = "Vec::new")]
    items: Vec<T>,
}

async fn get_metrics<T: DeserializeOwned>(client: &Client, path: &str) -> Result<Option<Vec<T>>, kube::Error> {
    let req = http::Request::get(path).body(Vec::new()).map_err(kube::Error::HttpError)?;
    match client.request::<MetricsList<T>>(req).await {
        Ok(l) => Ok(Some(l.items)),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 503 => Ok(None),
        Err(e) => Err(e),
    }
}

fn spawn_metrics(client: Client, interval: Duration, metrics: SharedMetrics, notify: Arc<Notify>) {
    tokio::spawn(async move {
        let mut warned = false;
        loop {
            let nodes = get_metrics::<NodeMetrics>(&client, "/apis/metrics.k8s.io/v1beta1/nodes").await;
            let pods = get_metrics::<PodMetrics>(&client, "/apis/metrics.k8s.io/v1beta1/pods").await;
            let next = match (nodes, pods) {
                (Ok(n), Ok(p)) => {
                    warned = false;
                    (n, p)
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
    let replica_sets = spawn_kind(&state, "replicasets", Api::<ReplicaSet>::all(client.clone()), cfg, strip_rs);
    let metrics = Arc::new(Mutex::new((None, None)));
    spawn_metrics(client, metrics_interval, metrics.clone(), state.notify.clone());
    Stores { nodes, pods, events, runtime_classes, replica_sets, metrics, state }
}
