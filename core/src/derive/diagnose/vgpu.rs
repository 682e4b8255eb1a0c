//! Shares of one GPU no card can give, where HAMi's annotations say what each card has
//! (`hami.io/node-nvidia-register`) and what each pod was given (`hami.io/vgpu-devices-allocated`):
//! a memory share larger than any card the pod can go to (`gpu-share-exceeds-gpu`: it can never
//! be placed), or larger than any such card has free (`insufficient-gpu-memory`: the largest free
//! share on each node, so the operator sees how far off it is). HAMi's own scheduler refuses
//! these pods with `CardInsufficientMemory` (its `Fit`, `pkg/device/nvidia/device.go`) and an
//! event that says only "no available node, N nodes do not meet" (`pkg/scheduler/scheduler.go`).

use gpudash_model::i18n::Said;
use gpudash_model::model::{Code, Diagnosis, Kind, PendingPod, Severity};

use super::vgpu_said as said;
use super::{diag, Ctx};
use crate::derive::hami::{self, Ask, Card};

/// A card a waiting pod could go to, with what is free on it.
struct Room<'a> {
    node: &'a str,
    card: Card,
    free_mib: u64,
}

/// `gpu-share-exceeds-gpu` and `insufficient-gpu-memory` for the pending pods that ask HAMi for
/// a memory share.
pub(super) fn memory_shares(cx: &Ctx<'_>, pending: &mut [PendingPod], out: &mut Vec<Diagnosis>) {
    // The HAMi nodes and their cards' room, once: the same for every waiting pod.
    let hami: Vec<(&k8s_openapi::api::core::v1::Node, Vec<Room<'_>>)> = cx
        .pairs
        .iter()
        .filter(|(_, v)| v.ready)
        .filter_map(|(n, v)| {
            let cards = hami::cards(n)?;
            let held = cx.index.on(&v.name).map(|np| np.held.as_slice()).unwrap_or_default();
            let left = hami::room(&cards, held.iter().flat_map(|(p, _)| hami::grants(p)));
            let rooms = cards
                .into_iter()
                .zip(left)
                .filter(|(c, _)| c.healthy)
                .map(|(card, (free_mib, _))| Room { node: v.name.as_str(), free_mib, card })
                .collect();
            Some((*n, rooms))
        })
        .collect();
    if hami.is_empty() {
        return;
    }
    for (p, pod) in pending.iter_mut().zip(cx.waiting) {
        let asks = hami::asks(pod);
        if asks.is_empty() {
            continue;
        }
        let aim = crate::derive::pending::aim(pod);
        let rooms: Vec<&[Room<'_>]> = hami
            .iter()
            .filter(|(n, _)| Ctx::could_aim(aim, n) && crate::fit::matches_affinity(pod, n))
            .map(|(_, r)| r.as_slice())
            .collect();
        if rooms.iter().all(|r| r.is_empty()) {
            continue;
        }
        let (code, text) = if let Some(text) = exceeds(&asks, &rooms) {
            (Code::GpuShareExceedsGpu, text)
        } else if let Some(text) = short(&asks, &rooms) {
            (Code::InsufficientGpuMemory, text)
        } else {
            continue;
        };
        out.push(diag(code.clone(), Severity::Critical, Kind::Pod, Some(&p.namespace), &p.name, text));
        if !p.diagnoses.contains(&code) {
            p.diagnoses.push(code);
        }
    }
}

/// What a share larger than every card says: the largest card there is.
fn exceeds(asks: &[Ask], rooms: &[&[Room<'_>]]) -> Option<Said> {
    if let Some(percent) = asks.iter().filter_map(|a| a.percent).find(|p| *p > 100) {
        return Some(said::percent_exceeds_card(&percent));
    }
    let largest = rooms.iter().flat_map(|r| r.iter()).max_by_key(|r| r.card.mem_mib)?;
    let ask = asks.iter().filter_map(|a| a.mem_mib).max()?;
    (ask > largest.card.mem_mib).then(|| {
        let product = largest.card.product.strip_prefix("NVIDIA-").unwrap_or(&largest.card.product);
        said::share_exceeds_card(&ask, &largest.card.mem_mib, &product, &largest.node)
    })
}

/// What a share no node has room for says: the largest free share of each node. A node has
/// room when, for every container, enough of its cards each have that container's share free
/// (HAMi gives each vGPU its own card; the containers are counted apart, as a first look).
fn short(asks: &[Ask], rooms: &[&[Room<'_>]]) -> Option<Said> {
    let fits = |node: &[Room<'_>]| {
        asks.iter().all(|a| {
            let n = node.iter().filter(|r| a.of_card(r.card.mem_mib).is_some_and(|m| r.free_mib >= m)).count();
            n as u64 >= a.count
        })
    };
    if rooms.iter().any(|r| fits(r)) {
        return None;
    }
    let widest = asks.iter().max_by_key(|a| a.mem_mib.or(a.percent))?;
    let ask = widest.mem_mib.map_or_else(|| format!("{} %", widest.percent.unwrap_or(0)), |m| format!("{m} MiB"));
    let mut best: Vec<&Room<'_>> = rooms.iter().filter_map(|r| r.iter().max_by_key(|r| r.free_mib)).collect();
    best.sort_by(|a, b| b.free_mib.cmp(&a.free_mib).then_with(|| a.node.cmp(b.node)));
    let each: Vec<Said> = best
        .iter()
        .take(5)
        .map(|r| said::node_best_card(&r.node, &r.card.index, &r.free_mib, &r.card.mem_mib))
        .collect();
    let count: u64 = asks.iter().map(|a| a.count).sum();
    Some(said::no_card_has_free(&count, &ask, &Said::join(&each, "; ", "、")))
}
