//! Diagnoses of pods waiting for the scheduler: short of a GPU (held, failed, or never
//! advertised), asking for too many shared replicas, short of a board's memory.

use app::model::{Code, Diagnosis, GpuResource, Kind, NodeView, PendingPod, Severity, Sharing};

use app::i18n::Said;
use app::say;

use super::nodes::{Trouble, Troubled};
use super::{diag, list, on_node, Ctx};
use crate::derive::node;
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
    pending: &mut [PendingPod],
    out: &mut Vec<Diagnosis>,
) {
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
        // NVIDIA GPU resources the nodes it could go to advertise under another name.
        let siblings: std::collections::BTreeMap<String, Vec<String>> =
            if node::is_nvidia_gpu(&res) && with_res.is_empty() {
                let mut m: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
                for (n, v) in cx.pairs.iter().filter(|(n, _)| Ctx::could_target(pod, n)) {
                    for g in v
                        .gpu_resources
                        .iter()
                        .filter(|g| g.capacity > 0 && g.resource != res && node::is_nvidia_gpu(&g.resource))
                    {
                        m.entry(g.resource.clone()).or_default().push(n.metadata.name.clone().unwrap_or_default());
                    }
                }
                m
            } else {
                std::collections::BTreeMap::new()
            };
        let dra_only = node::is_nvidia_gpu(&res) && with_res.is_empty() && siblings.is_empty() && cx.dra_mode();
        if aimed.is_none() && (!siblings.is_empty() || dra_only) {
            let text = resource_name_mismatch(cx, &res, want, &siblings);
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
        let text = if let Some(node) = aimed {
            note(p, Code::DevicePluginMissing);
            say!("Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help.", "対象の Node {node} で {res} を {want} 個待っていますが、{node} は1つも公開していません。そこで NVIDIA device plugin がないか失敗しています（その Node の device-plugin-missing を参照）— プラグインを直してください。ほかで GPU を空けても解決しません。")
        } else if with_res.is_empty() {
            note(p, Code::DevicePluginMissing);
            let where_ = if plugin_down.is_empty() {
                say!("no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device plugin runs on the GPU nodes", "理由を示す GPU Node がありません（GPU Node らしい Node がない）。GPU Node で NVIDIA device plugin が動いているか確認してください")
            } else {
                let names: Vec<String> = plugin_down.iter().map(|s| (*s).to_string()).collect();
                let who = list(&names);
                say!("the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) — fix the plugin there", "{who} で NVIDIA device plugin がないか失敗しています（device-plugin-missing を参照）— そこでプラグインを直してください"; who)
            };
            say!("Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. There is nothing to free, and time-slicing cannot help while the plugin is down.", "{res} を {want} 個待っていますが、行ける Node はどれも {res} を公開していません：{where_}。空けられるものはなく、プラグインが止まっている間はタイムスライスも役に立ちません。"; where_)
        } else if !failed.is_empty() {
            note(p, Code::GpuUnhealthy);
            let parts: Vec<Said> = failed
                .iter()
                .map(|(n, g)| {
                    let (o, c) = (g.out_of_service, g.capacity);
                    say!("{o} of {c} on {n} out of service", "{n} の {c} 個中 {o} 個が使用不可")
                })
                .collect();
            let parts = Said::join(&parts, ", ", "、");
            say!("Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin marked it unhealthy; see gpu-unhealthy) and the rest is held. Bring the GPU back (check the node's kernel log for Xid errors, nvidia-smi, the device plugin's log) or free a unit elsewhere.", "{res} を {want} 個待っています。必要な GPU が故障しています — {parts}（device plugin が異常と判断。gpu-unhealthy を参照）、残りは使用中です。GPU を戻す（Node のカーネルログの Xid エラー、nvidia-smi、device plugin のログを確認）か、ほかでユニットを空けてください。"; parts)
        } else if let Some(r) = super::rollout::rollout_deadlock(cx, pod, &res, want, &with_res) {
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
                    r.text(cx.now, &p.name, &res, want),
                );
                out.push(on_node(d, r.node()));
            }
            r.waiting_text(&res, want)
        } else if let Some(t) = terminating_holder(cx, &with_res, out) {
            note(p, Code::GpuHeldByTerminatingPod);
            let (holder, since, grace) = (t.pod, t.since, t.grace);
            let stuck: Said = if t.stuck {
                say!(
                    " It is past its grace period: see gpu-held-by-terminating-pod for why it may be stuck.",
                    "猶予期間を過ぎています。止まっている理由は gpu-held-by-terminating-pod を参照してください。"
                )
            } else {
                Said::default()
            };
            say!("Waiting for {want} {res}: every matching unit is held, and {holder}, which holds one, is terminating (deleting since {since}, grace {grace} s) — the unit frees when it is gone; nothing to do yet.{stuck}", "{res} を {want} 個待っています。合うユニットはすべて使用中で、そのうち1つを持つ {holder} は終了処理中です（{since} から削除中、猶予 {grace} 秒）— 終わればユニットが空きます。今はすることはありません。{stuck}"; stuck)
        } else {
            let shared = with_res.iter().any(|(_, g)| g.sharing == Sharing::TimeSlicing);
            let hint = if shared {
                say!("free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node", "レプリカを空ける（持っている Pod をスケールダウンか削除）、タイムスライスのレプリカ数を増やす、または GPU Node を追加してください")
            } else {
                say!("free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node", "1つ空ける（持っている Pod をスケールダウン）、NVIDIA device plugin でタイムスライスのレプリカを有効にする、または GPU Node を追加してください")
            };
            say!("Waiting for {want} {res}: every matching node's {res} is already held — {hint}.", "{res} を {want} 個待っています。合う Node の {res} はすべて使用中です — {hint}。"; hint)
        };
        out.push(diag(Code::InsufficientGpu, Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name, text));
        note(p, Code::InsufficientGpu);
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
        return say!("Waiting for {want} {res}, which no node advertises: this cluster hands out GPUs through DRA (DeviceClass {classes}), not a device plugin. Ask for the GPU with a ResourceClaim instead: remove {res} from resources.limits and add spec.resourceClaims naming a ResourceClaimTemplate whose request has deviceClassName: {class}.", "{res} を {want} 個待っていますが、どの Node も公開していません。このクラスタは device plugin ではなく DRA（DeviceClass {classes}）で GPU を割り当てます。ResourceClaim で要求してください：resources.limits から {res} を外し、deviceClassName: {class} の ResourceClaimTemplate を spec.resourceClaims で指定します。"; classes);
    };
    let who = list(nodes);
    let why = if offered.strip_prefix(res).is_some_and(|rest| rest == ".shared") {
        say!("the NVIDIA device plugin's time-slicing with renameByDefault: true advertises shared GPUs as {offered}", "NVIDIA device plugin のタイムスライスで renameByDefault: true のため、共有 GPU は {offered} として公開されています")
    } else if offered.starts_with("nvidia.com/mig-") {
        say!(
            "the GPU is partitioned with MIG, and the mixed strategy advertises each profile by its name",
            "GPU が MIG で分割され、mixed 戦略では各プロファイルが名前で公開されます"
        )
    } else if res.ends_with(".shared") {
        say!(
            "time-slicing is not renamed there (or is off), so the GPU is advertised as {offered}",
            "そこではタイムスライスが改名されていない（または無効）ため、GPU は {offered} として公開されています"
        )
    } else {
        say!(
            "the device plugin advertises the GPU as {offered}",
            "device plugin は GPU を {offered} として公開しています"
        )
    };
    say!("Waiting for {want} {res}, which no node it can go to advertises — but {who} advertise {offered}: the device plugin runs; {why}. Change the pod's resources.limits from {res}: {want} to {offered}: {want} (or set the device plugin to advertise {res}).", "{res} を {want} 個待っていますが、行ける Node はどれも公開していません — ただし {who} は {offered} を公開しています。device plugin は動いています。{why}。Pod の resources.limits を {res}: {want} から {offered}: {want} に変えてください（または device plugin が {res} を公開するよう設定してください）。"; who, why)
}

/// A GPU holder that is being deleted, as a waiting pod sees it.
struct Terminating {
    /// `namespace/name`.
    pod: String,
    /// When its deletion was asked (deletionTimestamp less the grace period).
    since: String,
    /// Its grace period, seconds.
    grace: i64,
    /// Past its grace period by more than a minute.
    stuck: bool,
}

/// The first holder of a unit the waiting pod could use that is terminating; raises
/// `gpu-held-by-terminating-pod` (once per holder) when it is past its grace period by more than
/// a minute, with the likely cause.
fn terminating_holder(
    cx: &Ctx<'_>,
    with_res: &[(&k8s_openapi::api::core::v1::Node, &GpuResource)],
    out: &mut Vec<Diagnosis>,
) -> Option<Terminating> {
    let (node, h) = with_res.iter().find_map(|(n, g)| g.holders.iter().find(|h| h.terminating).map(|h| (*n, h)))?;
    let pod = cx.inputs.pods.iter().find(|p| {
        p.metadata.namespace.as_deref() == Some(h.namespace.as_str())
            && p.metadata.name.as_deref() == Some(h.name.as_str())
    })?;
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
            say!("its node {node_name} is NotReady, so no kubelet confirms that its containers stopped: bring the node back; if it is gone for good, delete the pod with kubectl delete pod -n {ns} {pn} --grace-period=0 --force (only when the node is surely off — its GPU might still be in use)", "Node {node_name} が NotReady のため、コンテナの停止を確認する kubelet がいません。Node を戻してください。恒久的に失われた場合は kubectl delete pod -n {ns} {pn} --grace-period=0 --force で削除します（Node が確実に停止している場合のみ — GPU がまだ使われているかもしれません）")
        } else if !finalizers.is_empty() {
            let f = list(&finalizers);
            say!("finalizers hold it ({f}): the controller that owns them must finish its work; if that controller is gone, remove them with kubectl patch pod -n {ns} {pn} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}'", "finalizer が削除を止めています（{f}）。それを持つコントローラーが処理を終える必要があります。コントローラーがもうない場合は kubectl patch pod -n {ns} {pn} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}' で外してください"; f)
        } else {
            say!("the kubelet on {node_name} has not finished stopping its containers: check the container runtime and the kubelet's log there", "{node_name} の kubelet がコンテナの停止を終えていません。そこのコンテナランタイムと kubelet のログを確認してください")
        };
        let since_s = since.to_string();
        let d = diag(
            Code::GpuHeldByTerminatingPod,
            Severity::Warning,
            Kind::Pod,
            Some(&h.namespace),
            &h.name,
            say!("Terminating since {since_s} and {mins} min past its {grace} s grace period, still holding a GPU \
                that a waiting pod needs: {cause}.", "{since_s} から終了処理中で、猶予 {grace} 秒を {mins} 分過ぎても、\
                待っている Pod が必要とする GPU を持ったままです：{cause}。"; cause),
        );
        out.push(on_node(d, Some(&node_name)));
    }
    Some(Terminating { pod: name, since: since.to_string(), grace, stuck })
}

/// `gpu-node-cordoned`: a pending pod the scheduler refused because the nodes it could run on
/// are cordoned (`kubectl cordon`, `spec.unschedulable`) — often left over from maintenance.
pub(super) fn gpu_node_cordoned(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        if !p.reasons.iter().any(|r| r.reason.en == "node(s) were unschedulable") {
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
        let since: Said = since.map(|s| say!(" since {s}", "（{s} から）")).unwrap_or_default();
        let what: Said = match gpu {
            Some(g) => {
                let r = &g.resource;
                say!("the node(s) with {r} it could run on", "行ける {r} の Node")
            }
            None => say!("the node(s) it could run on", "行ける Node"),
        };
        out.push(diag(Code::GpuNodeCordoned, Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name,
            say!("Waiting because {what} — {who} — are cordoned (spec.unschedulable{since}), perhaps left over from maintenance. When the work there is done: kubectl uncordon {first}.", "{what}（{who}）が cordon されているため待っています（spec.unschedulable{since}）。メンテナンスの戻し忘れかもしれません。作業が終わっていれば：kubectl uncordon {first}"; what, since)));
        note(p, Code::GpuNodeCordoned);
    }
}

/// `shared-gpu-request-too-large` from the scheduler's side (the device plugin's message).
pub(super) fn shared_gpu_request_too_large(pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for p in pending.iter_mut() {
        if p.message.as_deref().is_some_and(|m| m.contains("maximum request size for shared resources is 1")) {
            out.push(diag(Code::SharedGpuRequestTooLarge, Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name,
                say!("Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the GPU).", "タイムスライスの GPU のレプリカを2つ以上要求しており、device plugin が拒否します。1 を要求してください（レプリカを増やしても GPU の取り分は増えません）。")));
            note(p, Code::SharedGpuRequestTooLarge);
        }
    }
}

/// `insufficient-memory`: a pending pod the scheduler refused for memory, with the numbers of
/// the node it was closest to fitting (unified-memory boards: the one pool the model's
/// weights live in) and whether a GPU unit is free there while the memory is not.
pub(super) fn insufficient_memory(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        if !p.reasons.iter().any(|r| r.reason.en == "Insufficient memory") {
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
        let mut measured: Said = m
            .used_bytes
            .map(|u| {
                let u = Bytes(u);
                say!(" (the board's pods use {u} now)", "（ボードの Pod の現在の使用量は {u}）")
            })
            .unwrap_or_default();
        // Where the agent reads GPU memory per process, what the models really hold and what
        // the board really has free (requests count neither).
        if let Some(sp) = m.split.as_ref().filter(|_| best.unified_memory) {
            let (g, f) = (Bytes(sp.gpu_pods_bytes), Bytes(sp.free_bytes));
            measured.push(&say!(
                " (their models hold {g} of GPU memory besides; {f} of the board is really free)",
                "（そのほかモデルが GPU メモリを {g} 使っており、ボードの実際の空きは {f}）"
            ));
        }
        let others = if candidates.len() > 1 {
            let n = candidates.len() - 1;
            say!(
                " {n} other node(s) it could go to have less room.",
                "行けるほかの {n} 個の Node はさらに余裕がありません。"
            )
        } else {
            Said::default()
        };
        let (alloc, req, ask, left) =
            (Bytes(m.allocatable_bytes), Bytes(m.requested_bytes), Bytes(ask), Bytes(free(best)));
        let text = if best.unified_memory {
            let replica: Said = match &gpu_free {
                Some(r) => say!(" A {r} unit is free there, but the board's memory is not: on a Jetson the model's weights live in that same RAM, shared by CPU and GPU.", "そこでは {r} のユニットが空いていますが、ボードのメモリが空いていません。Jetson ではモデルの重みは CPU と GPU が共有する同じ RAM に載ります。"),
                None => Said::default(),
            };
            say!("Waiting for memory: {name} shares {alloc} between CPU and GPU, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower the other models' memory requests to their measured use{measured}, move this model to a board with more memory, or drop a model from {name}.{others}", "メモリを待っています。{name} は CPU と GPU で {alloc} を共有し、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} です。{replica}ほかのモデルのメモリ requests を実測値まで下げる{measured}、このモデルをメモリの多いボードに移す、または {name} からモデルを1つ外してください。{others}"; replica, measured, others)
        } else {
            let replica: Said = match &gpu_free {
                Some(r) => say!(
                    " A {r} unit is free there, but the memory is not.",
                    "そこでは {r} のユニットが空いていますが、メモリが空いていません。"
                ),
                None => Said::default(),
            };
            say!("Waiting for memory: {name} has {alloc} allocatable, its pods request {req}, and this pod asks {ask} — {left} left.{replica} Lower memory requests to measured use{measured}, move a pod off {name}, or add a node with more memory.{others}", "メモリを待っています。{name} の allocatable は {alloc}、Pod の requests は {req}、この Pod は {ask} を求めています — 残りは {left} です。{replica}メモリ requests を実測値まで下げる{measured}、{name} から Pod を移す、またはメモリの多い Node を追加してください。{others}"; replica, measured, others)
        };
        out.push(diag(Code::InsufficientMemory, Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name, text));
        note(p, Code::InsufficientMemory);
    }
}
