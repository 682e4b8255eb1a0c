//! "Will my next model fit?": the default scheduler's filters for these workloads, applied to
//! the watched state — node unschedulable and readiness, taints and tolerations (NoSchedule,
//! NoExecute), node selector and required node affinity, resource fit including extended
//! resources and pod count — with reasons in the scheduler's words and suggestions computed from
//! the state. Pure: no I/O; it changes nothing in the cluster.

mod advice;
mod cel;
pub mod dra;
mod hami_said;
pub(crate) mod predicates;
mod quota;
#[cfg(test)]
mod tests;
mod update;
mod update_said;
#[cfg(test)]
mod update_tests;
pub mod workload;

use std::collections::BTreeMap;

use gpudash_model::model::{FitResult, Headroom, NodeFit};
use k8s_openapi::api::core::v1::Node;

use advice::{device_shortage, limits_over_board, short_of_one};
use predicates::tolerates_cordon;
pub use predicates::{matches_affinity, untolerated};
use workload::Workload;

use crate::derive::{hami, pods, Inputs};
use crate::pod::Pod;
use crate::quantity::{Bytes, Quantity};

/// Every sentence the what-if check's update answer says, from its catalogue.
pub(crate) fn sentences() -> impl Iterator<Item = &'static gpudash_model::i18n::Sentence> {
    update_said::ALL.iter().chain(hami_said::ALL)
}

const TAINT: &str = "node(s) had untolerated taint(s)";
const SELECTOR: &str = "node(s) didn't match Pod's node affinity/selector";
const UNSCHEDULABLE: &str = "node(s) were unschedulable";

fn alloc_milli(node: &Node, res: &str) -> i128 {
    node.status
        .as_ref()
        .and_then(|s| s.allocatable.as_ref())
        .and_then(|a| a.get(res))
        .and_then(|q| Quantity::parse(&q.0).ok())
        .and_then(|q| q.scaled_ceil(3))
        .unwrap_or(0)
}

#[derive(Default)]
struct NodeUse {
    requested: pods::Amounts,
    pods: i128,
    limits: u64,
    /// The cards HAMi gave its pods.
    hami: Vec<hami::Grant>,
}

fn usage(inputs: &Inputs) -> BTreeMap<String, NodeUse> {
    let mut out: BTreeMap<String, NodeUse> = BTreeMap::new();
    for p in &inputs.pods {
        if !pods::holds_resources(p) {
            continue;
        }
        let Some(n) = pods::node_of(p) else { continue };
        let u = out.entry(n.to_string()).or_default();
        for (k, v) in pods::effective_requests(p) {
            *u.requested.entry(k).or_default() += v;
        }
        u.hami.extend(hami::grants(p));
        u.pods += 1;
        u.limits = u.limits.saturating_add(pods::memory_limit(p).0);
    }
    out
}

fn fmt_amount(res: &str, milli: i128) -> String {
    if res == "memory" {
        Bytes(u64::try_from(milli.max(0) / 1000).unwrap_or(0)).to_string()
    } else if res == "cpu" {
        format!("{milli}m")
    } else {
        pods::units(milli).to_string()
    }
}

/// A board's RAM free as its agent's tegrastats last read it.
fn board_free(inputs: &Inputs, n: &Node) -> Option<u64> {
    let name = n.metadata.name.as_deref()?;
    let seen = inputs.agents.iter().find(|a| a.node == name)?;
    Some(seen.report.as_ref()?.tegrastats.as_ref()?.value.as_ref()?.ram_free_bytes())
}

/// Places the workload on the watched state; for a Deployment or DaemonSet that already runs
/// here, also says whether its update can complete.
pub fn fit(inputs: &Inputs, w: &Workload, unified: &dyn Fn(&Node) -> bool) -> FitResult {
    let mut r = place(inputs, w, unified);
    if r.error.is_none() {
        r.update = update::verdict(inputs, w, &r, unified);
    }
    r
}

/// What the pod asks of every node, once the admission steps have shaped it.
struct Ask<'a> {
    pod: Pod,
    req: pods::Amounts,
    demand: dra::Demand,
    dra_index: crate::derive::Map<&'a str, crate::derive::dra::NodeDra>,
    mem_limit: u64,
    unbounded: u32,
    mem_req: i128,
    /// Its containers' memory shares of one card, where it asks HAMi for them.
    hami: Vec<hami::Ask>,
}

/// Places the workload on the watched state: admission (RuntimeClass, quota, DRA classes), then
/// each node as the scheduler's filters see it, then the summary in the scheduler's words.
fn place(inputs: &Inputs, w: &Workload, unified: &dyn Fn(&Node) -> bool) -> FitResult {
    let mut suggestions = Vec::new();
    let mut pod = Pod::from_full(&w.pod);
    let mut classes: Vec<&str> = inputs.runtime_classes.iter().filter_map(|r| r.metadata.name.as_deref()).collect();
    classes.sort_unstable();
    let want_class = pod.spec.as_ref().and_then(|s| s.runtime_class_name.clone());
    let mut refusal = runtime_class(inputs, &mut pod, want_class.as_deref(), &classes, &mut suggestions);
    let req = pods::effective_requests(&pod);
    // Quota admission comes before the scheduler: a pod its namespace's quota refuses is never
    // created, whatever the nodes have free.
    if refusal.is_none() {
        if let Some((why, advice)) = quota::admit(inputs, &w.pod, &req, w.replicas) {
            suggestions.push(advice);
            refusal = why;
        }
    }
    let demand = device_demand(inputs, w, &pod, &req, &mut refusal, &mut suggestions);
    let wants_nvidia = req.iter().any(|(k, v)| k.starts_with("nvidia.com/") && *v > 0 && !demand.mapped.contains(k));
    if want_class.is_none() && wants_nvidia && classes.iter().any(|c| c.starts_with("nvidia")) {
        suggestions.push(gpudash_model::say!(
            "set runtimeClassName: nvidia — on K3s a GPU pod without it may run on the CPU without any error",
            "runtimeClassName: nvidia を設定してください — K3s では、これのない GPU の Pod がエラーなしで CPU で動くことがあります"
        ));
    }
    let (mem_limit, unbounded) = pods::memory_limit(&pod);
    let mem_req = req.get("memory").copied().unwrap_or(0) / 1000;
    let dra_index = if demand.is_empty() { Default::default() } else { dra::index(inputs) };
    let hami = hami::asks(&pod);
    let ask = Ask { pod, req, demand, dra_index, mem_limit, unbounded, mem_req, hami };
    let use_by = usage(inputs);
    let mut histogram: BTreeMap<String, u32> = BTreeMap::new();
    let mut sorted: Vec<&std::sync::Arc<Node>> = inputs.nodes.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let nodes: Vec<NodeFit> = sorted
        .into_iter()
        .map(|n| {
            let f = node_fit(
                inputs,
                &ask,
                n,
                use_by.get(n.metadata.name.as_deref().unwrap_or("")),
                unified,
                &mut suggestions,
            );
            for r in &f.reasons {
                *histogram.entry(r.clone()).or_default() += 1;
            }
            f
        })
        .collect();
    if !ask.demand.is_empty() && !nodes.iter().any(|n| n.fits) {
        device_shortage(&ask.demand, &nodes, &mut suggestions);
    }
    if !nodes.iter().any(|n| n.fits) && nodes.iter().any(|n| n.reasons.iter().any(|r| r == CARD_MEMORY)) {
        hami_shortage(inputs, &ask, &use_by, &mut suggestions);
    }
    if refusal.is_none() {
        refusal = kubelet_refusal(inputs, &ask, &use_by, &mut suggestions);
    }
    let placeable = if refusal.is_some() {
        0
    } else {
        nodes.iter().map(|n| u64::from(n.capacity_for)).sum::<u64>().min(u64::from(w.replicas)) as u32
    };
    let summary = summary(refusal, &nodes, &histogram, placeable, w.replicas);
    FitResult { summary, replicas: w.replicas, placeable, nodes, suggestions, error: None, update: None }
}

/// A pod that sets `spec.nodeName` is never seen by the scheduler: the kubelet of that node
/// admits it or refuses it (phase Failed, `OutOf<resource>`: see `gpu-admission-rejected`).
/// Its refusal in the kubelet's words (pkg/kubelet/lifecycle/predicate.go) where the node has
/// not got what the pod asks, with the advice.
fn kubelet_refusal(
    inputs: &Inputs,
    ask: &Ask<'_>,
    use_by: &BTreeMap<String, NodeUse>,
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) -> Option<String> {
    let pin = ask.pod.spec.as_ref()?.node_name.as_deref().filter(|n| !n.is_empty())?;
    let Some(n) = inputs.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(pin)) else {
        suggestions.push(gpudash_model::say!(
            "spec.nodeName names {pin}, which is no node of this cluster: the pod would stay Pending for good — \
             remove spec.nodeName and let the scheduler place it",
            "spec.nodeName は {pin} を指定していますが、このクラスターにその Node はありません。Pod はずっと Pending のままです — \
             spec.nodeName を外してスケジューラーに配置させてください"
        ));
        return None;
    };
    let empty = NodeUse::default();
    let u = use_by.get(pin).unwrap_or(&empty);
    let (res, want) = ask
        .req
        .iter()
        .filter(|(_, v)| **v > 0)
        .find(|(res, want)| alloc_milli(n, res) - u.requested.get(*res).copied().unwrap_or(0) < **want)?;
    let used = u.requested.get(res).copied().unwrap_or(0);
    let cap = alloc_milli(n, res);
    // The kubelet counts CPU in millicores, every other resource in its unit.
    let v = |m: i128| if res == "cpu" { m } else { m.div_euclid(1000) + i128::from(m.rem_euclid(1000) > 0) };
    let (want, used, cap) = (v(*want), v(used), v(cap));
    suggestions.push(gpudash_model::say!(
        "spec.nodeName pins the pod to {pin} and bypasses the scheduler, which would have kept it Pending: the kubelet on \
         {pin} would refuse it at admission (OutOf{res}) and it would fail, holding nothing — use a nodeSelector \
         (kubernetes.io/hostname: {pin}) so that it waits for {res} instead",
        "spec.nodeName は Pod を {pin} に固定してスケジューラーを通さないため、Pending で待つことができません。{pin} の kubelet が\
         アドミッションで拒否し（OutOf{res}）、Pod は何も持たずに Failed になります — 待たせるには nodeSelector\
         （kubernetes.io/hostname: {pin}）を使ってください"
    ));
    Some(format!(
        "Pod was rejected: Node didn't have enough resource: {res}, requested: {want}, used: {used}, capacity: {cap}"
    ))
}

/// RuntimeClass admission: a class that does not exist refuses the pod (the summary's words,
/// returned); one that does brings its scheduling constraints and overhead to the pod.
fn runtime_class(
    inputs: &Inputs,
    pod: &mut Pod,
    want: Option<&str>,
    classes: &[&str],
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) -> Option<String> {
    let c = want?;
    let Some(rc) = inputs.runtime_classes.iter().find(|r| r.metadata.name.as_deref() == Some(c)) else {
        let have = if classes.is_empty() { "none".to_string() } else { classes.join(", ") };
        suggestions.push(gpudash_model::say!(
            "missing RuntimeClass {c} on this cluster (it has: {have}): the API server would reject the pod \
                — use an existing class or create it",
            "このクラスターには RuntimeClass {c} がありません（あるのは {have}）。API サーバーは Pod を拒否します — 既存のクラスを使うか作成してください"
        ));
        return Some(format!("pod rejected: RuntimeClass \"{c}\" not found"));
    };
    if let (Some(sched), Some(spec)) = (rc.scheduling.as_ref(), pod.spec.as_mut()) {
        if let Some(sel) = &sched.node_selector {
            spec.node_selector.get_or_insert_with(BTreeMap::new).extend(sel.clone());
        }
        if let Some(t) = &sched.tolerations {
            spec.tolerations.get_or_insert_with(Vec::new).extend(t.clone());
        }
    }
    if let (Some(o), Some(spec)) = (rc.overhead.as_ref().and_then(|o| o.pod_fixed.clone()), pod.spec.as_mut()) {
        spec.overhead = Some(o);
    }
    None
}

/// The devices the pod's claims (and DRA-backed extended resources) ask for; a class that does
/// not exist refuses it.
fn device_demand(
    inputs: &Inputs,
    w: &Workload,
    pod: &Pod,
    req: &pods::Amounts,
    refusal: &mut Option<String>,
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) -> dra::Demand {
    let extended: Vec<(String, u64)> = req
        .iter()
        .filter(|(k, v)| k.contains('/') && **v > 0 && !k.starts_with("hugepages-"))
        .map(|(k, v)| (k.clone(), pods::units(*v)))
        .collect();
    let demand = dra::demand(inputs, pod, &w.templates, &w.claims, &extended);
    if let Some(r) = &demand.refusal {
        suggestions.push(gpudash_model::say!(
            "{r}: fix the name, or install the DRA driver that provides the class",
            "{r}：名前を直すか、そのクラスを提供する DRA ドライバーを入れてください"
        ));
        refusal.get_or_insert_with(|| format!("pod cannot be scheduled: {r}"));
    }
    suggestions.extend(demand.notes.iter().cloned());
    demand
}

/// One node as the scheduler's filters see the pod there — its reasons in the scheduler's
/// order (cordon, taints, affinity, then every insufficient resource), how many replicas fit,
/// the board's memory headroom — and the advice for a node that fails on one thing only.
fn node_fit(
    inputs: &Inputs,
    ask: &Ask<'_>,
    n: &Node,
    used: Option<&NodeUse>,
    unified: &dyn Fn(&Node) -> bool,
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) -> NodeFit {
    let empty = NodeUse::default();
    let u = used.unwrap_or(&empty);
    let name = n.metadata.name.clone().unwrap_or_default();
    let unsched = n.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false) && !tolerates_cordon(&ask.pod);
    let taints = untolerated(&ask.pod, n);
    let affinity = matches_affinity(&ask.pod, n);
    let (insufficient, capacity_for) = resources(ask, n, &name, u);
    let reasons: Vec<String> = if unsched {
        vec![UNSCHEDULABLE.into()]
    } else if !taints.is_empty() {
        vec![TAINT.into()]
    } else if !affinity {
        vec![SELECTOR.into()]
    } else {
        insufficient.clone()
    };
    let fits = reasons.is_empty();
    let headroom = unified(n).then(|| headroom(inputs, ask, n, u));
    if !unsched && taints.is_empty() && affinity && insufficient.len() == 1 {
        short_of_one(ask, n, &name, u, &insufficient[0], suggestions);
    }
    if insufficient.is_empty() && !unsched {
        if !taints.is_empty() && affinity {
            let t: Vec<String> = taints
                .iter()
                .map(|t| {
                    format!("{}{}:{}", t.key, t.value.as_deref().map(|v| format!("={v}")).unwrap_or_default(), t.effect)
                })
                .collect();
            let t = t.join(", ");
            suggestions.push(gpudash_model::say!(
                "node {name} has room but taint {t} — add a toleration to use it",
                "Node {name} には余裕がありますが taint {t} があります — 使うには toleration を追加してください"
            ));
        } else if taints.is_empty() && !affinity {
            suggestions.push(gpudash_model::say!(
                "node {name} has room but does not match the pod's node selector/affinity",
                "Node {name} には余裕がありますが、Pod の nodeSelector/affinity に合いません"
            ));
        }
    }
    if let Some(h) = headroom.as_ref().filter(|h| fits && h.after_limits_bytes < 0 && ask.unbounded == 0) {
        limits_over_board(ask, &name, h, suggestions);
    }
    NodeFit { node: name, fits, reasons, capacity_for: if fits { capacity_for.max(1) } else { 0 }, headroom }
}

/// Every resource the node is short of, as the scheduler lists them, and how many replicas its
/// free resources (devices and pod slots included) hold.
fn resources(ask: &Ask<'_>, n: &Node, name: &str, u: &NodeUse) -> (Vec<String>, u32) {
    let mut insufficient = Vec::new();
    let mut capacity_for = u32::MAX;
    for (res, want) in ask.req.iter().filter(|(_, v)| **v > 0) {
        // An extended resource a DeviceClass stands for is counted in devices below; HAMi's
        // per-vGPU amounts are not the node's (its scheduler extender counts them by card).
        if (ask.demand.mapped.contains(res) && alloc_milli(n, res) == 0) || hami::is_companion(res) {
            continue;
        }
        let free = alloc_milli(n, res) - u.requested.get(res).copied().unwrap_or(0);
        if free < *want {
            insufficient.push(format!("Insufficient {res}"));
        }
        capacity_for = capacity_for.min(u32::try_from((free.max(0) / want).min(10_000)).unwrap_or(0));
    }
    if !ask.demand.is_empty() {
        match dra::on_node(&ask.dra_index, name, &ask.demand) {
            Ok(k) => capacity_for = capacity_for.min(k),
            Err(reason) => insufficient.push(reason.to_string()),
        }
    }
    if let Some(k) = hami_room(ask, n, u) {
        if k == 0 {
            insufficient.push(CARD_MEMORY.into());
        }
        capacity_for = capacity_for.min(k);
    }
    let pods_free = alloc_milli(n, "pods") / 1000 - u.pods;
    if pods_free < 1 {
        insufficient.push("Too many pods".into());
    }
    (insufficient, capacity_for.min(u32::try_from(pods_free.clamp(0, 10_000)).unwrap_or(0)))
}

/// HAMi's word when no card of a node has a vGPU's memory share free (its `Fit`).
const CARD_MEMORY: &str = "CardInsufficientMemory";

/// How many replicas a HAMi node's cards hold: each vGPU of a container on a card of its own
/// with its memory share free and a vGPU of the card's split unused (HAMi's `Fit`; free as its
/// scheduler counts it, the card less its grants); none where the node is not HAMi's or the pod
/// asks it for no memory.
fn hami_room(ask: &Ask<'_>, n: &Node, u: &NodeUse) -> Option<u32> {
    if ask.hami.is_empty() {
        return None;
    }
    let cards = hami::cards(n)?;
    // Per card: MiB free and vGPUs free (an unhealthy card has neither).
    let mut room = hami::room(&cards, u.hami.iter().cloned());
    let mut replicas = 0u32;
    // Replica by replica, each container's vGPUs on the cards with the most memory free. Each
    // replica takes a vGPU of some card, so the cards' split bounds the loop.
    while replicas < 10_000 {
        for a in &ask.hami {
            let mut fit: Vec<usize> = (0..cards.len())
                .filter(|&i| room[i].1 > 0 && a.of_card(cards[i].mem_mib).is_some_and(|m| m > 0 && room[i].0 >= m))
                .collect();
            if (fit.len() as u64) < a.count {
                return Some(replicas);
            }
            fit.sort_by_key(|&i| std::cmp::Reverse(room[i].0));
            for &i in fit.iter().take(usize::try_from(a.count).unwrap_or(usize::MAX)) {
                room[i].0 -= a.of_card(cards[i].mem_mib).unwrap_or(0);
                room[i].1 -= 1;
            }
        }
        replicas += 1;
    }
    Some(replicas)
}

/// What to do when no HAMi card has a share free: the card with the most free (or, for a
/// share larger than any card, the largest card).
fn hami_shortage(
    inputs: &Inputs,
    ask: &Ask<'_>,
    use_by: &BTreeMap<String, NodeUse>,
    suggestions: &mut Vec<gpudash_model::i18n::Said>,
) {
    let Some(want) = ask.hami.iter().filter_map(|a| a.mem_mib).max() else { return };
    let empty = NodeUse::default();
    let mut best: Option<(u64, u64, u64, &str)> = None;
    let mut largest: Option<(u64, &str)> = None;
    for n in &inputs.nodes {
        let (Some(cards), Some(name)) = (hami::cards(n), n.metadata.name.as_deref()) else { continue };
        let u = use_by.get(name).unwrap_or(&empty);
        let left = hami::room(&cards, u.hami.iter().cloned());
        for (c, (free, _)) in cards.iter().zip(left).filter(|(c, _)| c.healthy) {
            if best.is_none_or(|b| free > b.0) {
                best = Some((free, c.mem_mib, c.index, name));
            }
            if largest.is_none_or(|l| c.mem_mib > l.0) {
                largest = Some((c.mem_mib, name));
            }
        }
    }
    match (best, largest) {
        (_, Some((max, node))) if want > max => suggestions.push(hami_said::more_than_largest_card(&want, &max, &node)),
        (Some((free, total, i, node)), _) => {
            suggestions.push(hami_said::no_card_has_free(&want, &i, &node, &free, &total));
        }
        _ => {}
    }
}

/// A unified-memory board's room for the pod: after requests, after limits, and as the agent
/// last read the board.
fn headroom(inputs: &Inputs, ask: &Ask<'_>, n: &Node, u: &NodeUse) -> Headroom {
    let board = alloc_milli(n, "memory") / 1000;
    let used_req = u.requested.get("memory").copied().unwrap_or(0) / 1000;
    let new_limit = if ask.unbounded > 0 { board } else { i128::from(ask.mem_limit) };
    Headroom {
        board_bytes: u64::try_from(board.max(0)).unwrap_or(0),
        after_requests_bytes: i64::try_from(board - used_req - ask.mem_req).unwrap_or(i64::MIN),
        after_limits_bytes: i64::try_from(board - i128::from(u.limits) - new_limit).unwrap_or(i64::MIN),
        board_free_bytes: board_free(inputs, n),
    }
}

/// The summary in the scheduler's words: the refusal, `0/N nodes are available: …`, or the
/// nodes that can run it and how many replicas they hold.
fn summary(
    refusal: Option<String>,
    nodes: &[NodeFit],
    histogram: &BTreeMap<String, u32>,
    placeable: u32,
    replicas: u32,
) -> String {
    let total = nodes.len();
    let available: Vec<&str> = nodes.iter().filter(|n| n.fits).map(|n| n.node.as_str()).collect();
    if let Some(p) = refusal {
        p
    } else if available.is_empty() {
        let mut items: Vec<String> = histogram.iter().map(|(r, c)| format!("{c} {r}")).collect();
        items.sort();
        format!("0/{total} nodes are available: {}.", items.join(", "))
    } else {
        format!(
            "{}/{total} nodes can run it ({}); {placeable} of {replicas} replica(s) can be placed.",
            available.len(),
            available.join(", ")
        )
    }
}
