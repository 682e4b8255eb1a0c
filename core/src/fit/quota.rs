//! Quota admission for the what-if check: the API server refuses a pod whose namespace's
//! ResourceQuota has no room for its GPU request before any scheduler sees it, in these words:
//! `pods "x" is forbidden: exceeded quota: NAME, requested: K=V, used: K=V, limited: K=V`.

use gpudash_model::say;
use k8s_openapi::api::core::v1::{Pod, ResourceQuota};

use crate::derive::pods::{units, Amounts};
use crate::derive::quota::{gpu_entries, GpuEntry};
use crate::derive::Inputs;

/// Whether a quota's scopes select this pod (the scopes gpudash can evaluate; others are
/// taken to select it, so a refusal may be stricter than the API server's, never looser).
fn selects(q: &ResourceQuota, pod: &Pod) -> bool {
    let spec = pod.spec.as_ref();
    let priority = spec.and_then(|s| s.priority_class_name.as_deref());
    let terminating = spec.and_then(|s| s.active_deadline_seconds).is_some();
    let qs = q.spec.as_ref();
    let scopes_ok = qs.and_then(|s| s.scopes.as_ref()).into_iter().flatten().all(|scope| match scope.as_str() {
        // A pod asking for a GPU has a request: never BestEffort.
        "BestEffort" => false,
        "NotBestEffort" => true,
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        _ => true,
    });
    let selector_ok = qs
        .and_then(|s| s.scope_selector.as_ref())
        .and_then(|s| s.match_expressions.as_ref())
        .into_iter()
        .flatten()
        .all(|e| {
            let values = e.values.as_deref().unwrap_or(&[]);
            match (e.scope_name.as_str(), e.operator.as_str()) {
                ("PriorityClass", "In") => priority.is_some_and(|p| values.iter().any(|v| v == p)),
                ("PriorityClass", "NotIn") => priority.is_none_or(|p| !values.iter().any(|v| v == p)),
                ("PriorityClass", "Exists") => priority.is_some(),
                ("PriorityClass", "DoesNotExist") => priority.is_none(),
                ("BestEffort", _) => false,
                ("Terminating", _) => terminating,
                ("NotTerminating", _) => !terminating,
                _ => true,
            }
        });
    scopes_ok && selector_ok
}

/// Checks the namespace's GPU quotas for `replicas` pods asking `req` each. Returns the API
/// server's refusal when even the first pod is refused (with what to do), or only advice when
/// some replicas are admitted and others are not; `None` when the quota is no obstacle.
pub fn admit(
    inputs: &Inputs,
    pod: &Pod,
    req: &Amounts,
    replicas: u32,
) -> Option<(Option<String>, gpudash_model::i18n::Said)> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let name = pod.metadata.name.as_deref().unwrap_or("what-if");
    let mut fewest: Option<(u64, gpudash_model::i18n::Said)> = None;
    for q in inputs.quotas.iter().filter(|q| q.metadata.namespace.as_deref() == Some(ns)) {
        if !selects(q, pod) {
            continue;
        }
        let qname = q.metadata.name.as_deref().unwrap_or("");
        for GpuEntry { key, resource, hard, used, .. } in gpu_entries(q).into_iter().filter(|e| !e.device_class) {
            let asked = units(req.get(&resource).copied().unwrap_or(0));
            if asked == 0 {
                continue;
            }
            let room = hard.saturating_sub(used) / asked;
            if room == 0 {
                let words = format!("pods \"{name}\" is forbidden: exceeded quota: {qname}, requested: {key}={asked}, used: {key}={used}, limited: \
                    {key}={hard}");
                let advice = say!(
                    "the namespace {ns} has used {used} of the {hard} {key} its ResourceQuota {qname} allows: raise the quota, free \
                     a replica in {ns}, or deploy to a namespace with room",
                    "namespace {ns} は ResourceQuota {qname} が許す {key} {hard} のうち {used} \
                     を使っています。\
                     クォータを上げる、{ns} でレプリカを空ける、または余裕のある namespace にデプロイしてください"
                );
                return Some((Some(words), advice));
            }
            if u64::from(replicas) > room && fewest.as_ref().is_none_or(|(r, _)| room < *r) {
                let advice = say!(
                    "ResourceQuota {qname} in {ns} admits only {room} of the {replicas} replicas ({used} of {hard} {key} in \
                     use, {asked} a pod): the rest would never be created",
                    "{ns} の ResourceQuota {qname} が受け入れるのはレプリカ {replicas} 個中 {room} 個だけです（{key} \
                     {hard} のうち {used} が使用中、1 Pod あたり {asked}）。残りは作成されません"
                );
                fewest = Some((room, advice));
            }
        }
    }
    fewest.map(|(_, advice)| (None, advice))
}
