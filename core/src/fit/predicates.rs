//! The scheduler's node filters the what-if check applies as the scheduler does: taints and
//! tolerations, the node selector and required node affinity, the cordon.

use k8s_openapi::api::core::v1::{Node, NodeSelectorRequirement, Taint, Toleration};

use crate::derive::node as dnode;
use crate::pod::Pod;

/// Whether a toleration tolerates a taint (an empty effect any effect; `Exists` with no key
/// every taint).
pub(crate) fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    if let Some(e) = t.effect.as_deref().filter(|e| !e.is_empty()) {
        if e != taint.effect {
            return false;
        }
    }
    match t.operator.as_deref().unwrap_or("Equal") {
        "Exists" => t.key.as_deref().unwrap_or("").is_empty() || t.key.as_deref() == Some(taint.key.as_str()),
        _ => {
            t.key.as_deref() == Some(taint.key.as_str())
                && t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
    }
}

/// Whether a label value (`None`: no such label) meets a node selector requirement.
fn requirement(req: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = req.values.as_deref().unwrap_or(&[]);
    let num = |s: &str| s.trim().parse::<i64>().ok();
    match req.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => !value.is_some_and(|v| values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => matches!((value.and_then(num), values.first().and_then(|x| num(x))), (Some(a), Some(b)) if a > b),
        "Lt" => matches!((value.and_then(num), values.first().and_then(|x| num(x))), (Some(a), Some(b)) if a < b),
        _ => false,
    }
}

/// nodeSelector and required node affinity (terms OR'd, expressions AND'd).
pub fn matches_affinity(pod: &Pod, node: &Node) -> bool {
    let labels = dnode::labels(node);
    let spec = pod.spec.as_ref();
    if let Some(sel) = spec.and_then(|s| s.node_selector.as_ref()) {
        if !sel.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            return false;
        }
    }
    let terms = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref())
        .map(|r| &r.node_selector_terms);
    match terms {
        None => true,
        Some(terms) => terms.iter().any(|t| {
            let exprs =
                t.match_expressions.iter().flatten().all(|r| requirement(r, labels.get(&r.key).map(String::as_str)));
            let name = node.metadata.name.as_deref();
            let fields = t.match_fields.iter().flatten().all(|r| r.key == "metadata.name" && requirement(r, name));
            (t.match_expressions.is_some() || t.match_fields.is_some()) && exprs && fields
        }),
    }
}

/// Taints with a NoSchedule or NoExecute effect that the pod does not tolerate (a NotReady node
/// carries `node.kubernetes.io/not-ready`, an unreachable one `node.kubernetes.io/unreachable`).
pub fn untolerated(pod: &Pod, node: &Node) -> Vec<Taint> {
    let mut taints: Vec<Taint> = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
    let (ready, _) = dnode::conditions(node);
    if !ready
        && !taints.iter().any(|t| {
            t.key.starts_with("node.kubernetes.io/not-ready") || t.key.starts_with("node.kubernetes.io/unreachable")
        })
    {
        taints.push(Taint {
            key: "node.kubernetes.io/not-ready".into(),
            effect: "NoSchedule".into(),
            ..Taint::default()
        });
    }
    let tols = pod.spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or(&[]);
    taints.into_iter().filter(|t| t.effect != "PreferNoSchedule" && !tols.iter().any(|x| tolerates(x, t))).collect()
}

/// Whether the pod tolerates the `unschedulable` taint a cordoned node carries.
pub(super) fn tolerates_cordon(pod: &Pod) -> bool {
    let cordon =
        Taint { key: "node.kubernetes.io/unschedulable".into(), effect: "NoSchedule".into(), ..Taint::default() };
    pod.spec.as_ref().and_then(|s| s.tolerations.as_ref()).is_some_and(|t| t.iter().any(|x| tolerates(x, &cordon)))
}
