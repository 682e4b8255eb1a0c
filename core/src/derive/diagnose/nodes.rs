//! Node diagnoses: a missing or failing device plugin, GPUs out of service, GPUs used outside
//! the scheduler, boards gone dark, unified-memory overcommit, time-slice contention.

use std::collections::BTreeMap;

use gpudash_model::model::{Code, Diagnosis, Kind, NodeView, PendingPod, Severity, Sharing};
use k8s_openapi::api::core::v1::Node;

use gpudash_model::i18n::Said;

use super::down_said;
use super::nodes_said as said;
use super::plugin_said;
use super::{diag, join, list, wants_nvidia_gpu, Ctx};
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
    /// The node shares its GPUs through MPS and its plugin waits for an MPS control daemon
    /// that does not run: nothing is advertised.
    MpsDaemonMissing,
}

impl Trouble {
    /// Whether the node advertises nothing because of it.
    pub(super) fn advertises_nothing(self) -> bool {
        matches!(self, Self::PluginMissing | Self::MpsDaemonMissing)
    }
}

/// A node in trouble, for the pending pods' advice.
pub(super) struct Troubled<'a> {
    pub node: &'a Node,
    pub name: &'a str,
    pub trouble: Trouble,
}

/// The state of a device-plugin pod in words, or `None` when it runs and is ready.
pub(super) fn plugin_state(p: &Pod) -> Option<Said> {
    let (ns, name) = crate::derive::pods::key(p);
    let st = p.status.as_ref();
    let statuses = st.and_then(|s| s.container_statuses.as_deref()).unwrap_or(&[]);
    let phase = st.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    let bad = statuses.iter().find(|c| !c.ready);
    if phase == "Running" && bad.is_none() {
        return None;
    }
    let Some(c) = bad.or(statuses.first()) else {
        return Some(plugin_said::plugin_pod_phase(&ns, &name, &phase));
    };
    let now = c.state.as_ref();
    let state =
        now.and_then(|s| s.waiting.as_ref().or(s.terminated.as_ref())).and_then(|w| w.reason.clone()).unwrap_or_else(
            || if now.is_some_and(|s| s.running.is_some()) { "running, not ready".into() } else { phase.into() },
        );
    let mut s = plugin_said::plugin_pod_state(&ns, &name, &state);
    let last = c.last_state.as_ref().and_then(|l| l.terminated.as_ref());
    if c.restart_count > 0 || last.is_some() {
        let n = c.restart_count;
        let mut more = plugin_said::restarted_times(&n);
        if let Some(t) = last {
            if let Some(code) = t.exit_code {
                more.push(&plugin_said::last_exit_code(&code));
            }
            if let Some(r) = &t.reason {
                more.push(&Said::same(format!(", {r}")));
            }
        }
        more.push(&plugin_said::close_paren());
        s.push(&more);
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
            Some(plugin_said::advertises_nvidia_com_gpu_capacity())
        } else if !has_capacity && !dra_gpus && node::looks_like_gpu_node(n) && cx.dra_mode() {
            super::dra::driver_missing(cx, n, name, pending, out);
            continue;
        } else if !has_capacity && !dra_gpus && node::looks_like_gpu_node(n) {
            Some(plugin_said::has_gpu_signals_labels_jetson())
        } else {
            None
        };
        if let Some(what) = plugin_missing {
            let waiting = waiting_here(None);
            let severity = if waiting { Severity::Critical } else { Severity::Warning };
            let stakes = if waiting { plugin_said::gpu_pods_waiting() } else { Said::default() };
            let daemon = cx.mps_daemons.get(name).copied();
            let daemon_state = daemon.and_then(|d| plugin_state(d).map(|s| (d, s)));
            if plugin.is_some() && node::is_mps(n) && (daemon.is_none() || daemon_state.is_some()) {
                // The plugin runs but waits for the MPS control daemon: that is what to fix.
                let daemon = daemon_state.map_or_else(Said::default, |(d, state)| {
                    let (ns, pn) = crate::derive::pods::key(d);
                    plugin_said::mps_daemon_pod_state(&ns, &pn, &state)
                });
                let text = plugin_said::mps_daemon_missing(&name, &daemon, &stakes);
                out.push(diag(Code::GpuMpsDaemonMissing, severity, Kind::Node, None, name, text));
                troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::MpsDaemonMissing });
                continue;
            }
            let why = why_no_plugin(cx, plugin, plugin_bad);
            let outside = if view.gpu_users_outside.iter().any(|u| u.sure) {
                let n = view.gpu_users_outside.iter().filter(|u| u.sure).count();
                plugin_said::meanwhile_pod_use_gpu_through(&n)
            } else {
                Said::default()
            };
            out.push(diag(
                Code::DevicePluginMissing,
                severity,
                Kind::Node,
                None,
                name,
                plugin_said::plugin_missing(&name, &what, &why, &stakes, &outside),
            ));
            troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::PluginMissing });
            continue;
        }
        for g in nvidia.iter().filter(|g| g.out_of_service > 0) {
            let waiting = waiting_here(Some(&g.resource));
            out.push(unhealthy(name, g, waiting, node::is_tegra(n)));
            troubled.push(super::nodes::Troubled { node: n, name, trouble: Trouble::Unhealthy });
        }
    }
    troubled
}

/// Why a node's device plugin advertises no GPU: its pod's state and log, a pod that runs but
/// registered nothing, a DaemonSet that does not reach the node, or no plugin anywhere.
fn why_no_plugin(cx: &Ctx<'_>, plugin: Option<&Pod>, plugin_bad: Option<Said>) -> Said {
    match (plugin, plugin_bad) {
        (Some(p), Some(state)) => {
            let (ns, pn) = crate::derive::pods::key(p);
            plugin_said::read_log_kubectl_n_logs(&state, &ns, &pn)
        }
        (Some(p), None) => {
            let (ns, pn) = crate::derive::pods::key(p);
            plugin_said::device_plugin_pod_runs_but(&ns, &pn)
        }
        (None, _) if !cx.plugin_namespaces.is_empty() => {
            let ns = cx.plugin_namespaces.iter().copied().collect::<Vec<_>>().join(", ");
            plugin_said::no_nvidia_device_plugin_pod(&ns)
        }
        (None, _) => plugin_said::no_nvidia_device_plugin_runs(),
    }
}

/// `gpu-unhealthy` for one resource of node `name` with units out of service; critical while
/// GPU pods that could go there wait.
fn unhealthy(name: &str, g: &gpudash_model::model::GpuResource, waiting: bool, integrated: bool) -> Diagnosis {
    let reps = g.replicas_per_gpu.max(1);
    let (out_n, cap, res, gpus) = (g.out_of_service, g.capacity, &g.resource, g.out_of_service.div_ceil(reps));
    let units = if reps > 1 {
        plugin_said::replicas_out(&out_n, &cap, &res, &gpus, &reps)
    } else {
        plugin_said::units_out(&out_n, &cap, &res)
    };
    let severity = if waiting { Severity::Critical } else { Severity::Warning };
    let stakes = if waiting { plugin_said::gpu_pods_waiting_lost_capacity() } else { Said::default() };
    diag(
        Code::GpuUnhealthy,
        severity,
        Kind::Node,
        None,
        name,
        if integrated {
            plugin_said::out_service_integrated(&units, &name, &stakes)
        } else {
            plugin_said::out_service_device_plugin_found(&units, &name, &stakes)
        },
    )
}

/// `gpu-used-outside-scheduler`: pods that use a node's GPU without requesting it.
pub(super) fn gpu_used_outside_scheduler(view: &NodeView, out: &mut Vec<Diagnosis>) {
    if view.gpu_users_outside.is_empty() {
        return;
    }
    let name = view.name.as_str();
    let (sure, possible): (Vec<_>, Vec<_>) = view.gpu_users_outside.iter().partition(|u| u.sure);
    let names = |v: &[&gpudash_model::model::GpuUser]| {
        v.iter().map(|u| format!("{}/{}", u.namespace, u.name)).collect::<Vec<_>>()
    };
    let mut parts = Vec::new();
    if !sure.is_empty() {
        let (n, who) = (sure.len(), list(&names(&sure)));
        parts.push(said::use_sure_nvidia_runtime_class(&n, &who));
    }
    if !possible.is_empty() {
        let (n, who, rt) =
            (possible.len(), list(&names(&possible)), view.default_runtime.as_deref().unwrap_or("nvidia"));
        parts.push(said::may_use_node_default_runtime(&n, &who, &rt));
    }
    let severity = if sure.is_empty() { Severity::Info } else { Severity::Warning };
    let parts = join(&parts);
    out.push(diag(
        Code::GpuUsedOutsideScheduler,
        severity,
        Kind::Node,
        None,
        name,
        said::pods_use_gpu_without_requesting(&name, &parts),
    ));
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
        let since = down.since.as_deref().unwrap_or("?");
        let state = match (down.status.as_str(), &down.reason) {
            ("Unknown", _) => down_said::has_not_reported_since(&since),
            (_, Some(r)) => down_said::not_ready_since_because(&r, &since),
            _ => down_said::not_ready_since_no_reason(&since),
        };
        if holders.is_empty() {
            let gpus = view.gpu_resources.iter().map(|g| g.capacity).sum::<u64>();
            if gpus > 0 {
                out.push(diag(
                    Code::GpuNodeDown,
                    Severity::Warning,
                    Kind::Node,
                    None,
                    name,
                    down_said::gpu_unit_out_reach_until(&name, &state, &gpus),
                ));
            }
            continue;
        }
        let mut names: Vec<String> = holders.iter().map(|(_, h)| format!("{}/{}", h.namespace, h.name)).collect();
        names.dedup();
        let terminating = holders.iter().filter(|(_, h)| h.terminating).count();
        let evict = match (&down.evict_at, terminating) {
            (_, t) if t == holders.len() => down_said::they_already_terminating_kubernetes_evicted(),
            (Some(at), 0) => down_said::kubernetes_evicts_them_at_taint(&at),
            (Some(at), t) => down_said::already_terminating_rest_evicted_at(&t, &at),
            (None, 0) => down_said::they_tolerate_node_taint_without(),
            (None, t) => down_said::already_terminating(&t),
        };
        // What the rest of the cluster could give them.
        let mut need: BTreeMap<&str, u64> = BTreeMap::new();
        for (g, h) in &holders {
            *need.entry(g.resource.as_str()).or_default() += h.count;
        }
        let room: Vec<Said> = need
            .iter()
            .map(|(r, n)| {
                let free = free
                    .get_or_insert_with(|| crate::derive::quota::cluster_free(cx.nodes))
                    .get(r)
                    .copied()
                    .unwrap_or(0);
                if free >= *n {
                    down_said::rest_cluster_has_free_they(&free, &r, &n)
                } else if free > 0 {
                    down_said::rest_cluster_has_only_free(&free, &r, &n)
                } else {
                    down_said::no_other_node_has_free(&r, &name)
                }
            })
            .collect();
        let (n, who, room) = (names.len(), list(&names), join(&room));
        let gpus = if need.len() == 1 { "GPU" } else { "GPUs" };
        out.push(diag(
            Code::GpuNodeDown,
            Severity::Critical,
            Kind::Node,
            None,
            name,
            said::pod_holding_gpu_not_serving(&name, &state, &n, &who, &evict, &gpus, &room),
        ));
    }
}

/// `unified-memory-overcommit`: pod limits beyond a board's shared memory.
pub(super) fn unified_memory_overcommit(view: &NodeView, out: &mut Vec<Diagnosis>) {
    let name = view.name.as_str();
    if view.memory.overcommit_bytes > 0 {
        out.push(diag(Code::UnifiedMemoryOvercommit, Severity::Warning, Kind::Node, None, name, {
            let (lim, board) = (Bytes(view.memory.limits_bytes), Bytes(view.memory.board_bytes));
            let mut said = said::pod_memory_limits_add_up(&name, &lim, &board);
            // Where the agent reads GPU memory per process, what the models really hold now.
            if let Some(s) = &view.memory.split {
                let (gpu, free) = (Bytes(s.gpu_pods_bytes), Bytes(s.free_bytes));
                said.push(&said::models_hold_gpu_memory_now(&gpu, &free));
            }
            said
        }));
    }
}

/// `gpu-memory-beyond-limit`: on a unified-memory board whose agent reads GPU memory per
/// process, a pod whose GPU memory and cgroup memory together exceed its memory limit. The
/// GPU's allocations come out of the board's RAM but are not charged to the pod's cgroup, so
/// the limit does not hold the model: the board runs out, not the pod.
pub(super) fn gpu_memory_beyond_limit(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for v in cx.nodes.iter().filter(|v| v.unified_memory && v.memory.split.is_some()) {
        let node = v.name.as_str();
        let free = v.memory.board_free_bytes.map(Bytes);
        let board = Bytes(v.memory.split.as_ref().map_or(v.memory.board_bytes, |s| s.total_bytes));
        for p in &v.pods {
            let (Some(gpu), Some(limit)) = (p.gpu_memory_bytes, p.limit_bytes) else { continue };
            let used = p.used_bytes.unwrap_or(0);
            if gpu == 0 || gpu.saturating_add(used) <= limit {
                continue;
            }
            let (pod, g, u, sum, l) = (&p.name, Bytes(gpu), Bytes(used), Bytes(gpu.saturating_add(used)), Bytes(limit));
            let ns = p.namespace.as_str();
            let room = match free {
                Some(f) => said::board_free(&f, &board),
                None => said::board_has(&board),
            };
            let mut d = diag(
                Code::GpuMemoryBeyondLimit,
                Severity::Warning,
                Kind::Pod,
                Some(ns),
                pod,
                said::holds_gpu_memory_beside_cgroup(&ns, &pod, &node, &g, &u, &sum, &l, &room),
            );
            d.node = Some(node.to_string());
            out.push(d);
        }
    }
}

/// `gpu-time-slice-contention`: more pods than physical GPUs on a time-sliced resource of a
/// node that is up (on a node that is down nothing runs, so nothing contends).
pub(super) fn gpu_time_slice_contention(view: &NodeView, out: &mut Vec<Diagnosis>) {
    if view.down.is_none() {
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
                out.push(diag(Code::GpuTimeSliceContention, Severity::Info, Kind::Node, None, name, {
                    let r = &g.resource;
                    said::pods_share_physical_gpu_time(&pods_holding, &physical, &r, &name)
                }));
            }
        }
    }
}
