//! Diagnoses of pods waiting for the scheduler: short of a GPU (held, failed, or never
//! advertised), asking for too many shared replicas, short of a board's memory.

use app::model::{Diagnosis, GpuResource, NodeView, PendingPod, Severity, Sharing};

use super::nodes::{Trouble, Troubled};
use super::{diag, list, Ctx};
use crate::derive::node;
use crate::quantity::Bytes;

fn note(p: &mut PendingPod, code: &str) {
    if !p.diagnoses.iter().any(|c| *c == code) {
        p.diagnoses.push(app::model::Code::from(code));
    }
}

/// `insufficient-gpu`: a pending pod short of a GPU resource, with the advice that fits why:
/// no node advertises it (the plugin), the node it is aimed at has no plugin, the GPU it needs
/// failed, or every unit is held.
pub(super) fn insufficient_gpu(
    cx: &Ctx<'_>,
    troubled: &[Troubled<'_>],
    pending: &mut [PendingPod],
    out: &mut Vec<Diagnosis>,
) {
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        let Some(res) = p
            .reasons
            .iter()
            .filter_map(|r| r.reason.strip_prefix("Insufficient "))
            .find(|r| node::is_accelerator(r))
            .map(str::to_string)
        else {
            continue;
        };
        let want = p.gpu_request.as_ref().map_or(1, |g| g.count);
        // The nodes it could go to that have this resource at all.
        let with_res: Vec<(&k8s_openapi::api::core::v1::Node, &GpuResource)> = cx
            .pairs
            .iter()
            .filter(|(n, _)| Ctx::could_target(pod, n))
            .filter_map(|(n, v)| v.gpu_resources.iter().find(|g| g.resource == res && g.capacity > 0).map(|g| (*n, g)))
            .collect();
        let plugin_down: Vec<&str> = troubled
            .iter()
            .filter(|t| t.trouble == Trouble::PluginMissing && Ctx::could_target(pod, t.node))
            .map(|t| t.name)
            .collect();
        let aimed = troubled
            .iter()
            .find(|t| t.trouble == Trouble::PluginMissing && crate::derive::pending_targets(pod, t.node))
            .map(|t| t.name);
        let failed: Vec<(&str, &GpuResource)> = with_res
            .iter()
            .filter(|(_, g)| g.out_of_service > 0)
            .map(|(n, g)| (n.metadata.name.as_deref().unwrap_or(""), *g))
            .collect();
        let text = if let Some(node) = aimed {
            note(p, "device-plugin-missing");
            format!("Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help.")
        } else if with_res.is_empty() {
            note(p, "device-plugin-missing");
            let where_ = if plugin_down.is_empty() {
                "no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device plugin runs on the GPU nodes".to_string()
            } else {
                let names: Vec<String> = plugin_down.iter().map(|s| (*s).to_string()).collect();
                format!("the NVIDIA device plugin is missing or failing on {} (see device-plugin-missing) — fix the plugin there", list(&names))
            };
            format!("Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. There is nothing to free, and time-slicing cannot help while the plugin is down.")
        } else if !failed.is_empty() {
            note(p, "gpu-unhealthy");
            let parts: Vec<String> = failed
                .iter()
                .map(|(n, g)| format!("{} of {} on {n} out of service", g.out_of_service, g.capacity))
                .collect();
            format!("Waiting for {want} {res}: the GPU it needs has failed — {} (the device plugin marked it unhealthy; see gpu-unhealthy) and the rest is held. Bring the GPU back (check the node's kernel log for Xid errors, nvidia-smi, the device plugin's log) or free a unit elsewhere.", parts.join(", "))
        } else {
            let shared = with_res.iter().any(|(_, g)| g.sharing == Sharing::TimeSlicing);
            let hint = if shared {
                "free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node"
            } else {
                "free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node"
            };
            format!("Waiting for {want} {res}: every matching node's {res} is already held — {hint}.")
        };
        out.push(diag("insufficient-gpu", Severity::Critical, "Pod", Some(&p.namespace), &p.name, text));
        note(p, "insufficient-gpu");
    }
}

/// `shared-gpu-request-too-large` from the scheduler's side (the device plugin's message).
pub(super) fn shared_gpu_request_too_large(pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for p in pending.iter_mut() {
        if p.message.as_deref().is_some_and(|m| m.contains("maximum request size for shared resources is 1")) {
            out.push(diag("shared-gpu-request-too-large", Severity::Critical, "Pod", Some(&p.namespace), &p.name,
                "Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the GPU).".into()));
            note(p, "shared-gpu-request-too-large");
        }
    }
}

/// `insufficient-memory`: a pending pod the scheduler refused for memory, with the numbers of
/// the node it was closest to fitting (unified-memory boards: the one pool the model's
/// weights live in) and whether a GPU unit is free there while the memory is not.
pub(super) fn insufficient_memory(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        if !p.reasons.iter().any(|r| r.reason == "Insufficient memory") {
            continue;
        }
        let ask = p.memory_request_bytes.unwrap_or(0);
        let gpu = p.gpu_request.clone();
        // Candidates: nodes it could go to that are up and, for a GPU pod, have its resource.
        let candidates: Vec<&NodeView> = cx
            .pairs
            .iter()
            .filter(|(n, v)| v.ready && Ctx::could_target(pod, n))
            .map(|(_, v)| *v)
            .filter(|v| {
                gpu.as_ref().is_none_or(|g| v.gpu_resources.iter().any(|r| r.resource == g.resource && r.capacity > 0))
            })
            .collect();
        let free = |v: &NodeView| v.memory.allocatable_bytes.saturating_sub(v.memory.requested_bytes);
        let Some(best) = candidates.iter().copied().max_by_key(|v| (free(v), std::cmp::Reverse(v.name.clone()))) else {
            continue;
        };
        let name = best.name.as_str();
        let m = &best.memory;
        let gpu_free = gpu.as_ref().and_then(|g| {
            best.gpu_resources
                .iter()
                .find(|r| r.resource == g.resource && r.allocatable.saturating_sub(r.allocated) >= g.count)
                .map(|r| r.resource.clone())
        });
        let measured = m.used_bytes.map(|u| format!(" (the board's pods use {} now)", Bytes(u))).unwrap_or_default();
        let others = if candidates.len() > 1 {
            format!(" {} other node(s) it could go to have less room.", candidates.len() - 1)
        } else {
            String::new()
        };
        let text = if best.unified_memory {
            let replica = match &gpu_free {
                Some(r) => format!(" A {r} unit is free there, but the board's memory is not: on a Jetson the model's weights live in that same RAM, shared by CPU and GPU."),
                None => String::new(),
            };
            format!("Waiting for memory: {name} shares {} between CPU and GPU, its pods request {}, and this pod asks {} — {} left.{replica} Lower the other models' memory requests to their measured use{measured}, move this model to a board with more memory, or drop a model from {name}.{others}",
                Bytes(m.allocatable_bytes), Bytes(m.requested_bytes), Bytes(ask), Bytes(free(best)))
        } else {
            let replica = match &gpu_free {
                Some(r) => format!(" A {r} unit is free there, but the memory is not."),
                None => String::new(),
            };
            format!("Waiting for memory: {name} has {} allocatable, its pods request {}, and this pod asks {} — {} left.{replica} Lower memory requests to measured use{measured}, move a pod off {name}, or add a node with more memory.{others}",
                Bytes(m.allocatable_bytes), Bytes(m.requested_bytes), Bytes(ask), Bytes(free(best)))
        };
        out.push(diag("insufficient-memory", Severity::Critical, "Pod", Some(&p.namespace), &p.name, text));
        note(p, "insufficient-memory");
    }
}
