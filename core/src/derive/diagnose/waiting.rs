//! Diagnoses of pods waiting for the scheduler: short of a GPU (held, failed, or never
//! advertised), asking for too many shared replicas, short of a board's memory.

use gpudash_model::model::{Code, Diagnosis, GpuResource, Kind, NodeView, PendingPod, Severity, Sharing};

use super::memory_said;
use super::waiting_said as said;
use gpudash_model::i18n::Said;

use super::after::{waiting_for_stalled, Stalled};
use super::after_said;
use super::nodes::{Trouble, Troubled};
use super::terminating::{first_terminating, terminating_holder};
use super::{diag, list, on_node, Ctx};
use crate::derive::node;
use crate::derive::pending::Aim;
use crate::quantity::Bytes;

fn note(p: &mut PendingPod, code: Code) {
    if !p.diagnoses.contains(&code) {
        p.diagnoses.push(code);
    }
}

/// `insufficient-gpu`: a pending pod short of a GPU resource, with the advice that fits why:
/// no node advertises it (the plugin), the node it is aimed at has no plugin, the GPU it needs
/// failed, or every unit is held.
pub(super) fn insufficient_gpu(
    cx: &Ctx<'_>,
    troubled: &[Troubled<'_>],
    stalled: &[Stalled<'_>],
    pending: &mut [PendingPod],
    out: &mut Vec<Diagnosis>,
) {
    // Where a pod can go depends on the resource and what it names a node by, not on the pod:
    // pods of one workload share one walk over the nodes.
    let mut reaches: crate::derive::Map<(String, Aim<'_>), Reach<'_>> = crate::derive::Map::default();
    // Pods waiting for the same reason are told the same words: kept once.
    let mut told = crate::derive::Shared::default();
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        let Some(res) = p
            .reasons
            .iter()
            .filter_map(|r| r.reason.en.strip_prefix("Insufficient "))
            .find(|r| node::is_accelerator(r))
            .map(str::to_string)
        else {
            continue;
        };
        let want = p.gpu_request.as_ref().map_or(1, |g| g.count);
        let aim = crate::derive::pending::aim(pod);
        let reach =
            reaches.entry((res.clone(), aim)).or_insert_with_key(|(res, aim)| Reach::of(cx, troubled, *aim, res));
        let dra_only =
            node::is_nvidia_gpu(&res) && reach.with_res.is_empty() && reach.siblings.is_empty() && cx.dra_mode();
        if reach.aimed.is_none() && (!reach.siblings.is_empty() || dra_only) {
            let text = resource_name_mismatch(cx, &res, want, &reach.siblings);
            out.push(diag(
                Code::GpuResourceNameMismatch,
                Severity::Critical,
                Kind::Pod,
                Some(&p.namespace),
                &p.name,
                text,
            ));
            note(p, Code::GpuResourceNameMismatch);
            continue;
        }
        let text = told.said(advice(cx, p, pod, (&res, want), reach, stalled, out));
        out.push(diag(Code::InsufficientGpu, Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name, text));
        note(p, Code::InsufficientGpu);
    }
}

/// Where a pod short of `res` could go, and what is wrong there.
struct Reach<'a> {
    /// The nodes it could go to that have this resource at all.
    with_res: Vec<(&'a k8s_openapi::api::core::v1::Node, &'a GpuResource)>,
    /// Nodes it could go to whose device plugin is missing or failing.
    plugin_down: Vec<&'a str>,
    /// Of those, the nodes whose plugin waits for an MPS control daemon.
    mps_down: Vec<&'a str>,
    /// The node it is aimed at (selector or nomination), when that one has no plugin.
    aimed: Option<&'a str>,
    /// The nodes with the resource whose GPUs failed.
    failed: Vec<(&'a str, &'a GpuResource)>,
    /// NVIDIA GPU resources the nodes it could go to advertise under another name, with them.
    siblings: std::collections::BTreeMap<String, Vec<String>>,
    /// The first holder of a unit there that is being deleted, with its node.
    terminating: Option<(&'a k8s_openapi::api::core::v1::Node, &'a gpudash_model::model::Holder)>,
}

impl<'a> Reach<'a> {
    fn of(cx: &Ctx<'a>, troubled: &[Troubled<'a>], aim: Aim<'_>, res: &str) -> Self {
        let with_res: Vec<(&k8s_openapi::api::core::v1::Node, &GpuResource)> = cx
            .pairs
            .iter()
            .filter(|(n, _)| Ctx::could_aim(aim, n))
            .filter_map(|(n, v)| v.gpu_resources.iter().find(|g| g.resource == res && g.capacity > 0).map(|g| (*n, g)))
            .collect();
        let down: Vec<&Troubled<'a>> =
            troubled.iter().filter(|t| t.trouble.advertises_nothing() && Ctx::could_aim(aim, t.node)).collect();
        let plugin_down = down.iter().map(|t| t.name).collect();
        let mps_down = down.iter().filter(|t| t.trouble == Trouble::MpsDaemonMissing).map(|t| t.name).collect();
        let aimed = troubled
            .iter()
            .find(|t| t.trouble.advertises_nothing() && crate::derive::pending::aims_at(aim, t.node))
            .map(|t| t.name);
        let failed = with_res
            .iter()
            .filter(|(_, g)| g.out_of_service > 0)
            .map(|(n, g)| (n.metadata.name.as_deref().unwrap_or(""), *g))
            .collect();
        let mut siblings: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
        if node::is_nvidia_gpu(res) && with_res.is_empty() {
            for (n, v) in cx.pairs.iter().filter(|(n, _)| Ctx::could_aim(aim, n)) {
                for g in v
                    .gpu_resources
                    .iter()
                    .filter(|g| g.capacity > 0 && g.resource != res && node::is_nvidia_gpu(&g.resource))
                {
                    siblings.entry(g.resource.clone()).or_default().push(n.metadata.name.clone().unwrap_or_default());
                }
            }
        }
        let terminating = first_terminating(&with_res);
        Reach { with_res, plugin_down, mps_down, aimed, failed, siblings, terminating }
    }
}

/// What a pod short of `res` is told, by why: the node it is aimed at has no plugin, no node
/// advertises it, the GPU it needs failed, its own rollout holds the units (raising
/// `gpu-rollout-deadlock` on the workload), a terminating pod holds them, or every unit is held.
fn advice(
    cx: &Ctx<'_>,
    p: &mut PendingPod,
    pod: &crate::pod::Pod,
    (res, want): (&str, u64),
    reach: &Reach<'_>,
    stalled: &[Stalled<'_>],
    out: &mut Vec<Diagnosis>,
) -> Said {
    let Reach { with_res, plugin_down, mps_down, aimed, failed, terminating, .. } = reach;
    if let Some(node) = aimed.filter(|n| mps_down.contains(n)) {
        note(p, Code::GpuMpsDaemonMissing);
        said::waiting_node_aimed_mps(&want, &res, &node)
    } else if let Some(node) = aimed {
        note(p, Code::DevicePluginMissing);
        said::waiting_node_aimed_at_which(&want, &res, &node)
    } else if with_res.is_empty() {
        if !mps_down.is_empty() {
            note(p, Code::GpuMpsDaemonMissing);
        }
        // No node advertises it, or one does not for want of its plugin.
        if plugin_down.is_empty() || plugin_down.iter().any(|n| !mps_down.contains(n)) {
            note(p, Code::DevicePluginMissing);
        }
        let where_ = if plugin_down.is_empty() {
            said::no_gpu_node_shows_why()
        } else {
            let names: Vec<String> = plugin_down.iter().map(|s| (*s).to_string()).collect();
            let who = list(&names);
            said::nvidia_device_plugin_missing_failing(&who)
        };
        said::nowhere_advertised(&want, &res, &where_)
    } else if !failed.is_empty() {
        note(p, Code::GpuUnhealthy);
        let parts: Vec<Said> = failed
            .iter()
            .map(|(n, g)| {
                let (o, c) = (g.out_of_service, g.capacity);
                said::out_service(&o, &c, &n)
            })
            .collect();
        let parts = Said::join(&parts, ", ", "、");
        said::waiting_gpu_needs_has_failed(&want, &res, &parts)
    } else if let Some((node, _)) = with_res
        .iter()
        .find(|(n, g)| g.allocatable.saturating_sub(g.allocated) >= want && crate::fit::matches_affinity(pod, n))
    {
        // A unit is free on a node the pod's selector and affinity allow: it is never told that
        // every unit is held.
        let name = node.metadata.name.as_deref().unwrap_or("");
        let why = kept_off(node, pod);
        after_said::free_but_kept_off(&want, &res, &name, &why)
    } else if let Some(r) = super::rollout::rollout_deadlock(cx, pod, res, want, with_res) {
        note(p, Code::GpuRolloutDeadlock);
        if !out.iter().any(|d| {
            d.code == Code::GpuRolloutDeadlock
                && d.name == r.name
                && d.namespace.as_deref() == Some(r.namespace.as_str())
        }) {
            let d = diag(
                Code::GpuRolloutDeadlock,
                Severity::Critical,
                Kind::from(r.kind()),
                Some(&r.namespace),
                &r.name,
                r.text(cx.now, &p.name, res, want),
            );
            out.push(on_node(d, r.node()));
        }
        r.waiting_text(res, want)
    } else if let Some(s) = waiting_for_stalled(stalled, with_res, res) {
        note(p, Code::GpuHeldNotRunning);
        let (holder, reason) = (s.name(), s.reason());
        after_said::waiting_for_stalled(&want, &res, &holder, &s.node, &s.took(), &reason)
    } else if let Some(t) = terminating_holder(cx, *terminating, out) {
        note(p, Code::GpuHeldByTerminatingPod);
        let (holder, since, grace) = (t.pod, t.since, t.grace);
        let stuck: Said = if t.stuck { said::past_grace_period_gpu_held() } else { Said::default() };
        said::waiting_every_matching_unit_held(&want, &res, &holder, &since, &grace, &stuck)
    } else {
        let shared = with_res.iter().any(|(_, g)| g.sharing == Sharing::TimeSlicing);
        let hint = if shared { said::free_replica_scale_down_remove() } else { said::free_one_scale_down_pod() };
        said::waiting_every_matching_node_already(&want, &res, &hint)
    }
}

/// Why the scheduler keeps a pod off a node where a unit is free: a pressure condition (its
/// taint), other taints the pod does not tolerate, or the scheduler's other reasons.
fn kept_off(node: &k8s_openapi::api::core::v1::Node, pod: &crate::pod::Pod) -> Said {
    let pressure = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_.ends_with("Pressure") && c.status == "True"));
    if let Some(c) = pressure {
        let taint = match c.type_.as_str() {
            "MemoryPressure" => "node.kubernetes.io/memory-pressure",
            "DiskPressure" => "node.kubernetes.io/disk-pressure",
            _ => "node.kubernetes.io/pid-pressure",
        };
        return after_said::kept_off_pressure(&c.type_, &taint);
    }
    let tolerations = pod.spec.as_ref().and_then(|s| s.tolerations.as_deref()).unwrap_or(&[]);
    let untolerated: Vec<String> = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[])
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .filter(|t| !tolerations.iter().any(|o| crate::fit::predicates::tolerates(o, t)))
        .map(|t| format!("{}:{}", t.key, t.effect))
        .collect();
    if untolerated.is_empty() {
        after_said::kept_off_other()
    } else {
        let taints = untolerated.join(", ");
        after_said::kept_off_taints(&taints)
    }
}

/// `gpu-resource-name-mismatch`: the pod asks for an NVIDIA GPU resource by a name no node it
/// could go to advertises, while they advertise a sibling (`nvidia.com/gpu.shared` from the
/// device plugin's `renameByDefault: true`, a MIG profile) or hand GPUs out through DRA only.
fn resource_name_mismatch(
    cx: &Ctx<'_>,
    res: &str,
    want: u64,
    siblings: &std::collections::BTreeMap<String, Vec<String>>,
) -> Said {
    let Some((offered, nodes)) = siblings.iter().max_by_key(|(_, n)| n.len()) else {
        let classes: Vec<String> = cx
            .inputs
            .device_classes
            .iter()
            .filter(|c| crate::derive::dra::is_gpu_class(c))
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        let class = classes.first().cloned().unwrap_or_default();
        let classes = list(&classes);
        return said::waiting_which_no_node_advertises(&want, &res, &classes, &class);
    };
    let who = list(nodes);
    let why = if offered.strip_prefix(res).is_some_and(|rest| rest == ".shared") {
        said::nvidia_device_plugin_time_slicing(&offered)
    } else if offered.starts_with("nvidia.com/mig-") {
        said::gpu_partitioned_mig_mixed_strategy()
    } else if res.ends_with(".shared") {
        said::time_slicing_not_renamed_there(&offered)
    } else {
        said::device_plugin_advertises_gpu(&offered)
    };
    said::resource_renamed_elsewhere(&want, &res, &who, &offered, &why)
}

/// `gpu-node-cordoned`: a pending pod the scheduler refused because the nodes it could run on
/// are cordoned (`kubectl cordon`, `spec.unschedulable`) — often left over from maintenance.
pub(super) fn gpu_node_cordoned(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        if !p.reasons.iter().any(|r| *r.reason.en == *"node(s) were unschedulable") {
            continue;
        }
        let gpu = p.gpu_request.as_ref();
        let cordoned: Vec<(String, Option<String>)> = cx
            .pairs
            .iter()
            .filter(|(n, _)| n.spec.as_ref().and_then(|s| s.unschedulable) == Some(true))
            .filter(|(n, _)| Ctx::could_target(pod, n))
            .filter(|(_, v)| {
                gpu.is_none_or(|g| v.gpu_resources.iter().any(|r| r.resource == g.resource && r.capacity > 0))
            })
            .map(|(n, _)| {
                let since = n
                    .spec
                    .as_ref()
                    .and_then(|s| s.taints.as_ref())
                    .and_then(|t| t.iter().find(|t| t.key == "node.kubernetes.io/unschedulable"))
                    .and_then(|t| t.time_added.as_ref())
                    .map(|t| t.0.to_string());
                (n.metadata.name.clone().unwrap_or_default(), since)
            })
            .collect();
        let Some((first, since)) = cordoned.first().cloned() else { continue };
        let names: Vec<String> = cordoned.iter().map(|(n, _)| n.clone()).collect();
        let who = list(&names);
        let since: Said = since.map(|s| said::since(&s)).unwrap_or_default();
        let what: Said = match gpu {
            Some(g) => {
                let r = &g.resource;
                said::nodes_with_it_could_run_on(&r)
            }
            None => said::nodes_it_could_run_on(),
        };
        out.push(diag(
            Code::GpuNodeCordoned,
            Severity::Critical,
            Kind::Pod,
            Some(&p.namespace),
            &p.name,
            said::waiting_because_cordoned_spec_unschedulable(&what, &who, &since, &first),
        ));
        note(p, Code::GpuNodeCordoned);
    }
}

/// `shared-gpu-request-too-large` from the scheduler's side (the device plugin's message).
pub(super) fn shared_gpu_request_too_large(pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for p in pending.iter_mut() {
        if p.message.as_deref().is_some_and(|m| m.contains("maximum request size for shared resources is 1")) {
            out.push(diag(
                Code::SharedGpuRequestTooLarge,
                Severity::Critical,
                Kind::Pod,
                Some(&p.namespace),
                &p.name,
                said::requests_more_than_replica_time(),
            ));
            note(p, Code::SharedGpuRequestTooLarge);
        }
    }
}

/// The node with the most memory free where a pod could go, and how many nodes it could go to.
type Best<'a> = (Option<&'a NodeView>, usize);

/// `insufficient-memory`: a pending pod the scheduler refused for memory, with the numbers of
/// the node it was closest to fitting (unified-memory boards: the one pool the model's
/// weights live in) and whether a GPU unit is free there while the memory is not.
pub(super) fn insufficient_memory(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    let free = |v: &NodeView| v.memory.allocatable_bytes.saturating_sub(v.memory.requested_bytes);
    // The node with the most memory free where a pod could go, and how many it could go to: the
    // same for every pod that names nodes alike and asks for the same GPU resource (one walk
    // over the nodes for a workload's waiting pods, not one a pod).
    let mut best_of: crate::derive::Map<(Aim<'_>, Option<String>), Best<'_>> = crate::derive::Map::default();
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        if !p.reasons.iter().any(|r| *r.reason.en == *"Insufficient memory") {
            continue;
        }
        let ask = p.memory_request_bytes.unwrap_or(0);
        let gpu = p.gpu_request.clone();
        let key = (crate::derive::pending::aim(pod), gpu.as_ref().map(|g| g.resource.clone()));
        let (best, candidates) = *best_of.entry(key).or_insert_with_key(|(aim, resource)| {
            // Candidates: nodes it could go to that are up and, for a GPU pod, have its resource.
            let mut best: Option<&NodeView> = None;
            let mut count = 0;
            let candidates =
                cx.pairs.iter().filter(|(n, v)| v.ready && Ctx::could_aim(*aim, n)).map(|(_, v)| *v).filter(|v| {
                    resource.as_ref().is_none_or(|r| v.gpu_resources.iter().any(|g| &g.resource == r && g.capacity > 0))
                });
            for v in candidates {
                count += 1;
                // The most free; of equals, the first by name.
                if best.is_none_or(|b| (free(v), &b.name) > (free(b), &v.name)) {
                    best = Some(v);
                }
            }
            (best, count)
        });
        let Some(best) = best else {
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
        let mut measured: Said = m
            .used_bytes
            .map(|u| {
                let u = Bytes(u);
                memory_said::board_pods_use_now(&u)
            })
            .unwrap_or_default();
        // Where the agent reads GPU memory per process, what the models really hold and what
        // the board really has free (requests count neither).
        if let Some(sp) = m.split.as_ref().filter(|_| best.unified_memory) {
            let (g, f) = (Bytes(sp.gpu_pods_bytes), Bytes(sp.free_bytes));
            measured.push(&memory_said::their_models_hold_gpu_memory(&g, &f));
        }
        let others = if candidates > 1 {
            let n = candidates - 1;
            memory_said::other_node_could_go_have(&n)
        } else {
            Said::default()
        };
        let (alloc, req, ask, left) =
            (Bytes(m.allocatable_bytes), Bytes(m.requested_bytes), Bytes(ask), Bytes(free(best)));
        let text = if best.unified_memory {
            let replica: Said = match &gpu_free {
                Some(r) => memory_said::unit_free_there_but_board(&r),
                None => Said::default(),
            };
            memory_said::waiting_memory_shares_between_cpu(
                &name, &alloc, &req, &ask, &left, &replica, &measured, &others,
            )
        } else {
            let replica: Said = match &gpu_free {
                Some(r) => memory_said::unit_free_there_but_memory(&r),
                None => Said::default(),
            };
            memory_said::waiting_memory_has_allocatable_pods(
                &name, &alloc, &req, &ask, &left, &replica, &measured, &others,
            )
        };
        out.push(diag(Code::InsufficientMemory, Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name, text));
        note(p, Code::InsufficientMemory);
    }
}
