//! gpudash-sim: a simulated K3s API server. It speaks the Kubernetes REST API (discovery, GET,
//! LIST, WATCH) over plain HTTP for the kinds gpudash reads, refuses and logs every write, plays
//! scenario timelines, and injects watch faults for tests.
//!
//! It shares no code with gpudash's derivation: it is the oracle that derivation is tested
//! against, so a bug in one cannot hide in the other.

pub mod api;
mod control;
mod faults;
pub mod kubelet;
pub mod resources;
mod running;
pub mod scenario;
pub mod select;
pub mod store;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use serde::Serialize;
use serde_json::{json, Value};

pub use faults::Faults;
pub use running::{kubeconfig, start, RunningSim};
pub use scenario::{Scenario, ScenarioError};
use store::Store;

/// The built-in edge scenario (`gpudash serve --demo` without files).
pub const DEMO_SCENARIO: &str = include_str!("../scenarios/edge.yaml");

/// The built-in edge scenario, parsed.
pub fn demo_scenario() -> Scenario {
    // The file is part of the crate and covered by a test; an error here is a build defect.
    Scenario::from_text("built-in edge scenario", DEMO_SCENARIO).unwrap_or_default()
}

/// One request on a Kubernetes path, as the request log keeps it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RequestRecord {
    /// HTTP method.
    pub method: String,
    /// The Kubernetes verb it amounts to (`get`, `list`, `watch`, `create`, `patch`, …).
    pub verb: String,
    /// Path and query.
    pub uri: String,
    /// Response status code.
    pub status: u16,
}

const LOG_LEN: usize = 100_000;

#[derive(Debug, Default)]
struct RequestLog {
    recent: std::collections::VecDeque<RequestRecord>,
    by_verb: std::collections::BTreeMap<String, u64>,
}

/// State shared by the HTTP handlers and the handle.
#[derive(Debug)]
pub struct Shared {
    store: Mutex<Store>,
    /// Fault switches.
    pub faults: Faults,
    log: Mutex<RequestLog>,
    timelines: Mutex<Vec<(scenario::Timeline, usize)>>,
    /// How often watches that asked for bookmarks get one.
    pub bookmark_interval: Duration,
    /// The Kubernetes minor version served (`/version`, and which groups exist).
    minor: AtomicU32,
    /// How fast timelines play, in thousandths (1000: as written).
    speed_permille: AtomicU32,
}

impl Shared {
    /// The Kubernetes minor version served.
    pub fn minor(&self) -> u32 {
        self.minor.load(Ordering::Relaxed)
    }

    /// Locks the store. A poisoned lock still holds consistent data (every write is one call).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn log_request(&self, method: &str, verb: &str, uri: &axum::http::Uri, status: u16) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        *log.by_verb.entry(verb.to_string()).or_default() += 1;
        if log.recent.len() >= LOG_LEN {
            log.recent.pop_front();
        }
        log.recent.push_back(RequestRecord {
            method: method.to_string(),
            verb: verb.to_string(),
            uri: uri.to_string(),
            status,
        });
    }
}

/// How the timeline advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimelineMode {
    /// Steps run by themselves, after their delays.
    Auto,
    /// Steps run only when [`Simulator::advance`] is called (tests).
    Manual,
}

/// A handle on a simulator: drive it, inject faults, read its state and request log.
#[derive(Debug, Clone)]
pub struct Simulator {
    pub(crate) shared: Arc<Shared>,
}

/// The identity of one object, as the oracle reports it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectKey {
    /// Namespace, empty for cluster objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// resourceVersion.
    pub resource_version: String,
}

impl Simulator {
    /// A simulator holding the scenario's objects, its timeline not yet started.
    pub fn new(scenario: Scenario) -> Self {
        Self::with_bookmark_interval(scenario, Duration::from_secs(30))
    }

    /// As [`Simulator::new`], with a custom bookmark interval (tests use short ones).
    pub fn with_bookmark_interval(scenario: Scenario, bookmark_interval: Duration) -> Self {
        let mut store = Store::new();
        for o in scenario.objects {
            store.apply(o.resource, fill_times(o.object));
        }
        Self {
            shared: Arc::new(Shared {
                store: Mutex::new(store),
                faults: Faults::new(),
                log: Mutex::new(RequestLog::default()),
                timelines: Mutex::new(scenario.timelines.into_iter().map(|t| (t, 0)).collect()),
                bookmark_interval,
                minor: AtomicU32::new(resources::DEFAULT_MINOR),
                speed_permille: AtomicU32::new(1000),
            }),
        }
    }

    /// Speaks Kubernetes 1.`minor`: `/version` says so and groups newer than it are absent
    /// (1.33 and older serve no `resource.k8s.io/v1`, as a K3s of that line).
    pub fn set_kubernetes_minor(&self, minor: u32) {
        self.shared.minor.store(minor, Ordering::Relaxed);
    }

    /// Plays timelines `factor` times faster than written (0.01–10,000): a soak plays a day of
    /// the demo in minutes.
    /// The watch history keeps the same simulated five minutes (at 150×, two real seconds), as
    /// a real API server's compaction would for a cluster that much busier.
    pub fn set_timeline_speed(&self, factor: f64) {
        let factor = factor.clamp(0.01, 10_000.0);
        let permille = (factor * 1000.0).round() as u32;
        self.shared.speed_permille.store(permille.max(10), Ordering::Relaxed);
        if factor > 1.0 {
            self.shared.store().set_history_age(store::HISTORY_AGE.div_f64(factor));
        }
    }

    /// The axum router serving the Kubernetes API and the `/_sim` control endpoints.
    pub fn router(&self) -> Router {
        control::routes().fallback(api::k8s).with_state(self.shared.clone())
    }

    /// Applies every object in a YAML text (objects or Lists); returns how many.
    pub fn apply_yaml(&self, text: &str) -> Result<usize, ScenarioError> {
        let s = Scenario::from_text("<applied>", text)?;
        let n = s.objects.len();
        let mut store = self.shared.store();
        for o in s.objects {
            store.apply(o.resource, fill_times(o.object));
        }
        Ok(n)
    }

    /// Applies one object given as JSON.
    pub fn apply(&self, object: Value) -> Result<(), ScenarioError> {
        let text = serde_json::to_string(&object).unwrap_or_default();
        self.apply_yaml(&text).map(|_| ())
    }

    /// Deletes an object by kind, namespace and name; returns whether it existed.
    pub fn delete(&self, kind: &str, namespace: &str, name: &str) -> bool {
        match resources::by_kind_name(kind) {
            Some(r) => self.shared.store().delete(r, namespace, name),
            None => false,
        }
    }

    /// Runs the next step of every timeline now; returns false when none has one (and none
    /// loops).
    pub fn advance(&self) -> bool {
        let n = self.shared.timelines.lock().unwrap_or_else(|e| e.into_inner()).len();
        let mut any = false;
        for i in 0..n {
            any |= self.advance_timeline(i);
        }
        any
    }

    /// Runs the next step of timeline `i`.
    pub fn advance_timeline(&self, i: usize) -> bool {
        let step = {
            let mut tls = self.shared.timelines.lock().unwrap_or_else(|e| e.into_inner());
            let Some((timeline, next)) = tls.get_mut(i) else {
                return false;
            };
            if *next >= timeline.steps.len() {
                if !timeline.looping || timeline.steps.is_empty() {
                    return false;
                }
                *next = 0;
            }
            *next += 1;
            timeline.steps[*next - 1].clone()
        };
        let mut store = self.shared.store();
        for d in &step.delete {
            store.delete(d.resource, &d.namespace, &d.name);
        }
        for o in step.apply {
            store.apply(o.resource, fill_times(o.object));
        }
        true
    }

    fn next_delay(&self, i: usize) -> Option<Duration> {
        let tls = self.shared.timelines.lock().unwrap_or_else(|e| e.into_inner());
        let (timeline, next) = tls.get(i)?;
        let total: Duration = timeline.steps.iter().map(|s| s.after).sum();
        let written = match timeline.steps.get(*next) {
            Some(s) => Some(s.after),
            None if timeline.looping && total >= Duration::from_millis(100) => timeline.steps.first().map(|s| s.after),
            None => None,
        };
        let speed = f64::from(self.shared.speed_permille.load(Ordering::Relaxed)) / 1000.0;
        written.map(|d| d.div_f64(speed))
    }

    /// Plays every timeline in the background, each step after its delay.
    pub fn spawn_timeline(&self) -> tokio::task::JoinHandle<()> {
        let n = self.shared.timelines.lock().unwrap_or_else(|e| e.into_inner()).len();
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                let sim = self.clone();
                tokio::spawn(async move {
                    while let Some(d) = sim.next_delay(i) {
                        tokio::time::sleep(d).await;
                        if !sim.advance_timeline(i) {
                            break;
                        }
                    }
                })
            })
            .collect();
        tokio::spawn(async move {
            struct AbortAll(Vec<tokio::task::JoinHandle<()>>);
            impl Drop for AbortAll {
                fn drop(&mut self) {
                    for t in &self.0 {
                        t.abort();
                    }
                }
            }
            // Held until this supervisor is aborted (the simulator stops), then aborts each step task.
            let _guard = AbortAll(tasks);
            std::future::pending::<()>().await;
        })
    }

    /// Ends every open watch (clients see the stream close and re-watch).
    pub fn close_watches(&self) {
        self.shared.faults.close_all();
    }

    /// Makes every version seen so far too old: the next watch gets 410 Gone. Open watches end.
    pub fn expire_versions(&self) {
        self.shared.store().expire();
        self.shared.faults.close_all();
    }

    /// Simulates an API server restart: watches dropped, history gone (410 for old versions),
    /// and 503 answers for `down`.
    pub fn restart(&self, down: Duration) {
        *self.shared.faults.unavailable_until.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + down);
        self.expire_versions();
    }

    /// While on, the API hangs like a stuck API server or a half-open connection: new watches
    /// are accepted and then send nothing — not even their end at `timeoutSeconds` — and
    /// other requests get no answer. Turning it on ends open watches; turning it off lets the
    /// waiting requests carry on.
    pub fn stall(&self, on: bool) {
        self.shared.faults.stalled.store(on, Ordering::Relaxed);
        self.shared.faults.close_all();
    }

    /// Delays every response by `d`.
    pub fn set_delay(&self, d: Duration) {
        self.shared.faults.delay_ms.store(u64::try_from(d.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The recent requests on Kubernetes paths (bounded), oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.lock().unwrap_or_else(|e| e.into_inner()).recent.iter().cloned().collect()
    }

    /// Every request ever made, counted by Kubernetes verb (unbounded, so a read-only proof
    /// cannot be defeated by the bounded log rolling over).
    pub fn verb_counts(&self) -> std::collections::BTreeMap<String, u64> {
        self.shared.log.lock().unwrap_or_else(|e| e.into_inner()).by_verb.clone()
    }

    /// The oracle: every object of a kind, with its version, sorted.
    pub fn state(&self, kind: &str) -> Vec<ObjectKey> {
        let Some(r) = resources::by_kind_name(kind) else {
            return Vec::new();
        };
        let store = self.shared.store();
        store
            .objects(r)
            .iter()
            .map(|((ns, name), o)| ObjectKey {
                namespace: ns.clone(),
                name: name.clone(),
                resource_version: o["metadata"]["resourceVersion"].as_str().unwrap_or("").to_string(),
            })
            .collect()
    }

    /// One stored object.
    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let r = resources::by_kind_name(kind)?;
        self.shared.store().get(r, namespace, name).map(|o| (*o).clone())
    }

    /// The current resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.store().rv()
    }
}

/// Fills in the timestamps the control plane would have set but a hand-written scenario may
/// omit: condition transition times and event times (set to now, so ages start at zero).
fn fill_times(mut obj: Value) -> Value {
    let now = store::now_rfc3339();
    if let Some(conds) = obj.pointer_mut("/status/conditions").and_then(Value::as_array_mut) {
        for c in conds {
            if c.is_object() && c.get("lastTransitionTime").is_none() {
                c["lastTransitionTime"] = json!(now);
            }
        }
    }
    // A scenario's event without times happened now; one with an eventTime was made through
    // events.k8s.io (the scheduler and controllers do so), and the real API server leaves its
    // firstTimestamp and lastTimestamp empty.
    let event_time = obj.get("eventTime").is_some_and(|t| !t.is_null());
    if obj.get("kind").and_then(Value::as_str) == Some("Event") && !event_time {
        for f in ["firstTimestamp", "lastTimestamp"] {
            if obj.get(f).is_none_or(Value::is_null) {
                obj[f] = json!(now);
            }
        }
    }
    if let Some(t) = obj.pointer_mut("/timestamp").filter(|t| t.is_null()) {
        *t = json!(now);
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_faster_timeline_waits_less_between_steps() {
        let sim = Simulator::new(demo_scenario());
        let before = sim.next_delay(0).unwrap_or_default();
        sim.set_timeline_speed(150.0);
        let after = sim.next_delay(0).unwrap_or_default();
        assert!(before > Duration::ZERO && after < before / 100, "{before:?} → {after:?}");
    }

    #[test]
    fn the_built_in_scenario_loads() {
        let s = Scenario::from_text("edge.yaml", DEMO_SCENARIO);
        assert!(s.is_ok(), "{s:?}");
        let s = s.unwrap_or_default();
        assert!(s.objects.len() > 20);
        assert!(!s.timelines[0].steps.is_empty());
    }

    #[test]
    fn timelines_advance_and_loop() {
        let text = "apiVersion: gpudash.dev/v1alpha1\nkind: Timeline\nloop: true\nsteps:\n- after: 1s\n  apply: [{apiVersion: v1, kind: Node, \
            metadata: {name: n1}}]\n- after: 1s\n  delete: [{kind: Node, name: n1}]\n";
        let sim = Simulator::new(Scenario::from_text("t", text).unwrap_or_default());
        assert!(sim.advance());
        assert_eq!(sim.state("Node").len(), 1);
        assert!(sim.advance());
        assert!(sim.state("Node").is_empty());
        assert!(sim.advance(), "loops back to the first step");
        assert_eq!(sim.state("Node").len(), 1);
    }
}
