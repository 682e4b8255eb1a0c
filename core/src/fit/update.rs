//! The what-if check for an update: a pasted Deployment or DaemonSet that already runs here is
//! its own next version, and its old pods keep what they hold while the rollout surges. Says
//! whether the rollout, with the strategy given, can complete — the question behind
//! `gpu-rollout-deadlock`, asked before the update instead of after.

use std::collections::BTreeSet;
use std::sync::Arc;

use gpudash_model::i18n::Said;
use gpudash_model::model::{FitResult, UpdateFit};
use k8s_openapi::api::core::v1::Node;

use super::place;
use super::update_said as said;
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
        daemonset(&old, surged, &emptied, &r.strategy, sw, uw)
    } else if r.strategy == "Recreate" {
        let (replicas, placed) = (w.replicas, emptied.placeable);
        let end_ok = placed >= replicas;
        (
            end_ok,
            if end_ok {
                said::recreate_fits(&n_old, &replicas)
            } else {
                said::recreate_part_way(&n_old, &placed, &replicas)
            },
        )
    } else {
        rolling(inputs, w, &old, surged, &emptied, sw, uw, unified)
    };
    Some(UpdateFit { completes, old_pods: u32::try_from(n_old).unwrap_or(u32::MAX), message })
}

/// A DaemonSet's update: with surge, the new pod must fit beside the old one on every node;
/// without, in its place.
fn daemonset(
    old: &[&Arc<Pod>],
    surged: &FitResult,
    emptied: &FitResult,
    strategy_name: &str,
    sw: Option<String>,
    uw: Option<String>,
) -> (bool, Said) {
    let nodes: BTreeSet<&str> = old.iter().filter_map(|p| pods::node_of(p)).collect();
    let total = i64::try_from(nodes.len()).unwrap_or(i64::MAX);
    let sw = sw.unwrap_or_else(|| "0".into());
    let uw = uw.unwrap_or_else(|| "1".into());
    let surge = strategy::scaled(&sw, total, true);
    let surging = strategy_name == "RollingUpdate" && surge >= 1;
    let stuck: Vec<String> = nodes
        .iter()
        .filter(|n| !if surging { fits_on(surged, n) } else { fits_on(emptied, n) })
        .map(|n| (*n).to_string())
        .collect();
    let where_ = stuck.join(", ");
    let count = nodes.len();
    let said = match (surging, stuck.is_empty(), strategy_name == "OnDelete") {
        (_, true, true) => said::on_delete(&count),
        (true, true, _) => said::surge_fits_everywhere(&sw, &surge, &count),
        (true, false, _) => said::surge_deadlock(&sw, &surge, &count, &where_),
        (false, true, _) => said::in_place_fits(&uw, &count),
        (false, false, _) => said::does_not_fit_on(&where_),
    };
    (stuck.is_empty(), said)
}

/// A Deployment's rolling update: a new pod beside the old ones (surge) or in the room the
/// first ones taken down free (unavailable), and all of them once the old ones are gone.
#[allow(clippy::too_many_arguments)]
fn rolling(
    inputs: &Inputs,
    w: &Workload,
    old: &[&Arc<Pod>],
    surged: &FitResult,
    emptied: &FitResult,
    sw: Option<String>,
    uw: Option<String>,
    unified: &dyn Fn(&Node) -> bool,
) -> (bool, Said) {
    let (replicas, placed, n_old) = (w.replicas, emptied.placeable, old.len());
    let end_ok = placed >= replicas;
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
        said::rolling_deadlock(&sw, &surge, &uw, &unavailable, &replicas, &n_old, &placed)
    } else if !end_ok {
        said::rolling_part_way(&n_old, &placed, &replicas)
    } else if beside {
        said::rolling_beside(&sw, &surge, &uw, &unavailable, &replicas, &n_old)
    } else {
        said::rolling_freed(&sw, &surge, &uw, &unavailable, &replicas)
    };
    ((beside || freed) && end_ok, said)
}
