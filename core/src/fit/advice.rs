//! The what-if check's advice: what would make the workload fit where it fails on one thing.

use gpudash_model::model::{Headroom, NodeFit};
use k8s_openapi::api::core::v1::Node;

use super::{alloc_milli, dra, fmt_amount, Ask, NodeUse};
use crate::derive::pods;
use crate::quantity::Bytes;

/// Advice for a node that fails on one resource only: time-slicing replicas or a smaller ask
/// for a GPU, a smaller memory request.
pub(super) fn short_of_one(
    ask: &Ask<'_>,
    n: &Node,
    name: &str,
    u: &NodeUse,
    reason: &str,
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) {
    let res = reason.trim_start_matches("Insufficient ").to_string();
    if res == "nvidia.com/gpu" || res == "nvidia.com/gpu.shared" {
        let physical = n
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("nvidia.com/gpu.count"))
            .and_then(|c| c.parse::<u64>().ok())
            .unwrap_or(1)
            .max(1);
        let need = pods::units(u.requested.get(&res).copied().unwrap_or(0) + ask.req.get(&res).copied().unwrap_or(0));
        let replicas = need.div_ceil(physical).max(2);
        let per_pod = pods::units(ask.req.get(&res).copied().unwrap_or(0));
        if per_pod == 1 {
            suggestions.push(gpudash_model::say!(
                "node {name} would fit with time-slicing replicas ≥ {replicas} (the models would share the \
                    GPU's compute and memory, without isolation)",
                "タイムスライスのレプリカを {replicas} 以上にすれば Node {name} に配置できます（モデルは GPU の計算とメモリを分離なしで共有します）"
            ));
        } else {
            suggestions.push(gpudash_model::say!(
                "node {name} would fit if the pod asked for 1 {res} instead of {per_pod}",
                "Pod が {res} を {per_pod} ではなく 1 要求すれば Node {name} に配置できます"
            ));
        }
    } else if res == "memory" {
        let free = alloc_milli(n, "memory") - u.requested.get("memory").copied().unwrap_or(0);
        if free > 0 {
            let f = fmt_amount("memory", free);
            suggestions.push(gpudash_model::say!(
                "fits on {name} if the memory request is ≤ {f}",
                "メモリ request が {f} 以下なら {name} に配置できます"
            ));
        }
    }
}

/// Advice when the pod fits a board whose memory limits would then exceed what the board has.
pub(super) fn limits_over_board(
    ask: &Ask<'_>,
    name: &str,
    h: &Headroom,
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) {
    let max_limit = i128::from(ask.mem_limit) + i128::from(h.after_limits_bytes);
    if max_limit > 0 {
        let (l, b) = (fmt_amount("memory", max_limit * 1000), Bytes(h.board_bytes));
        suggestions.push(gpudash_model::say!(
            "fits on {name} if the memory limit is ≤ {l} (otherwise limits on the board exceed its {b} \
                shared by CPU and GPU)",
            "メモリ limit が {l} 以下なら {name} に配置できます（超えるとボードの limits が CPU と GPU で共有する {b} を超えます）"
        ));
    } else {
        let b = Bytes(h.board_bytes);
        suggestions.push(gpudash_model::say!(
            "fits on {name}, but the memory limits of the pods already there exceed the board's {b}: lower \
                them before adding a model",
            "{name} に配置できますが、すでにある Pod のメモリ limits がボードの {b} を超えています。モデルを追加する前に下げてください"
        ));
    }
}

/// Advice when no node has the devices the claims ask for.
pub(super) fn device_shortage(
    demand: &dra::Demand,
    nodes: &[NodeFit],
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) {
    let short: Vec<&str> = nodes
        .iter()
        .filter(|n| n.reasons.len() == 1 && n.reasons[0] == dra::CANNOT_ALLOCATE)
        .map(|n| n.node.as_str())
        .collect();
    if !short.is_empty() {
        let (w, s) = (demand.wants().join(", "), short.join(", "));
        suggestions.push(gpudash_model::say!(
            "no node has free devices for {w} (nodes short only of devices: {s}) — free a device (a claim \
                held by a pod that is done, or a claim no pod uses) or add a GPU node",
            "{w} に使える空きデバイスのある Node がありません（デバイスだけが足りない Node：{s}）— デバイスを空ける（終わった Pod が持つ claim、どの Pod も使っていない claim）か、GPU Node を追加してください"
        ));
    }
}
