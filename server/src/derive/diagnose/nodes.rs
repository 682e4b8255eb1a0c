//! Node diagnoses: a missing or failing device plugin, GPUs out of service, GPUs used outside
//! the scheduler, boards gone dark, unified-memory overcommit, time-slice contention.

use std::collections::BTreeMap;

use app::model::{Diagnosis, NodeView, PendingPod, Severity, Sharing};
use k8s_openapi::api::core::v1::Node;

use super::{diag, list, wants_nvidia_gpu, Ctx};
use crate::derive::node;
use crate::pod::Pod;
use crate::quantity::Bytes;

/// Why a GPU node offers no (or fewer) GPUs to the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trouble {
    /// The device plugin is missing or failing: nothing is advertised.
    PluginMissing,
    /// The plugin runs and took unhealthy GPUs out of service.
    Unhealthy,
}

/// A node in trouble, for the pending pods' advice.
pub(super) struct Troubled<'a> {
    pub node: &'a Node,
    pub name: &'a str,
    pub trouble: Trouble,
}

/// The state of a device-plugin pod in words, or `None` when it runs and is ready.
pub(super) fn plugin_state(p: &Pod) -> Option<String> {
    let (ns, name) = crate::derive::pods::key(p);
    let st = p.status.as_ref();
    let statuses = st.and_then(|s| s.container_statuses.as_deref()).unwrap_or(&[]);
    let phase = st.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    let bad = statuses.iter().find(|c| !c.ready);
    if phase == "Running" && bad.is_none() {
        return None;
    }
    let Some(c) = bad.or(statuses.first()) else {
        return Some(format!("its device-plugin pod {ns}/{name} is {phase}"));
    };
    let now = c.state.as_ref();
    let state =
        now.and_then(|s| s.waiting.as_ref().or(s.terminated.as_ref())).and_then(|w| w.reason.clone()).unwrap_or_else(
            || if now.is_some_and(|s| s.running.is_some()) { "running, not ready".into() } else { phase.into() },
        );
    let mut s = format!("its device-plugin pod {ns}/{name} is in {state}");
    let last = c.last_state.as_ref().and_then(|l| l.terminated.as_ref());
    if c.restart_count > 0 || last.is_some() {
        s.push_str(&format!(" (restarted {} times", c.restart_count));
        if let Some(t) = last {
            if let Some(code) = t.exit_code {
                s.push_str(&format!("; last exit code {code}"));
            }
            if let Some(r) = &t.reason {
                s.push_str(&format!(", {r}"));
            }
        }
        s.push(')');
    }
    Some(s)
}

/// `device-plugin-missing` and `gpu-unhealthy`: what is wrong with a node that looks like a
/// GPU node but offers fewer GPUs than it has. Returns the nodes in trouble.
pub(super) fn device_plugin_and_health<'a>(
    cx: &Ctx<'a>,
    pending: &[PendingPod],
    out: &mut Vec<Diagnosis>,
) -> Vec<Troubled<'a>> {
    let mut troubled = Vec::new();
    for &(n, view) in &cx.pairs {
        let name = view.name.as_str();
        let plugin = cx.plugins.get(name).copied();
        let plugin_bad = plugin.and_then(plugin_state);
        let nvidia: Vec<_> = view.gpu_resources.iter().filter(|g| node::is_nvidia_gpu(&g.resource)).collect();
        let has_capacity = nvidia.iter().any(|g| g.capacity > 0);
        let all_out =
            nvidia.iter().find(|g| g.resource == "nvidia.com/gpu").filter(|g| g.capacity > 0 && g.allocatable == 0);
        // GPU pods waiting that could go here make the node's trouble critical.
        let waiting_here = |resource: Option<&str>| {
            pending.iter().zip(cx.waiting).any(|(p, pod)| {
                wants_nvidia_gpu(p)
                    && resource.is_none_or(|r| p.gpu_request.as_ref().is_some_and(|g| g.resource == r))
                    && Ctx::could_target(pod, n)
            })
        };
        // A node whose GPUs a DRA driver publishes needs no device plugin.
        let dra_gpus = view.gpu_resources.iter().any(|g| g.sharing == Sharing::Dra && g.capacity > 0);
        let plugin_missing = if all_out.is_some() && plugin.is_some() && plugin_bad.is_none() {
            None
        } else if all_out.is_some() {
            Some("advertises nvidia.com/gpu capacity but 0 allocatable")
        } else if node::looks_like_gpu_node(n) && !has_capacity && !dra_gpus && cx.dra_mode() {
            super::dra::driver_missing(cx, n, name, pending, out);
            continue;
        } else if node::looks_like_gpu_node(n) && !has_capacity && !dra_gpus {
            Some("has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu")
        } else {
            None
        };
        if let Some(what) = plugin_missing {
            let why = match (plugin, plugin_bad) {
                (Some(p), Some(state)) => {
                    let (ns, pn) = crate::derive::pods::key(p);
                    format!("{state} — read its log (kubectl -n {ns} logs {pn} --previous): a missing NVIDIA container runtime on the node or a plugin config it rejects are the usual causes")
                }
                (Some(p), None) => {
                    let (ns, pn) = crate::derive::pods::key(p);
                    format!("its device-plugin pod {ns}/{pn} runs but registered no GPU — read its log (kubectl -n {ns} logs {pn}): it may not see the GPU (NVIDIA runtime or driver missing on the node)")
                }
                (None, _) if !cx.plugin_namespaces.is_empty() => {
                    let ns = cx.plugin_namespaces.iter().copied().collect::<Vec<_>>().join(", ");
                    format!("no NVIDIA device-plugin pod runs on this node, though its DaemonSet runs pods on other nodes (namespace {ns}): its nodeSelector, affinity or tolerations do not match this node — compare kubectl -n {ns} get daemonset -o yaml with this node's labels and taints")
                }
                (None, _) => "no NVIDIA device plugin runs anywhere in the cluster — install it (the nvidia-device-plugin Helm chart, with time-slicing on Jetson) so that the scheduler counts GPU pods".to_string(),
            };
            let outside = if view.gpu_users_outside.iter().any(|u| u.sure) {
                format!(" Meanwhile {} pod(s) use its GPU through the NVIDIA runtime without being counted (see gpu-used-outside-scheduler).", view.gpu_users_outside.iter().filter(|u| u.sure).count())
            } else {
                String::new()
            };
            let waiting = waiting_here(None);
            let severity = if waiting { Severity::Critical } else { Severity::Warning };
            let stakes = if waiting { " GPU pods are waiting for it." } else { "" };
            out.push(diag(
                "device-plugin-missing",
                severity,
                "Node",
                None,
                name,
                format!("{name} {what}: {why}.{stakes}{outside}"),
            ));
            troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::PluginMissing });
            continue;
        }
        for g in nvidia.iter().filter(|g| g.out_of_service > 0) {
            let reps = g.replicas_per_gpu.max(1);
            let units = if reps > 1 {
                format!(
                    "{} of {} {} replicas ({} GPU(s) × {reps})",
                    g.out_of_service,
                    g.capacity,
                    g.resource,
                    g.out_of_service.div_ceil(reps)
                )
            } else {
                format!("{} of {} {}", g.out_of_service, g.capacity, g.resource)
            };
            let waiting = waiting_here(Some(&g.resource));
            let severity = if waiting { Severity::Critical } else { Severity::Warning };
            let stakes = if waiting { " GPU pods are waiting for the lost capacity." } else { "" };
            out.push(diag("gpu-unhealthy", severity, "Node", None, name,
                format!("{units} on {name} are out of service: the device plugin found the GPU unhealthy (Xid errors, fallen off the bus) and stopped offering it — check the node's kernel log (dmesg | grep -i xid), nvidia-smi on the node and the device plugin's log; the GPU returns when the plugin sees it healthy again (often after a GPU reset or a reboot).{stakes}")));
            troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::Unhealthy });
        }
    }
    troubled
}

/// `gpu-used-outside-scheduler`: pods that use a node's GPU without requesting it.
pub(super) fn gpu_used_outside_scheduler(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for view in cx.nodes {
        if view.gpu_users_outside.is_empty() {
            continue;
        }
        let name = view.name.as_str();
        let (sure, possible): (Vec<_>, Vec<_>) = view.gpu_users_outside.iter().partition(|u| u.sure);
        let names =
            |v: &[&app::model::GpuUser]| v.iter().map(|u| format!("{}/{}", u.namespace, u.name)).collect::<Vec<_>>();
        let mut parts = Vec::new();
        if !sure.is_empty() {
            parts.push(format!(
                "{} use it for sure ({}: NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES)",
                sure.len(),
                list(&names(&sure))
            ));
        }
        if !possible.is_empty() {
            parts.push(format!("{} may use it ({}: the node's default runtime is {}, so any container whose image asks for the GPU gets it — the API cannot tell which)",
                possible.len(), list(&names(&possible)), view.default_runtime.as_deref().unwrap_or("nvidia")));
        }
        let severity = if sure.is_empty() { Severity::Info } else { Severity::Warning };
        out.push(diag("gpu-used-outside-scheduler", severity, "Node", None, name,
            format!("Pods on {name} use its GPU without requesting a GPU resource, so the scheduler does not count them: {}. Nothing stops another model from landing here, and they share the GPU and its memory with no isolation — have GPU pods request nvidia.com/gpu through the device plugin (time-slicing replicas on Jetson) so that each is counted.", parts.join("; "))));
    }
}

/// `gpu-node-down`: a node that stopped reporting (or reports not ready) with GPU pods bound.
pub(super) fn gpu_node_down(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    // Free units on the nodes that can take a pod now (a down node is not one of them), taken
    // once and only when some board is down.
    let mut free: Option<std::collections::HashMap<&str, u64>> = None;
    for view in cx.nodes {
        let Some(down) = &view.down else { continue };
        let name = view.name.as_str();
        let holders: Vec<_> = view.gpu_resources.iter().flat_map(|g| g.holders.iter().map(move |h| (g, h))).collect();
        let state = match (down.status.as_str(), &down.reason) {
            ("Unknown", _) => "has not reported since".to_string(),
            (_, Some(r)) => format!("is not ready ({r}) since"),
            _ => "is not ready since".to_string(),
        };
        let since = down.since.as_deref().unwrap_or("an unknown time");
        if holders.is_empty() {
            let gpus = view.gpu_resources.iter().map(|g| g.capacity).sum::<u64>();
            if gpus > 0 {
                out.push(diag("gpu-node-down", Severity::Warning, "Node", None, name,
                    format!("{name} {state} {since}: its {gpus} GPU unit(s) are out of reach until it returns (check power, network and the K3s agent on the board).")));
            }
            continue;
        }
        let mut names: Vec<String> = holders.iter().map(|(_, h)| format!("{}/{}", h.namespace, h.name)).collect();
        names.dedup();
        let terminating = holders.iter().filter(|(_, h)| h.terminating).count();
        let evict = match (&down.evict_at, terminating) {
            (_, t) if t == holders.len() => " They are already Terminating: Kubernetes evicted them, and they stay listed until the node returns or is deleted.".to_string(),
            (Some(at), 0) => format!(" Kubernetes evicts them at {at} (taint-based eviction), then their controllers recreate them elsewhere."),
            (Some(at), t) => format!(" {t} already Terminating; the rest are evicted at {at} (taint-based eviction)."),
            (None, 0) => " They tolerate the node's taint without a time limit, so Kubernetes will not move them.".to_string(),
            (None, t) => format!(" {t} already Terminating."),
        };
        // What the rest of the cluster could give them.
        let mut need: BTreeMap<&str, u64> = BTreeMap::new();
        for (g, h) in &holders {
            *need.entry(g.resource.as_str()).or_default() += h.count;
        }
        let room: Vec<String> = need
            .iter()
            .map(|(r, n)| {
                let free = free
                    .get_or_insert_with(|| crate::derive::quota::cluster_free(cx.nodes))
                    .get(r)
                    .copied()
                    .unwrap_or(0);
                if free >= *n {
                    format!("the rest of the cluster has {free} free {r} for the {n} they hold")
                } else if free > 0 {
                    format!("the rest of the cluster has only {free} free {r} for the {n} they hold, so some will wait Pending")
                } else {
                    format!("no other node has a free {r}, so they will wait Pending until {name} returns")
                }
            })
            .collect();
        out.push(diag("gpu-node-down", Severity::Critical, "Node", None, name,
            format!("{name} {state} {since}: {} pod(s) holding its GPU are not serving ({}).{evict} For the {}: {}. Check the board's power, network and K3s agent.",
                names.len(), list(&names), if need.len() == 1 { "GPU" } else { "GPUs" }, room.join("; "))));
    }
}

/// `unified-memory-overcommit`: pod limits beyond a board's shared memory.
pub(super) fn unified_memory_overcommit(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for view in cx.nodes {
        let name = view.name.as_str();
        if view.memory.overcommit_bytes > 0 {
            out.push(diag("unified-memory-overcommit", Severity::Warning, "Node", None, name,
                format!("Pod memory limits on {name} add up to {}, more than the {} the board shares between CPU and GPU: lower the limits or move a model to another board.",
                    Bytes(view.memory.limits_bytes), Bytes(view.memory.board_bytes))));
        }
    }
}

/// `gpu-time-slice-contention`: more pods than physical GPUs on a time-sliced resource of a
/// node that is up (on a node that is down nothing runs, so nothing contends).
pub(super) fn gpu_time_slice_contention(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for view in cx.nodes.iter().filter(|v| v.down.is_none()) {
        contention(view, out);
    }
}

fn contention(view: &NodeView, out: &mut Vec<Diagnosis>) {
    let name = view.name.as_str();
    for g in &view.gpu_resources {
        // Where a fresh agent measured the GPUs, contention is what it measured.
        if super::agent::measured(view, g, out) {
            continue;
        }
        if matches!(g.sharing, Sharing::TimeSlicing | Sharing::Mps) {
            let physical = g.physical_gpus.unwrap_or(1).max(1);
            let pods_holding = g.holders.iter().filter(|h| !h.terminating).count() as u64;
            if pods_holding > physical {
                out.push(diag("gpu-time-slice-contention", Severity::Info, "Node", None, name,
                    format!("{pods_holding} pods share {physical} physical GPU(s) of {} on {name} by time-slicing: no proportional compute, no memory or fault isolation — one model's memory or crash affects the others.", g.resource)));
            }
        }
    }
}
