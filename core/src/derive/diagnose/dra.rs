//! Dynamic Resource Allocation diagnoses: a DeviceClass that does not exist, a GPU node whose
//! DRA driver publishes nothing, a claim holding a GPU for no pod, and a node offering its GPUs
//! through two allocators at once.

use std::collections::BTreeSet;

use gpudash_model::model::{Code, Diagnosis, Kind, PendingPod, Severity, Sharing};
use k8s_openapi::api::core::v1::Node;

use super::dra_said as said;
use gpudash_model::i18n::Said;

use super::{diag, list, Ctx};
use crate::dra::ClaimSpec;

/// The names of the DeviceClasses that hand out GPUs.
pub(super) fn gpu_classes<'a>(cx: &Ctx<'a>) -> BTreeSet<&'a str> {
    cx.inputs.device_classes.iter().filter(|c| crate::derive::dra::is_gpu_class(c)).map(|c| c.name()).collect()
}

/// Whether a pending pod waits for a GPU claim (one of `gpu_classes`, not yet allocated).
pub(super) fn waits_for_gpu_claim(p: &PendingPod, gpu_classes: &BTreeSet<&str>) -> bool {
    p.claims
        .iter()
        .any(|c| c.state != "allocated" && c.device_class.as_deref().is_some_and(|d| gpu_classes.contains(d)))
}

/// `dra-driver-missing`: a GPU node (labels, Jetson) publishes no GPU ResourceSlice while the
/// cluster hands out GPUs through DRA. Critical when a pod waits for a GPU claim.
pub(super) fn driver_missing(cx: &Ctx<'_>, n: &Node, name: &str, pending: &[PendingPod], out: &mut Vec<Diagnosis>) {
    let gpu_classes = gpu_classes(cx);
    let waiting: Vec<String> = pending
        .iter()
        .zip(cx.waiting)
        .filter(|(p, pod)| Ctx::could_target(pod, n) && waits_for_gpu_claim(p, &gpu_classes))
        .map(|(p, _)| format!("{}/{}", p.namespace, p.name))
        .collect();
    let classes = gpu_classes.iter().copied().collect::<Vec<_>>().join(", ");
    let (severity, stakes) = if waiting.is_empty() {
        (Severity::Warning, Said::default())
    } else {
        let who = list(&waiting);
        (Severity::Critical, said::pods_waiting_gpu_claim(&who))
    };
    out.push(diag(
        Code::DraDriverMissing,
        severity,
        Kind::Node,
        None,
        name,
        said::looks_like_gpu_node_but(&name, &classes, &stakes),
    ));
}

/// `dra-deviceclass-missing`: a claim or template asks for a DeviceClass that does not exist.
/// Said on each waiting pod that uses it (critical), else on the claim or template (warning).
pub(super) fn deviceclass_missing(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    let inputs = cx.inputs;
    if inputs.claims.is_empty() && inputs.claim_templates.is_empty() {
        return;
    }
    let known: BTreeSet<&str> = inputs.device_classes.iter().map(|c| c.name()).collect();
    let missing =
        |spec: &ClaimSpec| spec.device_classes().find(|c| !c.is_empty() && !known.contains(c)).map(str::to_string);
    let mut told: BTreeSet<(String, String)> = BTreeSet::new();
    let index = cx.claims;
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        let ns = p.namespace.clone();
        for (_, claim, template) in pod.claims() {
            let from_claim = claim.and_then(|c| index.claims.get(&(ns.as_str(), c))).and_then(|c| missing(&c.spec));
            let from_template =
                template.and_then(|t| index.templates.get(&(ns.as_str(), t))).and_then(|t| missing(&t.spec.spec));
            let Some(class) = from_claim.or(from_template) else { continue };
            if let Some(c) = claim {
                told.insert((ns.clone(), c.to_string()));
            }
            if let Some(t) = template {
                told.insert((ns.clone(), format!("template/{t}")));
            }
            let via = match (claim, template) {
                (_, Some(t)) => said::resourceclaimtemplate(&ns, &t),
                (Some(c), None) => said::resourceclaim(&ns, &c),
                (None, None) => said::claim(),
            };
            p.diagnoses.push(Code::DraDeviceclassMissing);
            out.push(diag(Code::DraDeviceclassMissing, Severity::Critical, Kind::Pod, Some(&ns), &p.name, {
                let pn = &p.name;
                said::cannot_scheduled_asks_deviceclass_which(&ns, &pn, &via, &class)
            }));
        }
    }
    for c in &inputs.claims {
        let (ns, name) = (c.metadata.namespace.as_deref().unwrap_or(""), c.metadata.name.as_deref().unwrap_or(""));
        if c.allocated() || told.contains(&(ns.to_string(), name.to_string())) {
            continue;
        }
        if let Some(class) = missing(&c.spec) {
            out.push(diag(
                Code::DraDeviceclassMissing,
                Severity::Warning,
                Kind::ResourceClaim,
                Some(ns),
                name,
                said::resourceclaim_asks_deviceclass_which_does(&ns, &name, &class),
            ));
        }
    }
    for t in &inputs.claim_templates {
        let (ns, name) = (t.metadata.namespace.as_deref().unwrap_or(""), t.metadata.name.as_deref().unwrap_or(""));
        if told.contains(&(ns.to_string(), format!("template/{name}"))) {
            continue;
        }
        if let Some(class) = missing(&t.spec.spec) {
            out.push(diag(
                Code::DraDeviceclassMissing,
                Severity::Warning,
                Kind::ResourceClaimTemplate,
                Some(ns),
                name,
                said::resourceclaimtemplate_asks_deviceclass_which_does(&ns, &name, &class),
            ));
        }
    }
}

/// `dra-claim-unreserved`: a claim holds devices but no pod uses it — a GPU held by nobody
/// (a claim made by hand and never used, or left by a workload that is gone).
pub(super) fn claim_unreserved(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for c in cx.inputs.claims.iter().filter(|c| c.allocated() && c.metadata.deletion_timestamp.is_none()) {
        if c.status.as_ref().is_some_and(|s| !s.reserved_for.is_empty()) {
            continue;
        }
        let (ns, name) = (c.metadata.namespace.as_deref().unwrap_or(""), c.metadata.name.as_deref().unwrap_or(""));
        let results = c.results();
        let on: Vec<String> = results.iter().map(|r| format!("{} on {}", r.device, r.pool)).collect();
        let no: Vec<String> = results.iter().map(|r| format!("{} の {}", r.pool, r.device)).collect();
        out.push(diag(Code::DraClaimUnreserved, Severity::Warning, Kind::ResourceClaim, Some(ns), name, {
            let devs = Said::pair(list(&on).en, list(&no).ja);
            said::resourceclaim_holds_but_no_pod(&ns, &name, &devs)
        }));
    }
}

/// `gpu-dual-allocator`: a node advertises `nvidia.com/gpu` through the device plugin and
/// publishes NVIDIA GPUs through a DRA driver: two allocators that do not know of each other
/// can hand one GPU to two pods.
pub(super) fn dual_allocator(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for n in cx.nodes {
        let plugin = n.gpu_resources.iter().find(|g| g.resource == "nvidia.com/gpu" && g.capacity > 0);
        let dra = n.gpu_resources.iter().find(|g| g.sharing == Sharing::Dra && g.resource.ends_with("nvidia.com"));
        if let (Some(p), Some(d)) = (plugin, dra) {
            out.push(diag(Code::GpuDualAllocator, Severity::Warning, Kind::Node, None, &n.name, {
                let (nn, pc, dr, dc) = (&n.name, p.capacity, &d.resource, d.capacity);
                said::offers_gpus_twice_device_plugin(&nn, &pc, &dr, &dc)
            }));
        }
    }
}
