//! `gpu-quota-exhausted`: a workload whose pods the API server refuses because its namespace's
//! GPU quota is used up — no pod exists, nothing is Pending, and without this the dashboard
//! would show a free replica and say nothing. Read from the controllers' `FailedCreate` events
//! (`… is forbidden: exceeded quota: gpu-quota, requested: …, used: …, limited: …`), checked
//! against the quota and the workload as they are now.

use std::collections::HashMap;

use gpudash_model::model::{Code, Diagnosis, GpuRequest, Kind, PendingPod, QuotaView, Severity};

use super::quota_said as said;
use gpudash_model::i18n::Said;

use super::{diag, list, Ctx};
use crate::derive::quota::gpu_key;
use crate::quantity::GpuCount;

/// What an `exceeded quota` message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    /// The ResourceQuota's name.
    pub quota: String,
    /// Key and amount asked for by one pod.
    pub requested: Vec<(String, String)>,
    /// Key and amount in use.
    pub used: Vec<(String, String)>,
    /// Key and hard limit.
    pub limited: Vec<(String, String)>,
}

fn pairs(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|kv| kv.trim().split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Parses the API server's `exceeded quota: NAME, requested: K=V[,K=V], used: …, limited: …`.
pub fn parse_exceeded(msg: &str) -> Option<Exceeded> {
    let rest = &msg[msg.find("exceeded quota: ")? + "exceeded quota: ".len()..];
    let (quota, rest) = rest.split_once(", requested: ")?;
    let (requested, rest) = rest.split_once(", used: ")?;
    let (used, limited) = rest.split_once(", limited: ")?;
    Some(Exceeded {
        quota: quota.trim().to_string(),
        requested: pairs(requested),
        used: pairs(used),
        limited: pairs(limited.trim_end_matches(['.', ' '])),
    })
}

/// Controllers that create pods and record `FailedCreate` when the API server refuses them.
const CONTROLLERS: [&str; 5] = ["ReplicaSet", "Job", "StatefulSet", "DaemonSet", "ReplicationController"];

/// The newest `FailedCreate` of each workload (kind, namespace, name) whose message is a GPU
/// quota refusal, read.
fn newest_refusals<'a>(
    cx: &Ctx<'a>,
) -> HashMap<(&'a str, &'a str, &'a str), (&'a k8s_openapi::api::core::v1::Event, Exceeded)> {
    let mut newest: HashMap<(&str, &str, &str), (&k8s_openapi::api::core::v1::Event, Exceeded)> = HashMap::new();
    for e in &cx.inputs.events {
        let o = &e.involved_object;
        let kind = o.kind.as_deref().unwrap_or("");
        if e.reason.as_deref() != Some("FailedCreate") || !CONTROLLERS.contains(&kind) {
            continue;
        }
        let Some(x) = e.message.as_deref().and_then(parse_exceeded) else { continue };
        if !x.requested.iter().any(|(k, _)| gpu_key(k).is_some()) {
            continue;
        }
        let key = (kind, o.namespace.as_deref().unwrap_or(""), o.name.as_deref().unwrap_or(""));
        let t = crate::derive::event_time(e);
        if newest.get(&key).is_none_or(|(old, _)| crate::derive::event_time(old) <= t) {
            newest.insert(key, (e.as_ref(), x));
        }
    }
    newest
}

/// What `gpu-quota-exhausted` says of a workload that asked `asked` of `key` over quota `q`.
fn refusal_text(q: &QuotaView, kind: &str, ns: &str, name: &str, key: &str, asked: u64) -> Said {
    let res = q.gpu_resource.as_str();
    let qn = &q.name;
    let holding: Said = if q.pods.is_empty() {
        Said::default()
    } else {
        let who = list(&q.pods);
        said::held(&who)
    };
    let cluster = match q.cluster_free {
        Some(free) if free >= asked => said::cluster_has_free_only_quota(&free, &res, &ns, &qn),
        Some(free) if free > 0 => said::cluster_has_only_free_fewer(&free, &res, &ns),
        Some(_) => said::cluster_has_no_free_either(&res, &ns),
        None => said::raise_quota_kubectl_n_edit(&ns, &qn, &res),
    };
    let scoped: Said = if q.scopes.is_empty() {
        Said::default()
    } else {
        let sc = q.scopes.join("; ");
        said::scoped(&sc)
    };
    let (hard, used) = (q.hard, q.used);
    said::cannot_create_pods_resourcequota_allows(
        &kind, &ns, &name, &qn, &scoped, &hard, &key, &used, &holding, &asked, &cluster,
    )
}

/// The workloads a GPU quota keeps from creating pods, as pending-page entries, and their
/// diagnoses.
pub(super) fn gpu_quota_exhausted(cx: &Ctx<'_>, quotas: &[QuotaView], out: &mut Vec<Diagnosis>) -> Vec<PendingPod> {
    let newest = newest_refusals(cx);
    let mut blocked = Vec::new();
    for ((kind, ns, name), (e, x)) in newest {
        // Still blocked? A ReplicaSet that has all its pods now is not; nor is a workload whose
        // quota has room for another pod (or is gone).
        if kind == "ReplicaSet" {
            let rs = cx
                .inputs
                .replica_sets
                .iter()
                .find(|r| r.metadata.namespace.as_deref() == Some(ns) && r.metadata.name.as_deref() == Some(name));
            if let Some(rs) = rs {
                let want = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                let have = rs.status.as_ref().map_or(0, |s| s.replicas);
                if have >= want {
                    continue;
                }
            }
        }
        let Some((key, asked)) = x.requested.iter().find(|(k, _)| gpu_key(k).is_some()) else { continue };
        let asked = GpuCount::parse(asked).map_or(1, |c| c.0);
        let Some(q) = quotas.iter().find(|q| q.namespace == ns && q.name == x.quota && q.resource == *key) else {
            continue;
        };
        if q.used + asked <= q.hard {
            continue;
        }
        let text = refusal_text(q, kind, ns, name, key, asked);
        let d = diag(Code::GpuQuotaExhausted, Severity::Critical, Kind::from(kind), Some(ns), name, text);
        out.push(d.clone());
        let since = e.first_timestamp.as_ref().map(|t| t.0).or_else(|| crate::derive::event_time(e));
        blocked.push(PendingPod {
            namespace: ns.to_string(),
            name: name.to_string(),
            pending_since: since.map(|t| crate::derive::ts(&t)),
            gpu_request: Some(GpuRequest { resource: q.gpu_resource.clone(), count: asked }),
            message: e.message.clone(),
            nodes_total: None,
            reasons: vec![crate::derive::scheduler::reason(format!("exceeded quota: {}", q.name), None)],
            diagnoses: vec![d.code.clone()],
            problems: vec![std::sync::Arc::new(d)],
            workload: Some(kind.to_string()),
            ..PendingPod::default()
        });
    }
    blocked.sort_by(|a, b| (&a.pending_since, &a.namespace, &a.name).cmp(&(&b.pending_since, &b.namespace, &b.name)));
    blocked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_servers_exceeded_quota_message_parses() {
        let m = "Error creating: pods \"team-workload-2-7c9d8f6b5-x2k4p\" is forbidden: exceeded quota: gpu-quota, requested: \
            requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1";
        let x = parse_exceeded(m).unwrap_or_else(|| panic!("parse"));
        assert_eq!(x.quota, "gpu-quota");
        assert_eq!(x.requested, vec![("requests.nvidia.com/gpu".to_string(), "1".to_string())]);
        assert_eq!(x.limited, vec![("requests.nvidia.com/gpu".to_string(), "1".to_string())]);
        let several = "pods \"a\" is forbidden: exceeded quota: team, requested: limits.memory=4Gi,requests.nvidia.com/gpu=2, used: \
            limits.memory=12Gi,requests.nvidia.com/gpu=3, limited: limits.memory=16Gi,requests.nvidia.com/gpu=4";
        let x = parse_exceeded(several).unwrap_or_else(|| panic!("parse"));
        assert_eq!(x.requested.len(), 2);
        assert_eq!(x.used[1], ("requests.nvidia.com/gpu".to_string(), "3".to_string()));
        for junk in ["", "exceeded quota: ", "exceeded quota: q, requested: a=1", "forbidden"] {
            assert_eq!(parse_exceeded(junk), None, "{junk}");
        }
    }
}
