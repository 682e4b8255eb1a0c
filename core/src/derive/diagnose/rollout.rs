//! `gpu-rollout-deadlock`: an update that cannot finish because its new pod waits for the GPU
//! its own old pod holds — a Deployment's rolling update that surges (with one replica,
//! `maxSurge: 25%` rounds up to 1 and `maxUnavailable: 25%` down to 0), or a DaemonSet updated
//! with `maxSurge`. The strategy is read from the Deployment or DaemonSet object when it is
//! watched, from the ReplicaSet's annotations otherwise.

use gpudash_model::i18n::Said;
use gpudash_model::model::GpuResource;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::rollout_said as said;
use super::{list, Ctx};
use crate::pod::Pod;

/// A surge value as written and as the controller resolves it.
struct Scaled {
    written: String,
    value: i64,
}

/// `maxSurge`/`maxUnavailable` of `total` ([`crate::derive::strategy::scaled`]).
fn scaled(v: Option<&IntOrString>, default: &str, total: i64, round_up: bool) -> Scaled {
    let written = match v {
        Some(IntOrString::Int(i)) => i.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => default.to_string(),
    };
    let value = crate::derive::strategy::scaled(&written, total, round_up);
    Scaled { written, value }
}

/// The update strategy in effect, from the workload object.
struct Strategy {
    surge: Scaled,
    unavailable: Scaled,
    /// Replicas (Deployment) or nodes that should run a pod (DaemonSet).
    of: i64,
}

/// Deployment only: its progress deadline and, when passed, when.
struct Progress {
    deadline_s: i64,
    exceeded_at: Option<jiff::Timestamp>,
}

/// What kind of update is stuck.
enum Owner {
    /// A Deployment's rolling update: the new ReplicaSet (name, revision) and the old ones.
    Deployment {
        new_rs: String,
        revision: Option<String>,
        old_rs: Vec<String>,
        /// From the ReplicaSet's annotations when the Deployment is not watched.
        desired: Option<i64>,
        max: Option<i64>,
        progress: Option<Progress>,
    },
    /// A DaemonSet's surge on one node.
    DaemonSet { node: String },
}

/// A rollout that cannot finish: a new pod waits for units the same workload's old pods hold.
pub(super) struct Rollout {
    pub(super) namespace: String,
    /// The Deployment's or DaemonSet's name.
    pub(super) name: String,
    pub(super) old_pods: Vec<String>,
    owner: Owner,
    strategy: Option<Strategy>,
    since: Option<jiff::Timestamp>,
}

fn controller(refs: Option<&Vec<OwnerReference>>) -> Option<&OwnerReference> {
    refs?.iter().find(|o| o.controller == Some(true))
}

/// The ReplicaSet a pod belongs to, and that ReplicaSet's Deployment (name, uid).
fn rs_owner<'a>(cx: &Ctx<'a>, ns: &str, pod: &Pod) -> Option<(&'a ReplicaSet, String, String)> {
    let o = controller(pod.metadata.owner_references.as_ref()).filter(|o| o.kind == "ReplicaSet")?;
    let rs =
        cx.inputs.replica_sets.iter().find(|r| {
            r.metadata.namespace.as_deref() == Some(ns) && r.metadata.name.as_deref() == Some(o.name.as_str())
        })?;
    let d = rs.metadata.owner_references.as_ref()?.iter().find(|o| o.kind == "Deployment")?;
    Some((rs.as_ref(), d.name.clone(), d.uid.clone()))
}

/// The node a DaemonSet pod is pinned to (the controller's `matchFields metadata.name`).
fn pinned_node(pod: &Pod) -> Option<&str> {
    let terms = pod
        .spec
        .as_ref()?
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?;
    terms.node_selector_terms.iter().flat_map(|t| t.match_fields.iter().flatten()).find_map(|f| {
        (f.key == "metadata.name" && f.operator == "In").then(|| f.values.as_ref()?.first().map(String::as_str))?
    })
}

fn find<'a, T: kube_core::Resource>(objs: &'a [std::sync::Arc<T>], ns: &str, name: &str, uid: &str) -> Option<&'a T> {
    objs.iter()
        .find(|o| {
            let m = o.meta();
            m.namespace.as_deref() == Some(ns)
                && m.name.as_deref() == Some(name)
                && (uid.is_empty() || m.uid.as_deref().is_none_or(|u| u == uid))
        })
        .map(AsRef::as_ref)
}

/// The pods in `ns` holding `res` on these nodes, other than `pod`: each node's holders found
/// among the pods on that node (no walk over every pod of the cluster for each waiting pod).
fn holders<'a>(
    cx: &Ctx<'a>,
    ns: &str,
    res: &str,
    on: &[(&Node, &GpuResource)],
    pod: &Pod,
) -> impl Iterator<Item = &'a std::sync::Arc<Pod>> {
    let me = pod.metadata.name.as_deref();
    let mut found: Vec<&'a std::sync::Arc<Pod>> = Vec::new();
    for (n, g) in on.iter().filter(|(_, g)| g.resource == res) {
        let start = found.len();
        for h in g.holders.iter().filter(|h| h.namespace == ns && Some(h.name.as_str()) != me) {
            let p = cx.held_on(n, ns, &h.name);
            if let Some(p) = p.filter(|p| !found[start..].iter().any(|q| std::sync::Arc::ptr_eq(q, p))) {
                found.push(p);
            }
        }
    }
    found.into_iter()
}

/// `gpu-rollout-deadlock`: the waiting pod is a new pod of a Deployment's rolling update or a
/// DaemonSet's surging update, and every unit it could use is held, some by old pods of the same
/// workload. Not raised when a unit is free, or when the strategy takes an old pod down first.
pub(super) fn rollout_deadlock(
    cx: &Ctx<'_>,
    pod: &Pod,
    res: &str,
    want: u64,
    with_res: &[(&Node, &GpuResource)],
) -> Option<Rollout> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    // Only a ReplicaSet's or a DaemonSet's pod waits on its own workload's rollout.
    let owner = controller(pod.metadata.owner_references.as_ref())?;
    if owner.kind != "ReplicaSet" && owner.kind != "DaemonSet" {
        return None;
    }
    let pinned = pinned_node(pod);
    let on: Vec<(&Node, &GpuResource)> = with_res
        .iter()
        .filter(|(n, _)| pinned.is_none_or(|p| n.metadata.name.as_deref() == Some(p)))
        .copied()
        .collect();
    // A unit free where it could go: the pod will be placed, whatever the scheduler said before.
    if on.iter().any(|(_, g)| g.resource == res && g.allocatable.saturating_sub(g.allocated) >= want) {
        return None;
    }
    let since = pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let holding = holders(cx, ns, res, &on, pod);
    if owner.kind == "DaemonSet" {
        daemonset_rollout(cx, ns, owner, pinned?, holding, since)
    } else {
        deployment_rollout(cx, ns, pod, holding, since)
    }
}

/// A DaemonSet's surging update on the node its new pod is pinned to.
fn daemonset_rollout<'a>(
    cx: &Ctx<'a>,
    ns: &str,
    o: &OwnerReference,
    node: &str,
    holding: impl Iterator<Item = &'a std::sync::Arc<Pod>>,
    since: Option<jiff::Timestamp>,
) -> Option<Rollout> {
    let node = node.to_string();
    let old_pods: Vec<String> = holding
        .filter(|h| controller(h.metadata.owner_references.as_ref()).is_some_and(|c| c.uid == o.uid))
        .filter_map(|h| h.metadata.name.clone())
        .collect();
    let ds = find::<DaemonSet>(&cx.inputs.daemon_sets, ns, &o.name, &o.uid);
    let strategy = ds.and_then(|d| d.spec.as_ref()).map(|s| s.update_strategy.clone().unwrap_or_default());
    if strategy.as_ref().and_then(|s| s.type_.as_deref()) == Some("OnDelete") {
        return None;
    }
    let strategy = strategy.map(|s| {
        let of = ds.and_then(|d| d.status.as_ref()).map_or(0, |s| i64::from(s.desired_number_scheduled));
        let ru = s.rolling_update.unwrap_or_default();
        Strategy {
            surge: scaled(ru.max_surge.as_ref(), "0", of, true),
            unavailable: scaled(ru.max_unavailable.as_ref(), "1", of, true),
            of,
        }
    });
    // Without surge the controller deletes the old pod first.
    if old_pods.is_empty() || strategy.as_ref().is_some_and(|s| s.surge.value == 0) {
        return None;
    }
    Some(Rollout {
        namespace: ns.to_string(),
        name: o.name.clone(),
        old_pods,
        owner: Owner::DaemonSet { node },
        strategy,
        since,
    })
}

/// A Deployment's rolling update whose new pod waits for what its old pods hold.
fn deployment_rollout<'a>(
    cx: &Ctx<'a>,
    ns: &str,
    pod: &Pod,
    holding: impl Iterator<Item = &'a std::sync::Arc<Pod>>,
    since: Option<jiff::Timestamp>,
) -> Option<Rollout> {
    let (new_rs, deployment, uid) = rs_owner(cx, ns, pod)?;
    let new_name = new_rs.metadata.name.clone().unwrap_or_default();
    let mut old_rs = Vec::new();
    let mut old_pods = Vec::new();
    for holder in holding {
        let Some((rs, _, d_uid)) = rs_owner(cx, ns, holder) else { continue };
        let rs_name = rs.metadata.name.clone().unwrap_or_default();
        if d_uid == uid && rs_name != new_name {
            if !old_rs.contains(&rs_name) {
                old_rs.push(rs_name);
            }
            old_pods.push(holder.metadata.name.clone().unwrap_or_default());
        }
    }
    if old_pods.is_empty() {
        return None;
    }
    let d = find::<Deployment>(&cx.inputs.deployments, ns, &deployment, &uid);
    let spec = d.and_then(|d| d.spec.as_ref());
    let kind = spec.and_then(|s| s.strategy.as_ref()).and_then(|s| s.type_.as_deref());
    if kind == Some("Recreate") {
        // The old pods go first; a new pod meanwhile waits for one that is terminating.
        return None;
    }
    let strategy = spec.map(|s| {
        let of = i64::from(s.replicas.unwrap_or(1));
        let ru = s.strategy.as_ref().and_then(|s| s.rolling_update.clone()).unwrap_or_default();
        let mut surge = scaled(ru.max_surge.as_ref(), "25%", of, true);
        let mut unavailable = scaled(ru.max_unavailable.as_ref(), "25%", of, false);
        // The controller's fencepost: never both zero.
        (surge.value, unavailable.value) =
            crate::derive::strategy::deployment(Some(&surge.written), Some(&unavailable.written), of);
        Strategy { surge, unavailable, of }
    });
    // With room to take an old pod down, the controller does, and the unit frees.
    if strategy.as_ref().is_some_and(|s| s.unavailable.value >= 1) {
        return None;
    }
    let progress = spec.map(|s| Progress {
        deadline_s: i64::from(s.progress_deadline_seconds.unwrap_or(600)),
        exceeded_at: d
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| {
                c.iter().find(|c| c.type_ == "Progressing" && c.reason.as_deref() == Some("ProgressDeadlineExceeded"))
            })
            .and_then(|c| c.last_transition_time.as_ref().or(c.last_update_time.as_ref()))
            .map(|t| t.0),
    });
    let ann = |k: &str| new_rs.metadata.annotations.as_ref().and_then(|a| a.get(k)).cloned();
    Some(Rollout {
        namespace: ns.to_string(),
        name: deployment,
        old_pods,
        owner: Owner::Deployment {
            new_rs: new_name,
            revision: ann("deployment.kubernetes.io/revision"),
            old_rs,
            desired: ann("deployment.kubernetes.io/desired-replicas").and_then(|v| v.parse().ok()),
            max: ann("deployment.kubernetes.io/max-replicas").and_then(|v| v.parse().ok()),
            progress,
        },
        strategy,
        since,
    })
}

impl Rollout {
    /// The diagnosis' kind: `Deployment` or `DaemonSet`.
    pub(super) fn kind(&self) -> &'static str {
        match self.owner {
            Owner::Deployment { .. } => "Deployment",
            Owner::DaemonSet { .. } => "DaemonSet",
        }
    }

    /// The node a DaemonSet's update is stuck on (a Deployment's may span several: none).
    pub(super) fn node(&self) -> Option<&str> {
        match &self.owner {
            Owner::Deployment { .. } => None,
            Owner::DaemonSet { node } => Some(node),
        }
    }

    /// What the waiting pod is told.
    pub(super) fn waiting_text(&self, res: &str, want: u64) -> Said {
        let olds = list(&self.old_pods);
        let workload = format!("{}/{}", self.namespace, self.name);
        match &self.owner {
            Owner::Deployment { .. } => said::waiting_deployment(&want, res, &olds, &workload),
            Owner::DaemonSet { node } => said::waiting_daemonset(&want, res, node, &olds, &workload),
        }
    }

    /// How long the new pod has waited.
    fn waited(&self, now: jiff::Timestamp) -> Option<i64> {
        self.since.map(|t| now.duration_since(t).as_secs().max(0) / 60)
    }

    /// The diagnosis on the workload.
    pub(super) fn text(&self, now: jiff::Timestamp, pod: &str, res: &str, want: u64) -> Said {
        let olds = list(&self.old_pods);
        match &self.owner {
            Owner::Deployment { new_rs, revision, old_rs, desired, max, progress } => {
                let revision: Said = revision.as_deref().map(said::revision).unwrap_or_default();
                let surge = match (&self.strategy, desired, max) {
                    (Some(s), _, _) => said::deployment_strategy(
                        &s.surge.written,
                        &s.surge.value,
                        &s.unavailable.written,
                        &s.unavailable.value,
                        &s.of,
                    ),
                    (None, Some(desired), Some(max)) => said::replicaset_surge(desired, max, &(max - desired)),
                    _ => said::surges_first(),
                };
                let deadline = match progress {
                    Some(Progress { deadline_s, exceeded_at: Some(t) }) => said::deadline_passed(deadline_s, &t),
                    Some(Progress { deadline_s, exceeded_at: None }) => said::deadline_ahead(deadline_s),
                    None => said::deadline_default(),
                };
                let waited = match self.waited(now) {
                    Some(m) => said::waited(&m, &deadline),
                    None => deadline,
                };
                let (ns, d) = (&self.namespace, &self.name);
                said::deployment_stuck(ns, d, pod, new_rs, &revision, &want, res, &olds, &list(old_rs), &surge, &waited)
            }
            Owner::DaemonSet { node } => {
                let surge = match &self.strategy {
                    Some(s) => said::daemonset_strategy(&s.surge.written, &s.surge.value, &s.of),
                    None => said::daemonset_surges(),
                };
                let waited: Said = self.waited(now).map(|m| said::waited_min(&m)).unwrap_or_default();
                let (ns, d) = (&self.namespace, &self.name);
                said::daemonset_stuck(ns, d, node, pod, &want, res, &olds, &surge, &waited)
            }
        }
    }
}
