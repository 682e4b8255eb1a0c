//! One kube-rs watcher per kind (pods: a list in protobuf and kube-rs' watch, see `pods`), each
//! feeding a store (`store`: the objects as decoded, not copies), plus a metrics.k8s.io poller.
//! Handlers and the derivation read the stores; nothing here writes to the cluster — the only
//! requests are GET (list, watch, get).

mod agents;
mod json_list;
mod liveness;
mod metrics;
mod pod_wire;
mod pods;
mod reconnect;
mod store;
mod strip;

use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Node, ResourceQuota};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::runtime::utils::Backoff as _;
use kube::runtime::watcher;
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

pub use agents::AgentSettings;
use agents::{spawn_agents, SharedAgents};
pub(crate) use liveness::Seen;
use liveness::SharedMetrics;
pub use liveness::WatchState;
use metrics::spawn_metrics;
pub use pods::list_all as list_pods;
use reconnect::Reconnect;
use store::{store, Store, Writer};
use strip::{strip_deploy, strip_ds, strip_event, strip_node, strip_pod, strip_quota, strip_rc, strip_rs};

use crate::derive::Inputs;
use crate::dra::{DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice};
use crate::pod::Pod;

/// The stores the derivation reads.
#[derive(Clone)]
pub struct Stores {
    nodes: Store<Node>,
    pods: Store<Pod>,
    events: Store<Event>,
    /// The scheduler's `Preempted` events (Normal: the one kind of Normal event watched).
    preemptions: Store<Event>,
    runtime_classes: Store<RuntimeClass>,
    replica_sets: Store<ReplicaSet>,
    deployments: Store<Deployment>,
    daemon_sets: Store<DaemonSet>,
    quotas: Store<ResourceQuota>,
    dra: DraStores,
    metrics: SharedMetrics,
    agents: SharedAgents,
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
            events: {
                let mut e = self.events.state();
                e.extend(self.preemptions.state());
                e
            },
            runtime_classes: self.runtime_classes.state(),
            replica_sets: self.replica_sets.state(),
            deployments: self.deployments.state(),
            daemon_sets: self.daemon_sets.state(),
            quotas: self.quotas.state(),
            node_metrics: m.0,
            pod_metrics: m.1,
            slices: self.dra.slices.state(),
            claims: self.dra.claims.state(),
            claim_templates: self.dra.templates.state(),
            device_classes: self.dra.classes.state(),
            agents: self.agents.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect(),
        }
    }
}

/// The Dynamic Resource Allocation stores: empty until the API server is found to serve
/// `resource.k8s.io/v1` (1.34 and later), and for good on older servers.
#[derive(Clone)]
struct DraStores {
    slices: Store<ResourceSlice>,
    claims: Store<ResourceClaim>,
    templates: Store<ResourceClaimTemplate>,
    classes: Store<DeviceClass>,
}

/// How often an API server without `resource.k8s.io/v1` is asked again (it may be upgraded).
const DRA_RECHECK: Duration = Duration::from_secs(300);

/// Starts the DRA watchers once the group is served; until then (and on servers that never
/// serve it) the stores stay empty and nothing is marked stale.
fn start_dra(client: Client, state: Arc<WatchState>, cfg: watcher::Config) -> DraStores {
    let (slices, w_slices) = store(ResourceSlice::strip);
    let (claims, w_claims) = store(ResourceClaim::strip);
    let (templates, w_templates) = store(ResourceClaimTemplate::strip);
    let (classes, w_classes) = store(DeviceClass::strip);
    // Registered now, so that the view is not called synced before the DRA objects are in
    // (a GPU node would be told it lacks a device plugin for a moment); marked synced, empty,
    // where the group is not served.
    let kinds =
        ["resourceslices", "resourceclaims", "resourceclaimtemplates", "deviceclasses"].map(|k| state.register(k));
    tokio::spawn(async move {
        let gv = format!("{}/{}", crate::dra::GROUP, crate::dra::VERSION);
        let mut backoff = Reconnect::default();
        let mut said = false;
        loop {
            let absent = match client.list_api_group_resources(&gv).await {
                Ok(list) if list.resources.iter().any(|r| r.name == "resourceslices") => break,
                Ok(_) => Some(format!("{gv} is served without resourceslices: no DRA devices shown")),
                Err(kube::Error::Api(e)) if e.code == 404 => {
                    Some(format!("{gv} is not served (Kubernetes before 1.34): no DRA devices shown"))
                }
                Err(e) => {
                    let pause = backoff.next().unwrap_or(Duration::from_secs(30));
                    tracing::debug!(error = %e, "asking for {gv} failed; asking again in {pause:?}");
                    tokio::time::sleep(pause).await;
                    None
                }
            };
            if let Some(why) = absent {
                if !said {
                    tracing::info!("{why}");
                    said = true;
                }
                for idx in kinds {
                    state.on(idx, Seen::InitDone);
                }
                tokio::time::sleep(DRA_RECHECK).await;
            }
        }
        tracing::info!("{gv} is served: watching ResourceSlices, ResourceClaims, templates and DeviceClasses");
        let [i_slices, i_claims, i_templates, i_classes] = kinds;
        run_kind(&state, i_slices, Api::<ResourceSlice>::all(client.clone()), cfg.clone(), w_slices);
        run_kind(&state, i_claims, Api::<ResourceClaim>::all(client.clone()), cfg.clone(), w_claims);
        run_kind(&state, i_templates, Api::<ResourceClaimTemplate>::all(client.clone()), cfg.clone(), w_templates);
        run_kind(&state, i_classes, Api::<DeviceClass>::all(client), cfg, w_classes);
    });
    DraStores { slices, claims, templates, classes }
}

fn spawn_kind<K>(
    state: &Arc<WatchState>,
    name: &'static str,
    api: Api<K>,
    cfg: watcher::Config,
    strip: fn(&mut K),
) -> Store<K>
where
    K: Resource<DynamicType = ()> + Clone + PartialEq + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let (reader, writer) = store(strip);
    run_kind(state, state.register(name), api, cfg, writer);
    reader
}

fn run_kind<K>(state: &Arc<WatchState>, idx: usize, api: Api<K>, cfg: watcher::Config, writer: Writer<K>)
where
    K: Resource<DynamicType = ()> + Clone + PartialEq + DeserializeOwned + Debug + Send + Sync + 'static,
{
    run_stream(state, idx, watcher(api, cfg), writer);
}

/// Feeds a store from a list-then-watch stream and reports what it sees to `state`.
fn run_stream<K, S>(state: &Arc<WatchState>, idx: usize, events: S, mut writer: Writer<K>)
where
    K: Resource<DynamicType = ()> + Clone + PartialEq + Debug + Send + Sync + 'static,
    S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
{
    let state = state.clone();
    tokio::spawn(async move {
        let mut events = std::pin::pin!(events);
        let mut backoff = Reconnect::default();
        while let Some(ev) = events.next().await {
            let seen = writer.apply(ev);
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
}

/// A pod as its store keeps it: stripped, with its facts computed here, on the watcher's task
/// beside the list being read, rather than by the first derivation, which waits for every pod.
fn prepare_pod(p: &mut Pod) {
    strip_pod(p);
    let _ = p.facts();
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

/// Starts every watcher, the metrics poller, the agent puller and the stall check.
pub fn start(client: Client, state: Arc<WatchState>, metrics_interval: Duration, agents: AgentSettings) -> Stores {
    let agent_settings = agents;
    // Each watch ends at its timeout and is re-opened, so a healthy server is heard from at
    // least that often (bookmarks and events come more often); a silence longer than the
    // stall limit means a stalled server or a half-open connection.
    let timeout = u32::try_from((state.stall_after.as_secs() * 2 / 3).max(1)).unwrap_or(20);
    // "Not older than" lists. Note that kube-rs sends no `resourceVersion=0` when it pages
    // (its page size is 500), so these kinds' lists are consistent reads, 500 a page (a 1.34+
    // API server serves those from its watch cache too); they are small beside the pods, whose
    // list asks `resourceVersion=0` with a limit as client-go's informers do (see `pods`).
    let cfg = watcher::Config::default().timeout(timeout).any_semantic();
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
    // Pods are listed in protobuf (see `pods`): the one kind whose JSON list was most of the
    // first view on a real API server.
    let (pods, w_pods) = store(prepare_pod);
    run_stream(&state, state.register("pods"), pods::watch(client.clone(), timeout), w_pods);
    // Only warnings carry the reasons gpudash reads (FailedScheduling, FailedCreate, …).
    let events = spawn_kind(
        &state,
        "events",
        Api::<Event>::all(client.clone()),
        cfg.clone().fields("type=Warning"),
        strip_event,
    );
    // Of the Normal events, only the scheduler's preemptions: a victim's `Preempted` event
    // names the pod it made room for. Watching every Normal event (each pod's Scheduled,
    // Pulled, Created, Started…) would admit a store that grows with the cluster's churn.
    let (preemptions, w_preemptions) = store(strip_event);
    let idx = state.register_on("preemptions", "events");
    let api = Api::<Event>::all(client.clone());
    run_kind(&state, idx, api, cfg.clone().fields("type=Normal,reason=Preempted"), w_preemptions);
    let runtime_classes =
        spawn_kind(&state, "runtimeclasses", Api::<RuntimeClass>::all(client.clone()), cfg.clone(), strip_rc);
    let replica_sets = spawn_kind(&state, "replicasets", Api::<ReplicaSet>::all(client.clone()), cfg.clone(), strip_rs);
    let deployments =
        spawn_kind(&state, "deployments", Api::<Deployment>::all(client.clone()), cfg.clone(), strip_deploy);
    let daemon_sets = spawn_kind(&state, "daemonsets", Api::<DaemonSet>::all(client.clone()), cfg.clone(), strip_ds);
    let quotas =
        spawn_kind(&state, "resourcequotas", Api::<ResourceQuota>::all(client.clone()), cfg.clone(), strip_quota);
    let dra = start_dra(client.clone(), state.clone(), cfg);
    let metrics = Arc::new(Mutex::new((None, None)));
    spawn_metrics(client, metrics_interval, metrics.clone(), state.notify.clone());
    let agents = SharedAgents::default();
    spawn_agents(pods.clone(), agent_settings, agents.clone(), state.notify.clone());
    Stores {
        nodes,
        pods,
        events,
        preemptions,
        runtime_classes,
        replica_sets,
        deployments,
        daemon_sets,
        quotas,
        dra,
        metrics,
        agents,
        state,
    }
}
