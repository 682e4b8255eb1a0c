//! The simulator's object store: every object as JSON, one global resourceVersion counter, and a
//! bounded change history that watches replay from.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::resources::{ResourceId, RESOURCES};

/// How many changes a watch can be behind and still resume; older versions get 410 Gone.
pub const HISTORY_LEN: usize = 50_000;

/// How long a change stays in the history. The API server's etcd is compacted every five
/// minutes by default (`--etcd-compaction-interval`), after which a watch from an older
/// version gets 410 Gone; the simulator keeps the same window, so that a demo left running
/// for weeks holds minutes of changes, not all of them.
pub const HISTORY_AGE: std::time::Duration = std::time::Duration::from_secs(300);

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    /// The object was created.
    Added,
    /// The object was replaced.
    Modified,
    /// The object was removed.
    Deleted,
}

impl ChangeType {
    /// The watch event type as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change, as watches see it.
#[derive(Debug)]
pub struct Change {
    /// The resourceVersion this change produced.
    pub rv: u64,
    /// Which resource.
    pub resource: ResourceId,
    /// What happened.
    pub kind: ChangeType,
    /// The object after the change (for deletions, the last state).
    pub object: Arc<Value>,
    /// The object before the change, so that selector watches can turn a MODIFIED that leaves
    /// the selection into a DELETED, as the API server does.
    pub old: Option<Arc<Value>>,
}

/// Object key within a resource: (namespace, name); namespace is empty for cluster objects.
pub type Key = (String, String);

/// The store. Callers hold it behind a mutex for short critical sections only.
#[derive(Debug)]
pub struct Store {
    rv: u64,
    objects: Vec<BTreeMap<Key, Arc<Value>>>,
    history: VecDeque<(std::time::Instant, Arc<Change>)>,
    /// Watches asking for a version below this get 410 Gone.
    floor: u64,
    tx: broadcast::Sender<Arc<Change>>,
    /// How long changes are kept ([`HISTORY_AGE`], less when timelines play faster).
    history_age: std::time::Duration,
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

/// Deterministic UID from kind, namespace and name, so that a re-applied object keeps its UID.
fn uid_for(kind: &str, ns: &str, name: &str) -> String {
    // FNV-1a, twice with different seeds, formatted like a UUID.
    let h = |seed: u64| {
        let mut x = seed;
        for b in kind.bytes().chain([0]).chain(ns.bytes()).chain([0]).chain(name.bytes()) {
            x ^= u64::from(b);
            x = x.wrapping_mul(0x0100_0000_01b3);
        }
        x
    };
    let (a, b) = (h(0xcbf2_9ce4_8422_2325), h(0x8422_2325_cbf2_9ce4));
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 52,
        b & 0xffff_ffff_ffff
    )
}

/// Now, to the second, as the API server writes times.
pub(crate) fn now_rfc3339() -> String {
    jiff::Timestamp::now().round(jiff::Unit::Second).map(|t| t.to_string()).unwrap_or_default()
}

impl Store {
    /// An empty store at resourceVersion 1.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(65_536);
        Self {
            rv: 1,
            objects: RESOURCES.iter().map(|_| BTreeMap::new()).collect(),
            history: VecDeque::new(),
            floor: 1,
            tx,
            history_age: HISTORY_AGE,
        }
    }

    /// The current resourceVersion.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    /// Watches asking for a version below this get 410 Gone.
    pub fn floor(&self) -> u64 {
        self.floor
    }

    /// Subscribes to future changes.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }

    /// Changes after `rv` for one resource, oldest first.
    pub fn changes_since(&self, rv: u64, resource: ResourceId) -> Vec<Arc<Change>> {
        let start = self.history.partition_point(|(_, c)| c.rv <= rv);
        self.history.range(start..).map(|(_, c)| c).filter(|c| c.resource == resource).cloned().collect()
    }

    /// Every object of one resource, in (namespace, name) order.
    pub fn objects(&self, resource: ResourceId) -> &BTreeMap<Key, Arc<Value>> {
        &self.objects[resource.0]
    }

    /// One object.
    pub fn get(&self, resource: ResourceId, ns: &str, name: &str) -> Option<Arc<Value>> {
        self.objects[resource.0].get(&(ns.to_string(), name.to_string())).cloned()
    }

    /// Makes every version up to now too old to watch from (the next watch gets 410 Gone).
    pub fn expire(&mut self) {
        self.history.clear();
        self.floor = self.rv + 1;
    }

    /// Keeps changes for `age` instead of [`HISTORY_AGE`]: a timeline played N times faster keeps
    /// the same simulated five minutes.
    pub fn set_history_age(&mut self, age: std::time::Duration) {
        self.history_age = age;
    }

    /// Forgets changes past the count or older than the age, as a compaction does: watches from
    /// before them get 410 Gone.
    pub fn compact(&mut self, now: std::time::Instant) {
        while self.history.len() > HISTORY_LEN
            || self.history.front().is_some_and(|(at, _)| now.saturating_duration_since(*at) > self.history_age)
        {
            if let Some((_, old)) = self.history.pop_front() {
                self.floor = old.rv + 1;
            }
        }
    }

    /// Changes kept for watches to resume from.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    fn record(&mut self, change: Change) {
        let change = Arc::new(change);
        let now = std::time::Instant::now();
        self.history.push_back((now, change.clone()));
        self.compact(now);
        // No receivers is normal (no watch open).
        let _ = self.tx.send(change);
    }

    /// Creates or replaces an object. Fills in what the API server would: uid,
    /// creationTimestamp, resourceVersion, the default namespace; keeps the uid and
    /// creationTimestamp of the object it replaces. Returns the stored object.
    pub fn apply(&mut self, resource: ResourceId, mut obj: Value) -> Arc<Value> {
        let r = &resource.def();
        let name = obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string();
        let ns = if r.namespaced {
            obj.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        let key = (ns.clone(), name.clone());
        let old = self.objects[resource.0].get(&key).cloned();
        self.rv += 1;
        if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), json!(r.api_version()));
            o.insert("kind".into(), json!(r.kind));
        }
        if r.kind == "Pod" {
            default_pod(&mut obj);
            started_ago(&mut obj);
        }
        let meta = &mut obj["metadata"];
        if r.namespaced {
            meta["namespace"] = json!(ns);
        }
        meta["resourceVersion"] = json!(self.rv.to_string());
        let keep = |field: &str| old.as_ref().and_then(|o| o["metadata"].get(field).cloned());
        if meta.get("uid").is_none() {
            meta["uid"] = keep("uid").unwrap_or_else(|| json!(uid_for(r.kind, &ns, &name)));
        }
        if meta.get("creationTimestamp").is_none() {
            meta["creationTimestamp"] = keep("creationTimestamp").unwrap_or_else(|| json!(now_rfc3339()));
        }
        if r.kind == "Pod" {
            kubelet_status(&mut obj);
        }
        let obj = Arc::new(obj);
        self.objects[resource.0].insert(key, obj.clone());
        let kind = if old.is_some() { ChangeType::Modified } else { ChangeType::Added };
        self.record(Change { rv: self.rv, resource, kind, object: obj.clone(), old });
        obj
    }

    /// Removes an object; returns whether it existed.
    pub fn delete(&mut self, resource: ResourceId, ns: &str, name: &str) -> bool {
        let ns = if resource.def().namespaced && ns.is_empty() { "default" } else { ns };
        let Some(old) = self.objects[resource.0].remove(&(ns.to_string(), name.to_string())) else {
            return false;
        };
        let mut last = (*old).clone();
        let mut old = old;
        // A pod bound to a node is deleted as the API server deletes it: first marked (its
        // deletionTimestamp set, a MODIFIED event), then removed once its kubelet — or a
        // forced delete — lets go (DELETED, carrying the mark).
        let bound = resource.def().kind == "Pod" && last.pointer("/spec/nodeName").is_some_and(|n| !n.is_null());
        if bound && last.pointer("/metadata/deletionTimestamp").is_none_or(Value::is_null) {
            self.rv += 1;
            last["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            last["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            last["metadata"]["resourceVersion"] = json!(self.rv.to_string());
            let marked = Arc::new(last.clone());
            self.record(Change {
                rv: self.rv,
                resource,
                kind: ChangeType::Modified,
                object: marked.clone(),
                old: Some(old),
            });
            old = marked;
        }
        self.rv += 1;
        last["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.record(Change {
            rv: self.rv,
            resource,
            kind: ChangeType::Deleted,
            object: Arc::new(last),
            old: Some(old),
        });
        true
    }
}

/// The annotation by which a scenario's pod says how long ago it was created and started
/// (`3h5m`), so that a demo can show what only time reveals (a pod that has held a GPU for
/// hours without running). The simulator turns it into `metadata.creationTimestamp` and
/// `status.startTime` and removes it: the served pod is shaped as a real one.
pub const STARTED_AGO: &str = "sim.gpudash.dev/started-ago";
/// Likewise, how long ago its containers last exited (`12m`): each `lastState.terminated`
/// gets that `finishedAt`, and a running container its `startedAt` then (restarted at once).
pub const LAST_EXIT_AGO: &str = "sim.gpudash.dev/last-exit-ago";

fn ago(a: &mut serde_json::Map<String, Value>, key: &str) -> Option<String> {
    let d = a.remove(key)?.as_str()?.parse::<jiff::SignedDuration>().ok()?;
    let at = jiff::Timestamp::now().round(jiff::Unit::Second).ok()?.checked_sub(d).ok()?;
    Some(at.to_string())
}

fn started_ago(pod: &mut Value) {
    let Some(a) = pod.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) else { return };
    let (started, exited) = (ago(a, STARTED_AGO), ago(a, LAST_EXIT_AGO));
    if let Some(at) = started {
        pod["metadata"]["creationTimestamp"] = json!(at);
        if pod.get("status").is_some_and(Value::is_object) {
            pod["status"]["startTime"] = json!(at);
        }
    }
    let Some(at) = exited else { return };
    let statuses = pod.pointer_mut("/status/containerStatuses").and_then(Value::as_array_mut);
    for c in statuses.into_iter().flatten() {
        if let Some(t) = c.pointer_mut("/lastState/terminated").and_then(Value::as_object_mut) {
            t.insert("finishedAt".into(), json!(at));
        }
        if let Some(r) = c.pointer_mut("/state/running").and_then(Value::as_object_mut) {
            r.insert("startedAt".into(), json!(at));
        }
    }
}

/// The API server's defaulting that clients rely on: a container's request for a resource it
/// sets only a limit for defaults to that limit (so `nvidia.com/gpu` set in `limits` alone shows
/// up in `requests`, where kubectl and other clients read it).
fn default_pod(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec") else { return };
    for list in ["initContainers", "containers"] {
        let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) else { continue };
        for c in cs {
            let Some(res) = c.get_mut("resources").and_then(Value::as_object_mut) else { continue };
            let Some(limits) = res.get("limits").and_then(Value::as_object).cloned() else { continue };
            let requests = res.entry("requests").or_insert_with(|| json!({}));
            if let Some(req) = requests.as_object_mut() {
                for (k, v) in limits {
                    req.entry(k).or_insert(v);
                }
            }
        }
    }
}

/// The kubelet's part, which the simulator plays: a Running pod written without container
/// statuses gets one per container, started and ready (as a kubelet reports a healthy pod), so
/// `kubectl get pods` prints READY `1/1` as it does against a real cluster.
fn kubelet_status(pod: &mut Value) {
    let running = pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running");
    if !running || pod.pointer("/status/containerStatuses").is_some() {
        return;
    }
    let started = pod.pointer("/metadata/creationTimestamp").cloned().unwrap_or_else(|| json!(now_rfc3339()));
    let uid = pod.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("").replace('-', "");
    let statuses: Vec<Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "name": c.get("name").cloned().unwrap_or(json!("")),
                "image": c.get("image").cloned().unwrap_or(json!("")),
                "imageID": "",
                "containerID": format!("containerd://{uid}{i:02}"),
                "ready": true,
                "started": true,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
            })
        })
        .collect();
    pod["status"]["containerStatuses"] = json!(statuses);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::by_kind;

    fn pod(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"}})
    }

    #[test]
    fn a_pods_requests_default_to_its_limits_as_the_api_server_does() {
        let mut s = Store::new();
        let pods = by_kind("v1", "Pod").unwrap_or_default();
        let p = s.apply(
            pods,
            json!({"metadata": {"name": "g", "namespace": "ml"}, "spec": {"containers": [
                {"name": "a", "resources": {"limits": {"nvidia.com/gpu": "1", "memory": "2Gi"}, "requests": {"memory": "1Gi"}}},
                {"name": "b"}]}}),
        );
        assert_eq!(
            p["spec"]["containers"][0]["resources"]["requests"],
            json!({"nvidia.com/gpu": "1", "memory": "1Gi"})
        );
        assert_eq!(p["spec"]["containers"][1].get("resources"), None);
    }

    #[test]
    fn a_running_pod_gets_ready_container_statuses_as_a_kubelet_reports_them() {
        let mut s = Store::new();
        let mut p = pod("model");
        p["status"] = json!({"phase": "Running"});
        p["spec"]["containers"] = json!([{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:2"}]);
        let o = s.apply(by_kind("v1", "Pod").unwrap_or_default(), p);
        let st = o.pointer("/status/containerStatuses").and_then(Value::as_array).cloned().unwrap_or_default();
        assert_eq!(st.len(), 2);
        assert_eq!((st[1]["name"].as_str(), st[1]["ready"].as_bool()), (Some("b"), Some(true)));
        assert_eq!(st[0]["state"]["running"]["startedAt"], o["metadata"]["creationTimestamp"]);
        // A pending pod, and one whose statuses are written, are left as written.
        let mut q = pod("waiting");
        q["status"] = json!({"phase": "Pending"});
        let o = s.apply(by_kind("v1", "Pod").unwrap_or_default(), q);
        assert!(o.pointer("/status/containerStatuses").is_none());
    }

    #[test]
    fn a_pod_started_ago_gets_its_times_in_the_past_and_loses_the_annotation() {
        let mut s = Store::new();
        let mut p = pod("holder");
        p["metadata"]["annotations"] = json!({STARTED_AGO: "3h5m", "keep": "me"});
        p["status"] = json!({"phase": "Pending"});
        let o = s.apply(by_kind("v1", "Pod").unwrap_or_default(), p);
        let at: jiff::Timestamp = o["status"]["startTime"].as_str().unwrap_or("").parse().unwrap_or_default();
        let ago = jiff::Timestamp::now().duration_since(at).as_secs();
        assert!((3 * 3600 + 290..3 * 3600 + 330).contains(&ago), "{ago}");
        assert_eq!(o["metadata"]["creationTimestamp"], o["status"]["startTime"]);
        assert_eq!(o["metadata"]["annotations"], json!({"keep": "me"}));
        let mut p = pod("oom");
        p["metadata"]["annotations"] = json!({LAST_EXIT_AGO: "12m"});
        p["status"] = json!({"phase": "Running", "containerStatuses": [{"name": "m", "restartCount": 2,
            "state": {"running": {}}, "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]});
        let o = s.apply(by_kind("v1", "Pod").unwrap_or_default(), p);
        let st = &o["status"]["containerStatuses"][0];
        let at: jiff::Timestamp =
            st["lastState"]["terminated"]["finishedAt"].as_str().unwrap_or("").parse().unwrap_or_default();
        assert!((715..735).contains(&jiff::Timestamp::now().duration_since(at).as_secs()));
        assert_eq!(st["state"]["running"]["startedAt"], st["lastState"]["terminated"]["finishedAt"]);
    }

    #[test]
    fn every_write_gets_a_higher_resource_version() {
        let mut s = Store::new();
        let pods = by_kind("v1", "Pod").unwrap_or_default();
        let a = s.apply(pods, pod("a"));
        let b = s.apply(pods, pod("b"));
        let rv = |v: &Value| v["metadata"]["resourceVersion"].as_str().unwrap_or("").parse::<u64>().ok();
        assert!(rv(&a) < rv(&b));
        assert!(s.delete(pods, "ml", "a"));
        assert!(!s.delete(pods, "ml", "a"));
        assert_eq!(s.objects(pods).len(), 1);
        assert_eq!(s.changes_since(0, pods).len(), 3);
    }

    #[test]
    fn replacing_keeps_uid_and_creation_time() {
        let mut s = Store::new();
        let pods = by_kind("v1", "Pod").unwrap_or_default();
        let a = s.apply(pods, pod("a"));
        let a2 = s.apply(pods, pod("a"));
        assert_eq!(a["metadata"]["uid"], a2["metadata"]["uid"]);
        assert_eq!(a["metadata"]["creationTimestamp"], a2["metadata"]["creationTimestamp"]);
        assert_eq!(s.changes_since(0, pods)[1].kind, ChangeType::Modified);
    }

    #[test]
    fn expiring_moves_the_floor_past_every_version() {
        let mut s = Store::new();
        let pods = by_kind("v1", "Pod").unwrap_or_default();
        s.apply(pods, pod("a"));
        s.expire();
        assert!(s.floor() > s.rv());
        assert!(s.changes_since(0, pods).is_empty());
    }

    #[test]
    fn the_history_is_compacted_by_count_and_age_as_etcd_is() {
        let mut s = Store::new();
        let pods = by_kind("v1", "Pod").unwrap_or_default();
        for i in 0..(HISTORY_LEN + 1000) {
            s.apply(pods, pod(&format!("p{}", i % 10)));
        }
        assert_eq!(s.history_len(), HISTORY_LEN, "at most HISTORY_LEN changes kept");
        let floor = s.floor();
        assert!(floor > 1000, "the oldest went: floor {floor}");
        assert_eq!(s.changes_since(floor - 1, pods).len(), HISTORY_LEN);
        // Five minutes later, everything before is compacted.
        s.compact(std::time::Instant::now() + HISTORY_AGE + std::time::Duration::from_secs(1));
        assert_eq!(s.history_len(), 0);
        assert!(s.floor() > s.rv(), "a watch from any version seen gets 410 Gone");
    }

    #[test]
    fn a_bound_pod_is_marked_for_deletion_before_it_goes_as_the_api_server_does() {
        let mut s = Store::new();
        let pods = by_kind("v1", "Pod").unwrap_or_default();
        let mut bound = pod("a");
        bound["spec"] = json!({"nodeName": "orin-1"});
        s.apply(pods, bound);
        s.apply(pods, pod("b"));
        assert!(s.delete(pods, "ml", "a"));
        assert!(s.delete(pods, "ml", "b"));
        let kinds: Vec<ChangeType> = s.changes_since(0, pods).iter().map(|c| c.kind).collect();
        use ChangeType::*;
        assert_eq!(kinds, vec![Added, Added, Modified, Deleted, Deleted]);
        let marked = &s.changes_since(0, pods)[2].object;
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
        assert!(marked["metadata"]["deletionTimestamp"].is_string());
    }
}
