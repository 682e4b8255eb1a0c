//! HAMi vGPU (Project-HAMi, the heterogeneous AI computing virtualization middleware): pods ask
//! for `nvidia.com/gpu` vGPUs with `nvidia.com/gpumem` (MiB) and `nvidia.com/gpucores` (% of the
//! card) beside; HAMi's scheduler extender picks the card and writes its decision into the pod's
//! annotations, and HAMi's device plugin writes every card of the node into the node's. Both are
//! read here, so the map of who holds which share of which card is exact without any agent.
//!
//! The formats, as HAMi's protocol document (`docs/develop/protocol.md`) and its code
//! (`pkg/device/devices.go`: `DecodeNodeDevices`, `UnMarshalNodeDevices`,
//! `EncodeContainerDevices`) write them:
//! - node `hami.io/node-nvidia-register`: a JSON array of `{"id", "count", "devmem", "devcore",
//!   "type", "numa", "health", "index", "mode"}` (v2.5 and later), or the older
//!   `UUID,count,devmem,devcore,type,numa,health[,index,mode]:` list, one card per `:`;
//! - pod `hami.io/vgpu-devices-allocated`: per container (`;`-terminated) its cards
//!   (`:`-terminated), each `UUID,NVIDIA,memory MiB,cores %`.

use gpudash_model::model::{DeviceView, GpuResource, PodRef, Sharing, Slot, SlotState};
use k8s_openapi::api::core::v1::Node;

use super::node_view::Held;
use crate::pod::Pod;

/// The node annotation HAMi's device plugin registers the node's cards in.
pub const NODE_REGISTER: &str = "hami.io/node-nvidia-register";
/// The pod annotation HAMi's scheduler writes the cards it gave the pod in.
pub const POD_ALLOCATED: &str = "hami.io/vgpu-devices-allocated";
/// HAMi's per-vGPU resources beside `nvidia.com/gpu`: amounts of one card, not GPUs.
pub const COMPANIONS: [&str; 4] =
    ["nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores", "nvidia.com/priority"];

/// Whether a resource is one of HAMi's per-vGPU amounts ([`COMPANIONS`]).
pub fn is_companion(resource: &str) -> bool {
    COMPANIONS.contains(&resource)
}

/// One card of a node, as HAMi's device plugin registered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// `GPU-…`.
    pub uuid: String,
    /// How many vGPUs it is split into (HAMi's `deviceSplitCount`).
    pub split: u64,
    /// Its memory, MiB.
    pub mem_mib: u64,
    /// Its compute, % (100).
    pub cores: u64,
    /// `NVIDIA-NVIDIA A10`.
    pub product: String,
    /// Whether the plugin found it healthy.
    pub healthy: bool,
    /// Its index on the node.
    pub index: u64,
}

/// The cards HAMi registered for a node; none when the node has no HAMi annotation or it
/// cannot be read (then the node is drawn from its labels and counts, as before).
pub fn cards(node: &Node) -> Option<Vec<Card>> {
    let text = node.metadata.annotations.as_ref()?.get(NODE_REGISTER)?.trim();
    let mut cards = if text.starts_with('[') { from_json(text)? } else { from_list(text)? };
    cards.sort_by(|a, b| (a.index, &a.uuid).cmp(&(b.index, &b.uuid)));
    (!cards.is_empty()).then_some(cards)
}

fn from_json(text: &str) -> Option<Vec<Card>> {
    let v: Vec<serde_json::Value> = serde_json::from_str(text).ok()?;
    let num = |d: &serde_json::Value, k: &str| d.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    v.iter()
        .map(|d| {
            let uuid = d.get("id")?.as_str()?.to_string();
            Some(Card {
                uuid,
                split: num(d, "count"),
                mem_mib: num(d, "devmem"),
                cores: num(d, "devcore"),
                product: d.get("type").and_then(|t| t.as_str()).unwrap_or("").to_string(),
                // Go's encoder leaves `false` out (omitempty): absent is unhealthy.
                healthy: d.get("health").and_then(serde_json::Value::as_bool).unwrap_or(false),
                index: num(d, "index"),
            })
        })
        .collect()
}

fn from_list(text: &str) -> Option<Vec<Card>> {
    let mut out = Vec::new();
    for (i, d) in text.split(':').filter(|d| d.contains(',')).enumerate() {
        let f: Vec<&str> = d.split(',').map(str::trim).collect();
        if f.len() != 7 && f.len() != 9 {
            return None;
        }
        let n = |s: &str| s.parse::<u64>().ok();
        out.push(Card {
            uuid: f[0].to_string(),
            split: n(f[1])?,
            mem_mib: n(f[2])?,
            cores: n(f[3])?,
            product: f[4].to_string(),
            healthy: f[6] == "true",
            index: f.get(7).and_then(|s| n(s)).unwrap_or(i as u64),
        });
    }
    Some(out)
}

/// One card HAMi gave a pod's container: the card, its memory (MiB) and cores (%).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The card's UUID.
    pub uuid: String,
    /// Memory, MiB.
    pub mem_mib: u64,
    /// Cores, % of the card (0: not limited).
    pub cores: u64,
}

/// What HAMi's scheduler gave a pod, every container's cards in order; empty when it has not
/// written it (yet) or it cannot be read.
pub fn grants(pod: &Pod) -> Vec<Grant> {
    let Some(text) = pod.metadata.annotations.as_ref().and_then(|a| a.get(POD_ALLOCATED)) else { return Vec::new() };
    text.split(';')
        .flat_map(|c| c.split(':'))
        .filter_map(|d| {
            let f: Vec<&str> = d.split(',').map(str::trim).collect();
            let [uuid, _, mem, cores] = f.as_slice() else { return None };
            Some(Grant { uuid: uuid.to_string(), mem_mib: mem.parse().ok()?, cores: cores.parse().ok()? })
        })
        .collect()
}

/// What one container of a pod asks HAMi for: `count` vGPUs, each on its own card, each with
/// `mem_mib` of that card's memory (`nvidia.com/gpumem`) or `percent` of it
/// (`nvidia.com/gpumem-percentage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    /// vGPUs (`nvidia.com/gpu`).
    pub count: u64,
    /// MiB of one card each.
    pub mem_mib: Option<u64>,
    /// % of one card's memory each (where no MiB is given).
    pub percent: Option<u64>,
}

impl Ask {
    /// The MiB it takes of a card of `card_mib` (HAMi's `Fit`: the MiB asked, else the
    /// percentage of the card).
    pub fn of_card(&self, card_mib: u64) -> Option<u64> {
        self.mem_mib.or_else(|| self.percent.map(|p| card_mib.saturating_mul(p) / 100))
    }
}

/// Every container's memory ask of `pod` that names one (limits, else requests, as HAMi's
/// webhook reads them); none for a pod that asks HAMi for no memory.
pub fn asks(pod: &Pod) -> Vec<Ask> {
    let Some(spec) = &pod.spec else { return Vec::new() };
    spec.containers
        .iter()
        .filter_map(|c| {
            let r = c.resources.as_ref()?;
            let amount = |name: &str| {
                let q = r.limits.as_ref().and_then(|l| l.get(name)).or_else(|| r.requests.as_ref()?.get(name))?;
                Some(super::pods::units(super::pods::milli(q)?))
            };
            let count = amount("nvidia.com/gpu").filter(|n| *n > 0)?;
            let (mem_mib, percent) = (amount("nvidia.com/gpumem"), amount("nvidia.com/gpumem-percentage"));
            (mem_mib.is_some() || percent.is_some()).then_some(Ask { count, mem_mib, percent })
        })
        .collect()
}

/// What is left of each card for new vGPUs, as HAMi's scheduler counts it (`getNodesUsage`):
/// its memory (MiB) less the grants on it, and its split less the vGPUs granted; nothing on an
/// unhealthy card. In the order of `cards`.
pub fn room(cards: &[Card], grants: impl IntoIterator<Item = Grant>) -> Vec<(u64, u64)> {
    let mut used = vec![(0u64, 0u64); cards.len()];
    for g in grants {
        if let Some(i) = cards.iter().position(|c| c.uuid == g.uuid) {
            used[i] = (used[i].0.saturating_add(g.mem_mib), used[i].1 + 1);
        }
    }
    cards
        .iter()
        .zip(used)
        .map(
            |(c, (mib, n))| if c.healthy { (c.mem_mib.saturating_sub(mib), c.split.saturating_sub(n)) } else { (0, 0) },
        )
        .collect()
}

/// The share of one card a grant is, in thousandths: its cores where HAMi limits them, else its
/// memory over the card's (the part of the card no one else may take).
fn share_permille(g: &Grant, card: Option<&Card>) -> u32 {
    let permille = if g.cores > 0 {
        g.cores.min(100) * 10
    } else {
        card.filter(|c| c.mem_mib > 0).map_or(0, |c| (g.mem_mib.min(c.mem_mib) * 1000).div_ceil(c.mem_mib))
    };
    u32::try_from(permille).unwrap_or(u32::MAX)
}

/// Lays `nvidia.com/gpu` of a HAMi node out by card: one row per card with each vGPU a pod
/// holds (labelled with its memory and cores) and the vGPUs still free, the row saying how
/// much of the card's memory and compute is free; each holder's share of a GPU; the cards as
/// devices with their pods.
pub fn place(g: &mut GpuResource, cards: &[Card], held: &[Held]) {
    let by_pod: Vec<(usize, Vec<Grant>)> = held
        .iter()
        .filter_map(|(p, _)| {
            let (ns, name) = super::pods::key(p);
            let h = g.holders.iter().position(|h| h.namespace == ns && h.name == name)?;
            Some((h, grants(p)))
        })
        .collect();
    let mut placed = vec![0u64; g.holders.len()];
    let (mut rows, mut labels, mut devices) = (Vec::new(), Vec::new(), Vec::new());
    for card in cards {
        let mut row = Vec::new();
        let mut pods: Vec<PodRef> = Vec::new();
        let (mut mem, mut cores) = (0u64, 0u64);
        for (h, gs) in &by_pod {
            for gr in gs.iter().filter(|gr| gr.uuid == card.uuid) {
                let holder = &g.holders[*h];
                placed[*h] += 1;
                mem += gr.mem_mib;
                cores += gr.cores;
                let state = if holder.terminating { SlotState::Terminating } else { SlotState::Held };
                let (m, c) = (gr.mem_mib, gr.cores);
                let label = gpudash_model::say!("{m} MiB · {c} %", "{m} MiB・{c} %");
                row.push(Slot { state, holder: u32::try_from(*h).ok(), label: Some(label) });
                if !pods.iter().any(|r| r.namespace == holder.namespace && r.name == holder.name) {
                    pods.push(PodRef {
                        namespace: holder.namespace.clone(),
                        name: holder.name.clone(),
                        replicas: Vec::new(),
                    });
                }
            }
        }
        let free = card.split.saturating_sub(row.len() as u64).min(64);
        let state = if card.healthy { SlotState::Free } else { SlotState::Out };
        row.extend((0..free).map(|_| Slot { state, holder: None, label: None }));
        let (mem_free, cores_free) = (card.mem_mib.saturating_sub(mem), card.cores.saturating_sub(cores));
        let product = card.product.strip_prefix("NVIDIA-").unwrap_or(&card.product);
        let (i, mt) = (card.index, card.mem_mib);
        // The product is the resource's caption; the row says what is left of the card.
        labels.push(gpudash_model::say!(
            "GPU {i} · free {mem_free}/{mt} MiB, {cores_free} % cores",
            "GPU {i}・空き {mem_free}/{mt} MiB、コア {cores_free} %"
        ));
        rows.push(row);
        devices.push(DeviceView {
            name: card.uuid.clone(),
            type_: Some("gpu".into()),
            product: Some(product.to_string()),
            uuid: Some(card.uuid.clone()),
            memory_bytes: Some(card.mem_mib * 1024 * 1024),
            parent: None,
            shared: true,
            claims: Vec::new(),
            holders: pods,
            busy_percent: None,
            memory_used_bytes: None,
        });
    }
    // Pods bound a moment ago, before HAMi's annotation reached gpudash.
    let unplaced: Vec<Slot> = g
        .holders
        .iter()
        .enumerate()
        .flat_map(|(h, holder)| {
            let n = holder.count.saturating_sub(placed[h]).min(64);
            (0..n).map(move |_| Slot { state: SlotState::Held, holder: u32::try_from(h).ok(), label: None })
        })
        .collect();
    if !unplaced.is_empty() {
        rows.push(unplaced);
        labels.push(gpudash_model::say!("card not yet written by HAMi", "カードは HAMi の記録待ち"));
    }
    for (h, gs) in &by_pod {
        let share: u32 = gs.iter().map(|gr| share_permille(gr, cards.iter().find(|c| c.uuid == gr.uuid))).sum();
        if !gs.is_empty() {
            g.holders[*h].share_permille = Some(share);
        }
    }
    g.sharing = Sharing::Vgpu;
    if g.product.is_none() {
        // No GPU feature discovery beside HAMi: the cards say what they are.
        g.product = cards.first().map(|c| c.product.strip_prefix("NVIDIA-").unwrap_or(&c.product).to_string());
    }
    g.physical_gpus = Some(cards.len() as u64);
    g.replicas_per_gpu = cards.iter().map(|c| c.split).max().unwrap_or(1).max(1);
    g.placement_known = true;
    g.slots = rows;
    g.rows = labels;
    g.devices = devices;
}

/// The cards of `node` with `held`'s pods on them, when it is a HAMi node.
pub(super) fn apply(node: &Node, resources: &mut [GpuResource], held: &[Held]) {
    let Some(cards) = cards(node) else { return };
    if let Some(g) = resources.iter_mut().find(|g| g.resource == "nvidia.com/gpu") {
        place(g, &cards, held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(register: &str) -> Node {
        let mut n = Node::default();
        n.metadata.annotations = Some([(NODE_REGISTER.to_string(), register.to_string())].into());
        n
    }

    /// The older seven-field form (HAMi before v2.4, still accepted by its scheduler; the
    /// protocol document's example as first written): index from the order, mode hami-core.
    #[test]
    fn the_seven_and_nine_field_forms_and_the_json_array_are_read() {
        let seven = "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:\
            GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,false:";
        let c = cards(&node(seven)).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!((c[1].index, c[1].split, c[1].mem_mib, c[1].healthy), (1, 10, 32768, false));
        let json = r#"[{"id":"GPU-a","count":4,"devmem":16384,"devcore":100,"type":"NVIDIA-Tesla T4","health":true}]"#;
        assert_eq!(cards(&node(json)).unwrap()[0].index, 0, "Go's omitempty drops index 0");
        for bad in ["", "garbage", "GPU-a,10,x,100,T,0,true:", "[{]", "[]", "GPU-a,1,2:"] {
            assert_eq!(cards(&node(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn a_pods_grants_are_read_per_container_and_card() {
        let mut p = Pod::default();
        let text = "GPU-a,NVIDIA,3000,0:;GPU-a,NVIDIA,5000,30:GPU-b,NVIDIA,5000,30:;";
        p.metadata.annotations = Some([(POD_ALLOCATED.to_string(), text.to_string())].into());
        let g = grants(&p);
        assert_eq!(g.len(), 3);
        assert_eq!(g[2], Grant { uuid: "GPU-b".into(), mem_mib: 5000, cores: 30 });
        p.metadata.annotations = Some([(POD_ALLOCATED.to_string(), ";".to_string())].into());
        assert!(grants(&p).is_empty(), "to-allocate emptied: nothing yet");
    }
}
