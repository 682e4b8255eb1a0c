//! The what-if check for an update: a pasted Deployment or DaemonSet that already runs here is
//! its own next version, and its old pods keep what they hold while the rollout surges. Says
//! whether the rollout, with the strategy given, can complete — the question behind
//! `gpu-rollout-deadlock`, asked before the update instead of after.

use std::collections::BTreeSet;
use std::sync::Arc;

use app::i18n::Said;
use app::model::{FitResult, UpdateFit};
use app::say;
use k8s_openapi::api::core::v1::Node;

use super::place;
use super::workload::Workload;
use crate::derive::{pods, strategy, Inputs};
use crate::pod::Pod;

/// The state with these pods gone.
fn without(inputs: &Inputs, gone: &BTreeSet<(String, String)>) -> Inputs {
    let mut less = inputs.clone();
    less.pods.retain(|p| !gone.contains(&key(p)));
    less
}

fn key(p: &Pod) -> (String, String) {
    (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default())
}

fn fits_on(r: &FitResult, node: &str) -> bool {
    r.nodes.iter().any(|n| n.node == node && n.fits)
}

/// The update verdict, or `None` when no workload of that kind and name runs here (a new
/// workload: the plain answer is the whole answer).
pub(super) fn verdict(
    inputs: &Inputs,
    w: &Workload,
    surged: &FitResult,
    unified: &dyn Fn(&Node) -> bool,
) -> Option<UpdateFit> {
    let r = w.rollout.as_ref()?;
    let ns = w.pod.metadata.namespace.as_deref().unwrap_or("default");
    let name = w.pod.metadata.name.as_deref()?;
    let owners = pods::rs_owners(&inputs.replica_sets);
    let me = format!("{}/{name}", r.kind);
    let mut old: Vec<&Arc<Pod>> = inputs
        .pods
        .iter()
        .filter(|p| {
            p.metadata.namespace.as_deref() == Some(ns)
                && pods::holds_resources(p)
                && pods::workload(p, &owners).as_deref() == Some(me.as_str())
        })
        .collect();
    if old.is_empty() {
        return None;
    }
    old.sort_by_key(|p| key(p));
    let n_old = old.len();
    let all_old: BTreeSet<(String, String)> = old.iter().map(|p| key(p)).collect();
    let emptied = place(&without(inputs, &all_old), w, unified);
    let (sw, uw) = (r.max_surge.clone(), r.max_unavailable.clone());
    let (completes, message) = if r.kind == "DaemonSet" {
        let nodes: BTreeSet<&str> = old.iter().filter_map(|p| pods::node_of(p)).collect();
        let total = i64::try_from(nodes.len()).unwrap_or(i64::MAX);
        let sw = sw.unwrap_or_else(|| "0".into());
        let uw = uw.unwrap_or_else(|| "1".into());
        let surge = strategy::scaled(&sw, total, true);
        let surging = r.strategy == "RollingUpdate" && surge >= 1;
        let stuck: Vec<String> = nodes
            .iter()
            .filter(|n| !if surging { fits_on(surged, n) } else { fits_on(&emptied, n) })
            .map(|n| (*n).to_string())
            .collect();
        let where_ = stuck.join(", ");
        let count = nodes.len();
        let said: Said = match (surging, stuck.is_empty(), r.strategy == "OnDelete") {
            (_, true, true) => say!(
                "updateStrategy OnDelete: on each of its {count} node(s) the new pod starts when you delete the \
                old one, and it fits there once the old one is gone.",
                "updateStrategy OnDelete：{count} 個の Node それぞれで、古い Pod を削除すると新しい Pod \
                が起動し、古い Pod がなくなればそこに収まります。"
            ),
            (true, true, _) => say!(
                "RollingUpdate with maxSurge {sw} → {surge} of {count} node(s): on every node the new pod fits \
                beside the old one before it is deleted — the update can complete.",
                "RollingUpdate で {count} 個の Node に対し maxSurge {sw} → {surge}：どの Node \
                でも新しい Pod が古い Pod の横に収まり、その後古い Pod が削除されます — 更新は完了できます。"
            ),
            (true, false, _) => say!(
                "RollingUpdate with maxSurge {sw} → {surge} of {count} node(s): on {where_} the controller \
                starts the new pod beside the old one, which holds what it needs, and deletes the old one only \
                when the new one is ready — the update would stop there for ever (gpu-rollout-deadlock). Set \
                updateStrategy.rollingUpdate to maxSurge 0 and maxUnavailable 1: the old pod goes first.",
                "RollingUpdate で {count} 個の Node に対し maxSurge {sw} → {surge}：{where_} \
                ではコントローラーが古い Pod の横に新しい Pod を起動しますが、必要なものは古い Pod \
                が持っており、新しい Pod が Ready になるまで古い Pod は削除されません — \
                更新はそこで止まったままになります（gpu-rollout-deadlock）。updateStrategy.rollingUpdate \
                を maxSurge 0・maxUnavailable 1 にすれば、古い Pod が先に消えます。"
            ),
            (false, true, _) => say!(
                "Without surge (maxUnavailable {uw}) the old pod on each of its {count} node(s) goes first and \
                the new one fits in its place — the update can complete.",
                "surge なし（maxUnavailable {uw}）では {count} 個の Node それぞれで古い Pod \
                が先に消え、新しい Pod がその場所に収まります — 更新は完了できます。"
            ),
            (false, false, _) => say!(
                "On {where_} the new pod does not fit even with the old one gone (see the nodes below): the \
                update would stop there.",
                "{where_} では古い Pod がなくなっても新しい Pod が収まりません（下の Node \
                を参照）。更新はそこで止まります。"
            ),
        };
        (stuck.is_empty(), said)
    } else {
        let replicas = w.replicas;
        let placed = emptied.placeable;
        let end_ok = placed >= replicas;
        if r.strategy == "Recreate" {
            let said = if end_ok {
                say!(
                    "Strategy Recreate: its {n_old} running pod(s) go first — a break in service — then all \
                    {replicas} new pod(s) fit.",
                    "strategy Recreate：動いている {n_old} 個の Pod が先に消え（サービスは途切れます）、\
                    その後 {replicas} 個の新しい Pod がすべて収まります。"
                )
            } else {
                say!(
                    "Strategy Recreate: its {n_old} running pod(s) go first, but even then only {placed} of \
                    {replicas} new pod(s) fit — the rollout would stop part way.",
                    "strategy Recreate：動いている {n_old} 個の Pod が先に消えますが、それでも {replicas} \
                    個中 {placed} 個しか収まりません — ロールアウトは途中で止まります。"
                )
            };
            (end_ok, said)
        } else {
            let sw = sw.unwrap_or_else(|| "25%".into());
            let uw = uw.unwrap_or_else(|| "25%".into());
            let (surge, unavailable) = strategy::deployment(Some(&sw), Some(&uw), i64::from(replicas));
            let beside = surge >= 1 && surged.placeable >= 1;
            let freed = unavailable >= 1 && {
                let first: BTreeSet<(String, String)> =
                    old.iter().take(usize::try_from(unavailable).unwrap_or(usize::MAX)).map(|p| key(p)).collect();
                place(&without(inputs, &first), w, unified).placeable >= 1
            };
            let said = if !beside && !freed {
                say!(
                    "RollingUpdate with maxSurge {sw} → {surge} and maxUnavailable {uw} → {unavailable} for \
                    {replicas} replica(s): the controller starts a new pod before it takes an old one down, and \
                    no node has room for it beside the {n_old} old pod(s) — the rollout would wait for ever \
                    (gpu-rollout-deadlock). With strategy Recreate (or maxSurge 0 and maxUnavailable 1), \
                    {placed} of {replicas} new pod(s) fit once the old ones are gone.",
                    "RollingUpdate で {replicas} レプリカに対し maxSurge {sw} → {surge}、maxUnavailable \
                    {uw} → {unavailable}：コントローラーは古い Pod を止める前に新しい Pod \
                    を起動しますが、{n_old} 個の古い Pod の横に入る余裕のある Node がありません — \
                    ロールアウトは待ち続けます（gpu-rollout-deadlock）。strategy Recreate（または \
                    maxSurge 0・maxUnavailable 1）なら、古い Pod がなくなった後に {replicas} 個中 {placed} \
                    個の新しい Pod が収まります。"
                )
            } else if !end_ok {
                say!(
                    "The rollout can start, but with the {n_old} old pod(s) gone only {placed} of {replicas} \
                    new pod(s) fit — it would stop part way.",
                    "ロールアウトは始められますが、{n_old} 個の古い Pod がなくなっても {replicas} 個中 \
                    {placed} 個しか収まりません — 途中で止まります。"
                )
            } else if beside {
                say!(
                    "RollingUpdate with maxSurge {sw} → {surge} and maxUnavailable {uw} → {unavailable} for \
                    {replicas} replica(s): a new pod fits beside the {n_old} old one(s), and each old pod taken \
                    down makes room for the next — the rollout can complete.",
                    "RollingUpdate で {replicas} レプリカに対し maxSurge {sw} → {surge}、maxUnavailable \
                    {uw} → {unavailable}：新しい Pod が {n_old} 個の古い Pod の横に収まり、古い Pod \
                    が1つ止まるごとに次の場所が空きます — ロールアウトは完了できます。"
                )
            } else {
                say!(
                    "RollingUpdate with maxSurge {sw} → {surge} and maxUnavailable {uw} → {unavailable} for \
                    {replicas} replica(s): no new pod fits beside the old ones, but the controller takes \
                    {unavailable} old pod(s) down first and a new pod fits in what they free — the rollout can \
                    complete, with fewer pods serving meanwhile.",
                    "RollingUpdate で {replicas} レプリカに対し maxSurge {sw} → {surge}、maxUnavailable \
                    {uw} → {unavailable}：古い Pod の横には収まりませんが、コントローラーが先に \
                    {unavailable} 個の古い Pod を止め、空いた場所に新しい Pod が収まります — \
                    ロールアウトは完了できます（その間は動く Pod が減ります）。"
                )
            };
            ((beside || freed) && end_ok, said)
        }
    };
    Some(UpdateFit { completes, old_pods: u32::try_from(n_old).unwrap_or(u32::MAX), message })
}
