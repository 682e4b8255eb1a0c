//! Diagnoses of pods waiting for the scheduler: short of a GPU (held, failed, or never
//! advertised), asking for too many shared replicas, short of a board's memory.

use app::model::{Diagnosis, GpuResource, NodeView, PendingPod, Severity, Sharing};

use app::i18n::Said;
use app::say;

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
        let text = if let Some(node) = aimed {
            note(p, "device-plugin-missing");
            say!("Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help.", "対象の Node {node} で {res} を {want} 個待っていますが、{node} は1つも公開していません。そこで NVIDIA device plugin がないか失敗しています（その Node の device-plugin-missing を参照）— プラグインを直してください。ほかで GPU を空けても解決しません。")
        } else if with_res.is_empty() {
            note(p, "device-plugin-missing");
            let where_ = if plugin_down.is_empty() {
                say!("no GPU node shows why (no node looks like a GPU node): check that the NVIDIA device plugin runs on the GPU nodes", "理由を示す GPU Node がありません（GPU Node らしい Node がない）。GPU Node で NVIDIA device plugin が動いているか確認してください")
            } else {
                let names: Vec<String> = plugin_down.iter().map(|s| (*s).to_string()).collect();
                let who = list(&names);
                say!("the NVIDIA device plugin is missing or failing on {who} (see device-plugin-missing) — fix the plugin there", "{who} で NVIDIA device plugin がないか失敗しています（device-plugin-missing を参照）— そこでプラグインを直してください"; who)
            };
            say!("Waiting for {want} {res}, which no node it can go to advertises at all: {where_}. There is nothing to free, and time-slicing cannot help while the plugin is down.", "{res} を {want} 個待っていますが、行ける Node はどれも {res} を公開していません：{where_}。空けられるものはなく、プラグインが止まっている間はタイムスライスも役に立ちません。"; where_)
        } else if !failed.is_empty() {
            note(p, "gpu-unhealthy");
            let parts: Vec<Said> = failed
                .iter()
                .map(|(n, g)| {
                    let (o, c) = (g.out_of_service, g.capacity);
                    say!("{o} of {c} on {n} out of service", "{n} の {c} 個中 {o} 個が使用不可")
                })
                .collect();
            let parts = Said::join(&parts, ", ", "、");
            say!("Waiting for {want} {res}: the GPU it needs has failed — {parts} (the device plugin marked it unhealthy; see gpu-unhealthy) and the rest is held. Bring the GPU back (check the node's kernel log for Xid errors, nvidia-smi, the device plugin's log) or free a unit elsewhere.", "{res} を {want} 個待っています。必要な GPU が故障しています — {parts}（device plugin が異常と判断。gpu-unhealthy を参照）、残りは使用中です。GPU を戻す（Node のカーネルログの Xid エラー、nvidia-smi、device plugin のログを確認）か、ほかでユニットを空けてください。"; parts)
        } else {
            let shared = with_res.iter().any(|(_, g)| g.sharing == Sharing::TimeSlicing);
            let hint = if shared {
                say!("free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node", "レプリカを空ける（持っている Pod をスケールダウンか削除）、タイムスライスのレプリカ数を増やす、または GPU Node を追加してください")
            } else {
                say!("free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node", "1つ空ける（持っている Pod をスケールダウン）、NVIDIA device plugin でタイムスライスのレプリカを有効にする、または GPU Node を追加してください")
            };
            say!("Waiting for {want} {res}: every matching node's {res} is already held — {hint}.", "{res} を {want} 個待っています。合う Node の {res} はすべて使用中です — {hint}。"; hint)
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
                say!("Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the GPU).", "タイムスライスの GPU のレプリカを2つ以上要求しており、device plugin が拒否します。1 を要求してください（レプリカを増やしても GPU の取り分は増えません）。")));
            note(p, "shared-gpu-request-too-large");
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
        let measured: Said = m
            .used_bytes
            .map(|u| {
                let u = Bytes(u);
                say!(" (the board's pods use {u} now)", "（ボードの Pod の現在の使用量は {u}）")
            })
            .unwrap_or_default();
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
        out.push(diag("insufficient-memory", Severity::Critical, "Pod", Some(&p.namespace), &p.name, text));
        note(p, "insufficient-memory");
    }
}
