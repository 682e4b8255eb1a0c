//! Per-pod facts the scheduler would compute: effective requests and limits, whether the pod
//! holds its resources, and since when it has waited.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::pod::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use crate::quantity::Quantity;

/// Amounts per resource name, in the resource's base unit scaled by 1000 (milli-units), so that
/// CPU, memory and extended resources share one arithmetic.
pub type Amounts = BTreeMap<String, i128>;

/// The largest amount the API server counts: its `Value()` saturates at the largest int64, so a
/// request too large to count (`999999999999999999999Ei`, which it accepts) fits nowhere rather
/// than everywhere. In milli-units.
const SATURATED: i128 = i64::MAX as i128 * 1000;

pub(crate) fn milli(q: &K8sQuantity) -> Option<i128> {
    let p = Quantity::parse(&q.0).ok()?;
    Some(
        p.scaled_ceil(3)
            .map_or(if p.is_negative() { -SATURATED } else { SATURATED }, |v| v.clamp(-SATURATED, SATURATED)),
    )
}

/// Amounts by resource name, the names borrowed from the pod, sorted by name: a pod names a
/// handful of resources, so a sorted vector is cheaper than a map and copies no name.
type Sums<'a> = Vec<(&'a str, i128)>;

/// The amount for `name`, added (as 0) where absent.
fn slot<'a, 'b>(m: &'b mut Sums<'a>, name: &'a str) -> &'b mut i128 {
    let i = match m.binary_search_by(|(n, _)| (*n).cmp(name)) {
        Ok(i) => i,
        Err(i) => {
            m.insert(i, (name, 0));
            i
        }
    };
    &mut m[i].1
}

fn container_requests(c: &Container) -> Sums<'_> {
    let mut out = Sums::new();
    let Some(r) = &c.resources else { return out };
    // A limit without a request defaults the request to the limit (API server defaulting).
    for list in [&r.limits, &r.requests].into_iter().flatten() {
        for (k, v) in list {
            if let Some(m) = milli(v) {
                *slot(&mut out, k) = m;
            }
        }
    }
    out
}

fn add<'a>(into: &mut Sums<'a>, from: &Sums<'a>) {
    for &(k, v) in from {
        *slot(into, k) += v;
    }
}

fn max_into<'a>(into: &mut Sums<'a>, from: &Sums<'a>) {
    for &(k, v) in from {
        let e = slot(into, k);
        *e = (*e).max(v);
    }
}

/// The pod's effective requests as the scheduler counts them: the sum over containers (and
/// restartable init containers, i.e. sidecars) against the largest init-container step, plus
/// pod overhead. In milli-units.
pub fn effective_requests(pod: &Pod) -> Amounts {
    effective(pod).into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// [`effective_requests`], by borrowed name.
fn effective(pod: &Pod) -> Sums<'_> {
    let Some(spec) = &pod.spec else {
        return Sums::new();
    };
    let mut sum = Sums::new();
    for c in &spec.containers {
        add(&mut sum, &container_requests(c));
    }
    let mut sidecars = Sums::new();
    let mut init_max = Sums::new();
    for ic in spec.init_containers.iter().flatten() {
        let r = container_requests(ic);
        if ic.restart_policy.as_deref() == Some("Always") {
            add(&mut sidecars, &r);
            max_into(&mut init_max, &sidecars);
        } else {
            let mut step = sidecars.clone();
            add(&mut step, &r);
            max_into(&mut init_max, &step);
        }
    }
    add(&mut sum, &sidecars);
    max_into(&mut sum, &init_max);
    if let Some(overhead) = &spec.overhead {
        for (k, v) in overhead {
            if let Some(m) = milli(v) {
                *slot(&mut sum, k) += m;
            }
        }
    }
    sum
}

/// The pod's memory limit in bytes, and how many long-running containers have none (unbounded).
pub fn memory_limit(pod: &Pod) -> (u64, u32) {
    let Some(spec) = &pod.spec else { return (0, 0) };
    let mut total: u64 = 0;
    let mut unbounded = 0;
    let sidecars = spec.init_containers.iter().flatten().filter(|c| c.restart_policy.as_deref() == Some("Always"));
    for c in spec.containers.iter().chain(sidecars) {
        let lim = c
            .resources
            .as_ref()
            .and_then(|r| r.limits.as_ref())
            .and_then(|l| l.get("memory"))
            .and_then(|q| Quantity::parse(&q.0).ok())
            .and_then(|q| q.scaled_ceil(0))
            .and_then(|v| u64::try_from(v).ok());
        match lim {
            Some(v) => total = total.saturating_add(v),
            None => unbounded += 1,
        }
    }
    (total, unbounded)
}

/// Whole units of a resource from milli-units (extended resources are whole numbers).
pub fn units(milli: i128) -> u64 {
    u64::try_from((milli + 999).div_euclid(1000)).unwrap_or(0)
}

/// A pod holds its resources while it is bound to a node and not finished — a scheduled pod
/// stuck pulling its image still holds its GPU.
pub fn holds_resources(pod: &Pod) -> bool {
    let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
    bound && phase != "Succeeded" && phase != "Failed"
}

/// ReplicaSets made by a Deployment: (namespace, ReplicaSet) → the Deployment's name.
pub type RsOwners<'a> = super::Map<(&'a str, &'a str), &'a str>;

/// The Deployments behind the ReplicaSets.
pub fn rs_owners(replica_sets: &[std::sync::Arc<k8s_openapi::api::apps::v1::ReplicaSet>]) -> RsOwners<'_> {
    replica_sets
        .iter()
        .filter_map(|rs| {
            let d = rs.metadata.owner_references.as_ref()?.iter().find(|o| o.kind == "Deployment")?;
            Some(((rs.metadata.namespace.as_deref().unwrap_or(""), rs.metadata.name.as_deref()?), d.name.as_str()))
        })
        .collect()
}

/// The workload a pod belongs to, `Kind/name`, from its controller's owner reference: a
/// ReplicaSet's Deployment when the ReplicaSet is known to have one, else the owner itself.
pub fn workload(pod: &Pod, rs: &RsOwners<'_>) -> Option<String> {
    let refs = pod.metadata.owner_references.as_ref()?;
    let o = refs.iter().find(|o| o.controller == Some(true)).or_else(|| refs.first())?;
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    match (o.kind.as_str(), rs.get(&(ns, o.name.as_str()))) {
        ("ReplicaSet", Some(d)) => Some(format!("Deployment/{d}")),
        (kind, _) => Some(format!("{kind}/{}", o.name)),
    }
}

/// The node a pod is bound to.
pub fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())
}

/// A pod waiting for the scheduler: Pending and not yet bound to a node.
pub fn is_unscheduled(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    phase == "Pending" && node_of(pod).is_none() && pod.metadata.deletion_timestamp.is_none()
}

/// Resource names most pods ask for: kept as shared static text, not a copy per pod.
const COMMON: [&str; 6] = ["cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "nvidia.com/gpu.shared"];

/// A pod's effective requests as kept between derivations: sorted by name, in one allocation,
/// the common names shared. (An [`Amounts`] map with a `String` per name took ~460 bytes a pod
/// — 14 MiB at 30 000 pods; docs/benchmarks.md, "Memory".) Other names are the pod's own copy,
/// freed with it: nothing is interned for good, so hostile names cannot grow memory.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Requests(Box<[(Cow<'static, str>, i128)]>);

impl From<Sums<'_>> for Requests {
    fn from(a: Sums<'_>) -> Self {
        let name =
            |k: &str| COMMON.iter().find(|c| **c == k).map_or_else(|| Cow::Owned(k.to_string()), |c| Cow::Borrowed(*c));
        Self(a.into_iter().map(|(k, v)| (name(k), v)).collect())
    }
}

impl Requests {
    /// The amount of one resource, in milli-units.
    pub fn get(&self, name: &str) -> Option<&i128> {
        self.0.binary_search_by(|(k, _)| k.as_ref().cmp(name)).ok().and_then(|i| self.0.get(i)).map(|(_, v)| v)
    }

    /// Every resource and its amount, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &i128)> + '_ {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

/// What the derivation reads from a pod's spec, computed once per pod version.
#[derive(Debug, Default)]
pub struct Facts {
    /// [`effective_requests`].
    pub requests: Requests,
    /// [`memory_limit`].
    pub memory_limit: (u64, u32),
}

impl Facts {
    /// The pod's facts ([`Pod::facts`] keeps them with the pod).
    pub(crate) fn of(pod: &Pod) -> Self {
        Self { requests: effective(pod).into(), memory_limit: memory_limit(pod) }
    }
}

/// The pods as the last derivation saw them, kept between derivations so that a change to one
/// pod of 30 000 costs one pod's work: each pod's [`Facts`], the pods holding resources on each
/// node (with a version that changes when that node's set does), and the few pods the
/// diagnoses look for among all (device plugins, pods waiting for the scheduler, pods the
/// kubelet refused). Keyed by the object's address: the stores hand out the same `Arc` until
/// the pod changes (a changed pod is a new `Arc`); the index holds the `Arc`, so an address is
/// never reused while it is a key. A revision in which no pod changed costs one pointer
/// comparison per pod.
#[derive(Debug, Default)]
pub struct PodIndex {
    /// The addresses in the order the last input listed them.
    order: Vec<usize>,
    by_addr: std::collections::HashMap<usize, Kept, AddrHash>,
    by_node: super::Map<String, NodePods>,
    /// Pods that are device plugins, waiting for the scheduler, or refused by the kubelet.
    notable: std::collections::HashMap<usize, std::sync::Arc<Pod>, AddrHash>,
    /// The last version handed out.
    versions: u64,
}

/// One pod in the [`PodIndex`].
#[derive(Debug)]
struct Kept {
    /// Held so that the address is not reused while it is a key (and read again when it goes:
    /// the node it holds resources on, which cannot have changed — a changed pod is a new one).
    pod: std::sync::Arc<Pod>,
    facts: std::sync::Arc<Facts>,
}

/// The node a pod holds resources on.
fn held_on(p: &Pod) -> Option<&str> {
    node_of(p).filter(|_| holds_resources(p))
}

/// The pods holding resources on one node, by address, and the version of that set.
#[derive(Debug, Default)]
pub struct NodePods {
    /// The pods with their facts, sorted by address.
    pub held: Vec<(std::sync::Arc<Pod>, std::sync::Arc<Facts>)>,
    /// Changes whenever `held` does; never the same for two different sets.
    pub version: u64,
}

/// Whether one of the diagnoses looks for this pod among all of them.
fn notable(p: &Pod) -> bool {
    p.is_device_plugin() || is_unscheduled(p) || refused_shared(p) || after_binding(p)
}

/// A GPU pod the node has had its say on: refused, evicted or otherwise failed by the kubelet,
/// bound but not started, or with containers that are not running or have restarted (its
/// states are kept only then, see [`Pod::strip`]).
pub fn after_binding(p: &Pod) -> bool {
    let Some(st) = p.status.as_ref() else { return false };
    node_of(p).is_some()
        && p.is_gpu()
        && (st.container_statuses.is_some() || matches!(st.phase.as_deref(), Some("Failed" | "Pending")))
}

/// The kubelet refused the pod at admission for asking more than one replica of a shared GPU.
pub fn refused_shared(p: &Pod) -> bool {
    p.status.as_ref().is_some_and(|s| {
        s.reason.as_deref() == Some("UnexpectedAdmissionError")
            && s.message.as_deref().is_some_and(|m| m.contains("shared"))
    })
}

/// Hashing for addresses: they are distinct and not chosen by anyone outside, so a multiply
/// spreads them well enough, at a fraction of SipHash's cost.
#[derive(Debug, Default, Clone, Copy)]
pub struct AddrHash;

/// [`AddrHash`]'s hasher.
#[derive(Debug, Default)]
pub struct AddrHasher(u64);

impl std::hash::BuildHasher for AddrHash {
    type Hasher = AddrHasher;
    fn build_hasher(&self) -> AddrHasher {
        AddrHasher(0)
    }
}

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}

/// An object's address: the stores hand out the same `Arc` until the object changes.
pub(crate) fn addr<T>(o: &std::sync::Arc<T>) -> usize {
    std::sync::Arc::as_ptr(o) as usize
}

/// What changed between the addresses a list had (`order`) and the list now: the addresses
/// gone and the positions of the objects that are new there, or `None` when the list is the
/// same object for object (the common case: one object changed is one position). Only the
/// positions that differ are looked at; an object new at a position may be kept from elsewhere
/// in the list, and the caller knows.
pub(crate) fn changed<T>(order: &[usize], now: &[std::sync::Arc<T>]) -> Option<(Vec<usize>, Vec<usize>)> {
    let moved: Vec<usize> =
        (0..now.len().max(order.len())).filter(|&i| now.get(i).map(addr) != order.get(i).copied()).collect();
    if moved.is_empty() {
        return None;
    }
    let here: std::collections::HashMap<usize, usize, AddrHash> =
        moved.iter().filter_map(|&i| now.get(i).map(|o| (addr(o), i))).collect();
    let before: std::collections::HashSet<usize, AddrHash> =
        moved.iter().filter_map(|&i| order.get(i).copied()).collect();
    let gone = before.iter().filter(|a| !here.contains_key(a)).copied().collect();
    let new = here.iter().filter(|(a, _)| !before.contains(a)).map(|(_, i)| *i).collect();
    Some((gone, new))
}

impl PodIndex {
    /// Takes in the pods as they are now.
    pub fn update(&mut self, pods: &[std::sync::Arc<Pod>]) {
        let new = if self.order.is_empty() {
            // The first list (or the first after every pod went): every pod is new, nothing to
            // compare with.
            self.by_addr.reserve(pods.len());
            (0..pods.len()).collect()
        } else {
            let Some((gone, new)) = changed(&self.order, pods) else { return };
            for a in gone {
                self.forget(a);
            }
            new
        };
        for i in new {
            if !self.by_addr.contains_key(&addr(&pods[i])) {
                self.learn(&pods[i]);
            }
        }
        self.order = pods.iter().map(addr).collect();
    }

    fn forget(&mut self, a: usize) {
        let Some(kept) = self.by_addr.remove(&a) else { return };
        self.notable.remove(&a);
        if let Some(n) = held_on(&kept.pod) {
            if let Some(np) = self.by_node.get_mut(n) {
                np.held.retain(|(p, _)| std::sync::Arc::as_ptr(p) as usize != a);
                self.versions += 1;
                np.version = self.versions;
                if np.held.is_empty() {
                    self.by_node.remove(n);
                }
            }
        }
    }

    fn learn(&mut self, p: &std::sync::Arc<Pod>) {
        let a = std::sync::Arc::as_ptr(p) as usize;
        let facts = p.facts().clone();
        if let Some(n) = held_on(p) {
            self.versions += 1;
            let held = (p.clone(), facts.clone());
            // Looked up before a key is made: most pods join a node already there.
            match self.by_node.get_mut(n) {
                Some(np) => {
                    let at = np.held.partition_point(|(q, _)| (std::sync::Arc::as_ptr(q) as usize) < a);
                    np.held.insert(at, held);
                    np.version = self.versions;
                }
                None => {
                    self.by_node.insert(n.to_string(), NodePods { held: vec![held], version: self.versions });
                }
            }
        }
        if notable(p) {
            self.notable.insert(a, p.clone());
        }
        self.by_addr.insert(a, Kept { pod: p.clone(), facts });
    }

    /// The pods holding resources on a node, with the version of that set.
    pub fn on(&self, node: &str) -> Option<&NodePods> {
        self.by_node.get(node)
    }

    /// Every node that holds pods, with them.
    pub fn nodes(&self) -> impl Iterator<Item = (&str, &NodePods)> {
        self.by_node.iter().map(|(n, p)| (n.as_str(), p))
    }

    /// The facts of a pod the last [`update`](Self::update) took in.
    pub fn facts(&self, p: &std::sync::Arc<Pod>) -> Option<&std::sync::Arc<Facts>> {
        self.by_addr.get(&(std::sync::Arc::as_ptr(p) as usize)).map(|k| &k.facts)
    }

    /// Device-plugin pods, pods waiting for the scheduler and pods the kubelet refused, in no
    /// particular order.
    pub fn notable(&self) -> impl Iterator<Item = &std::sync::Arc<Pod>> {
        self.notable.values()
    }

    /// How many pods are kept.
    pub fn len(&self) -> usize {
        self.by_addr.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_addr.is_empty()
    }
}

/// namespace/name.
pub fn key(pod: &Pod) -> (String, String) {
    (pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_yaml::from_str(yaml).expect("fixture")
    }

    #[test]
    fn effective_request_is_max_of_init_and_sum_of_containers() {
        let p = pod(r#"
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml}
spec:
  initContainers:
  - {name: fetch, resources: {requests: {memory: 3Gi, cpu: "2"}}}
  containers:
  - {name: a, resources: {requests: {memory: 1Gi, cpu: 500m, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}
  - {name: b, resources: {requests: {memory: 1Gi, cpu: 250m}}}
"#);
        let r = effective_requests(&p);
        assert_eq!(r.get("memory"), Some(&(3i128 << 30).checked_mul(1000).unwrap_or_default()));
        assert_eq!(r.get("cpu"), Some(&2_000));
        assert_eq!(units(r["nvidia.com/gpu"]), 1);
    }

    #[test]
    fn sidecars_add_to_containers_and_limits_default_requests() {
        let p = pod(r#"
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  initContainers:
  - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: 100m}}}
  - {name: init, resources: {requests: {cpu: 150m}}}
  containers:
  - {name: a, resources: {limits: {nvidia.com/gpu: "2", cpu: 200m}}}
  overhead: {cpu: 10m}
"#);
        let r = effective_requests(&p);
        // max(200 + 100 sidecar, 100 + 150 init step) + 10 overhead
        assert_eq!(r.get("cpu"), Some(&310));
        assert_eq!(units(r["nvidia.com/gpu"]), 2);
    }

    #[test]
    fn containers_without_memory_limits_are_unbounded() {
        let p = pod(r#"
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - {name: a, resources: {limits: {memory: 2Gi}}}
  - {name: b}
"#);
        assert_eq!(memory_limit(&p), (2 << 30, 1));
    }

    #[test]
    fn finished_and_unbound_pods_hold_nothing() {
        let running = pod("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {nodeName: n, containers: []}\nstatus: {phase: Running}\n");
        let pulling = pod("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {nodeName: n, containers: []}\nstatus: {phase: Pending}\n");
        let done = pod("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {nodeName: n, containers: []}\nstatus: {phase: Succeeded}\n");
        let waiting =
            pod("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: []}\nstatus: {phase: Pending}\n");
        assert!(holds_resources(&running));
        assert!(holds_resources(&pulling));
        assert!(!holds_resources(&done));
        assert!(!holds_resources(&waiting));
        assert!(is_unscheduled(&waiting));
        assert!(!is_unscheduled(&pulling));
    }
}
