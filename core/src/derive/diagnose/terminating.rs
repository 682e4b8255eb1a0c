//! gpu-held-by-terminating-pod: a GPU unit a waiting pod could use is held by a pod being
//! deleted, past its grace period — and why it is not gone (its node is down, finalizers hold
//! it, or the kubelet has not finished).

use gpudash_model::model::{Code, Diagnosis, GpuResource, Holder, Kind, Severity};

use super::terminating_said as said;
use super::{diag, list, on_node, Ctx};

/// A GPU holder that is being deleted, as a waiting pod sees it.
pub(super) struct Terminating {
    /// `namespace/name`.
    pub(super) pod: String,
    /// When its deletion was asked (deletionTimestamp less the grace period).
    pub(super) since: String,
    /// Its grace period, seconds.
    pub(super) grace: i64,
    /// Past its grace period by more than a minute.
    pub(super) stuck: bool,
}

/// The first holder of a unit where a waiting pod could go that is being deleted.
pub(super) fn first_terminating<'a>(
    with_res: &[(&'a k8s_openapi::api::core::v1::Node, &'a GpuResource)],
) -> Option<(&'a k8s_openapi::api::core::v1::Node, &'a Holder)> {
    with_res.iter().find_map(|(n, g)| g.holders.iter().find(|h| h.terminating).map(|h| (*n, h)))
}

/// The first holder of a unit the waiting pod could use that is terminating (see
/// [`first_terminating`]); raises
/// `gpu-held-by-terminating-pod` (once per holder) when it is past its grace period by more than
/// a minute, with the likely cause.
pub(super) fn terminating_holder(
    cx: &Ctx<'_>,
    first: Option<(&k8s_openapi::api::core::v1::Node, &Holder)>,
    out: &mut Vec<Diagnosis>,
) -> Option<Terminating> {
    let (node, h) = first?;
    let pod = cx.held_on(node, &h.namespace, &h.name)?;
    let deadline = pod.metadata.deletion_timestamp.as_ref()?.0;
    let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(30);
    let since = deadline.checked_sub(jiff::SignedDuration::from_secs(grace)).unwrap_or(deadline);
    let over = cx.now.duration_since(deadline).as_secs();
    let stuck = over > 60;
    let name = format!("{}/{}", h.namespace, h.name);
    let node_name = node.metadata.name.clone().unwrap_or_default();
    if stuck
        && !out.iter().any(|d| {
            d.code == Code::GpuHeldByTerminatingPod
                && d.name == h.name
                && d.namespace.as_deref() == Some(h.namespace.as_str())
        })
    {
        let node_down = cx.view(&node_name).is_some_and(|v| !v.ready);
        let (ns, pn) = (&h.namespace, &h.name);
        let finalizers = pod.metadata.finalizers.clone().unwrap_or_default();
        let mins = over / 60;
        let cause = if node_down {
            said::node_notready_so_no_kubelet(&node_name, &ns, &pn)
        } else if !finalizers.is_empty() {
            let f = list(&finalizers);
            said::finalizers_hold_controller_owns_them(&f, &ns, &pn)
        } else {
            said::kubelet_has_not_finished_stopping(&node_name)
        };
        let since_s = since.to_string();
        let d = diag(
            Code::GpuHeldByTerminatingPod,
            Severity::Warning,
            Kind::Pod,
            Some(&h.namespace),
            &h.name,
            said::terminating_since_min_past_grace(&since_s, &mins, &grace, &cause),
        );
        out.push(on_node(d, Some(&node_name)));
    }
    Some(Terminating { pod: name, since: since.to_string(), grace, stuck })
}
