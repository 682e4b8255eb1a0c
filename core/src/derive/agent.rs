//! What a node's gpudash-agent adds to its view: the kubelet's device map (which pod holds
//! which replica of which physical GPU: exact placement), each GPU's measured use (dcgm-exporter
//! on discrete GPUs, tegrastats' GR3D on Jetson), the board's RAM in use, and whether the agent
//! is stale. Pure: the report and the clock in, fields of the view out.

use std::time::Duration;

use gpudash_model::model::{AgentView, DeviceView, GpuResource, Holder, NodeView, PodRef, Sharing, Slot, SlotState};

use crate::agent::{split_replica, AgentSeen, Allocation, GpuUse};

/// How long an agent may be silent before it is shown stale, when not configured.
pub const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(15);

/// Whether the agent's last good report is older than `after` (or there never was one).
pub fn is_stale(seen: &AgentSeen, now: jiff::Timestamp, after: Duration) -> bool {
    match seen.last_ok {
        Some(t) => now.duration_since(t).unsigned_abs() > after,
        None => true,
    }
}

/// Adds what the agent said to the node's view; `uids` names the pods on the node by UID
/// (namespace, name), for GPU memory read by process.
pub fn enrich(v: &mut NodeView, seen: &AgentSeen, stale: bool, uids: &[(&str, &str, &str)]) {
    v.agent = Some(AgentView {
        seen_at: seen.last_ok.map(|t| super::ts(&t)),
        stale,
        error: seen.error.clone(),
        gpu_busy_percent: None,
    });
    let Some(report) = &seen.report else { return };
    let tegra = report.tegrastats.as_ref().and_then(|t| t.value.as_ref());
    if let Some(t) = tegra {
        v.memory.board_used_bytes = Some(t.ram_used_bytes);
        v.memory.board_used_permille = Some(super::memory::permille(t.ram_used_bytes, v.memory.board_bytes));
        v.memory.board_free_bytes = Some(t.ram_free_bytes());
    }
    if let Some(g) = report.gpu_memory.as_ref().and_then(|g| g.value.as_ref()) {
        gpu_memory(v, g, tegra, uids);
    }
    let dcgm: &[GpuUse] = report.dcgm.as_ref().and_then(|d| d.value.as_deref()).unwrap_or_default();
    for g in v.gpu_resources.iter_mut().filter(|g| matches!(g.sharing, Sharing::Dra | Sharing::Vgpu)) {
        measure_by_uuid(g, dcgm, stale);
    }
    // GR3D where tegrastats prints it, else the GPU's devfreq load (Jetson Thor).
    let devfreq = report.devfreq_busy.as_ref().and_then(|d| d.value).filter(|b| b.is_finite());
    let tegra_busy = tegra
        .and_then(|t| t.gpu_busy_percent)
        .map(u32::from)
        .or_else(|| devfreq.map(|b| b.clamp(0.0, 100.0).round() as u32));
    // A board whose GPU no resource advertises (no device plugin): its load has no device to
    // sit on, so the agent's view carries it.
    if let Some(a) = v.agent.as_mut().filter(|_| v.gpu_resources.is_empty()) {
        a.gpu_busy_percent = tegra_busy;
    }
    let Some(kubelet) = report.kubelet.as_ref().and_then(|k| k.value.as_ref()) else { return };
    // DRA claims and HAMi's annotations already place every unit on its device.
    for g in v.gpu_resources.iter_mut().filter(|g| !matches!(g.sharing, Sharing::Dra | Sharing::Vgpu)) {
        place(g, kubelet, dcgm, tegra_busy);
        if stale {
            // What a silent agent said last is shown, and says so.
            for l in g.rows.iter_mut().filter(|l| l.en.starts_with("GPU ") || l.en.starts_with("MIG ")) {
                l.push(&stale_mark());
            }
        }
    }
}

/// What a row measured by a silent agent adds: it shows the agent's last word, and says so.
fn stale_mark() -> gpudash_model::i18n::Said {
    gpudash_model::say!(" · stale", " · 更新停止")
}

/// A GPU's busy % as dcgm-exporter read it, whole and within 0–100.
fn busy_percent(u: &GpuUse) -> Option<u32> {
    u.busy_percent.map(|b| b.clamp(0.0, 100.0).round() as u32)
}

/// What a GPU's row adds for its measured use: ` · 97% busy · 12.0 GiB used`.
fn reading(busy: Option<u32>, used: Option<u64>) -> Option<gpudash_model::i18n::Said> {
    match (busy, used.map(crate::quantity::Bytes)) {
        (Some(b), Some(m)) => Some(gpudash_model::say!(" · {b}% busy · {m} used", " · 使用率 {b}% · {m} 使用")),
        (Some(b), None) => Some(gpudash_model::say!(" · {b}% busy", " · 使用率 {b}%")),
        (None, Some(m)) => Some(gpudash_model::say!(" · {m} used", " · {m} 使用")),
        (None, None) => None,
    }
}

/// Devices placed without the kubelet's word — a DRA driver's, HAMi's cards — as dcgm-exporter
/// measures them: each whole GPU's busy % and memory used, found by the UUID the driver or
/// HAMi publishes, and on its row. (A MIG-enabled GPU reports no utilisation to the exporter:
/// its slices stay unmeasured.)
fn measure_by_uuid(g: &mut GpuResource, dcgm: &[GpuUse], stale: bool) {
    let GpuResource { devices, rows, .. } = g;
    let mut row = 0;
    for d in devices.iter_mut() {
        let top = d.parent.is_none();
        let use_ = d.uuid.as_deref().and_then(|u| dcgm.iter().find(|x| x.uuid.as_deref() == Some(u)));
        if let Some(u) = use_ {
            d.busy_percent = busy_percent(u);
            d.memory_used_bytes = u.memory_used_bytes;
            if let (true, Some(add), Some(label)) =
                (top, reading(d.busy_percent, d.memory_used_bytes), rows.get_mut(row))
            {
                label.push(&add);
                if stale {
                    label.push(&stale_mark());
                }
            }
        }
        row += usize::from(top);
    }
}

/// Each pod's GPU memory (a pod the table does not list holds none: the table lists every
/// process with an nvmap client), and the board's RAM split by who holds it.
fn gpu_memory(
    v: &mut NodeView,
    g: &gpudash_agent::gpumem::GpuMemory,
    tegra: Option<&gpudash_agent::tegrastats::Sample>,
    uids: &[(&str, &str, &str)],
) {
    let gpu_pods = g.pods.iter().map(|p| p.bytes).fold(0u64, u64::saturating_add);
    for row in &mut v.pods {
        let uid = uids.iter().find(|(_, ns, n)| *ns == row.namespace && *n == row.name).map(|(u, _, _)| *u);
        let held = uid.and_then(|u| g.pods.iter().find(|p| p.uid == u)).map_or(0, |p| p.bytes);
        row.gpu_memory_bytes = Some(held);
    }
    let Some(t) = tegra else { return };
    let total = t.ram_total_bytes;
    let known: Vec<u64> = v.pods.iter().filter_map(|p| p.used_bytes).collect();
    let other_pods = (!known.is_empty()).then(|| known.iter().sum::<u64>());
    // What tegrastats counts in use covers the pods' GPU memory, their own memory and the
    // rest. The readings are taken at different moments (metrics every 15 s or so): where the
    // parts add up to more than tegrastats' use, the parts are taken as the use (free is never
    // overstated), and where they exceed the board, cut to fit it.
    let gpu_pods = gpu_pods.min(total);
    let other = other_pods.map(|o| o.min(total - gpu_pods));
    let used = t.ram_used_bytes.max(gpu_pods + other.unwrap_or(0)).min(total);
    let system = used - gpu_pods - other.unwrap_or(0);
    let free = total - used;
    let pm = |b: u64| super::memory::permille(b, total);
    v.memory.board_free_bytes = Some(free);
    v.memory.split = Some(gpudash_model::model::BoardSplit {
        total_bytes: total,
        gpu_pods_bytes: gpu_pods,
        other_pods_bytes: other,
        system_bytes: system,
        gpu_outside_bytes: g.outside_bytes.min(system),
        free_bytes: free,
        nvmap_used_bytes: g.nvmap_used_bytes,
        permille: [pm(gpu_pods), pm(other.unwrap_or(0)), pm(system), pm(free)],
    });
}

/// One physical device of a resource and the replica IDs under it.
struct Physical<'a> {
    id: &'a str,
    replicas: Vec<Option<u32>>,
}

/// Lays a device-plugin resource out as the kubelet handed it: one row per physical GPU, each
/// replica slot held by the pod the kubelet gave it to.
fn place(g: &mut GpuResource, kubelet: &Allocation, dcgm: &[GpuUse], tegra_busy: Option<u32>) {
    let Some(alloc) = kubelet.allocatable.iter().find(|d| d.resource == g.resource) else { return };
    let held = held_ids(kubelet, &g.resource);
    let mut phys = physical(&alloc.ids, &held);
    let mut rows: Vec<Vec<Slot>> = Vec::new();
    let mut labels: Vec<gpudash_model::i18n::Said> = Vec::new();
    let mut devices = Vec::new();
    let mut placed = vec![0u64; g.holders.len()];
    for (i, p) in phys.iter_mut().enumerate() {
        p.replicas.sort();
        let (row, holders) = device_row(g, p, &held, &mut placed);
        // A MIG device is a slice of a GPU, not a GPU: its row says so.
        let unit = if p.id.starts_with("MIG-") { "MIG" } else { "GPU" };
        let use_ = dcgm.iter().find(|u| u.uuid.as_deref() == Some(p.id));
        let busy = use_.and_then(busy_percent).or_else(|| {
            // The Jetson's one integrated GPU is what GR3D measures.
            p.id.starts_with("tegra").then_some(tegra_busy).flatten()
        });
        let used = use_.and_then(|u| u.memory_used_bytes);
        let mut label: gpudash_model::i18n::Said = format!("{unit} {i}").into();
        if let Some(r) = reading(busy, used) {
            label.push(&r);
        }
        labels.push(label);
        rows.push(row);
        let uuid = (p.id.starts_with("GPU-") || p.id.starts_with("MIG-")).then(|| p.id.to_string());
        devices.push(DeviceView {
            name: p.id.to_string(),
            type_: Some(if p.id.starts_with("MIG-") { "mig" } else { "gpu" }.to_string()),
            product: g.product.clone(),
            uuid,
            memory_bytes: None,
            parent: None,
            shared: p.replicas.len() > 1,
            claims: Vec::new(),
            holders,
            busy_percent: busy,
            memory_used_bytes: used,
        });
    }
    unreported_rows(g, &placed, &phys, &mut rows, &mut labels);
    g.physical_gpus = Some(phys.len() as u64);
    g.placement_known = true;
    g.slots = rows;
    g.rows = labels;
    g.devices = devices;
}

/// Each pod the kubelet handed IDs of `resource`: (namespace, name, ID).
fn held_ids<'a>(kubelet: &'a Allocation, resource: &str) -> Vec<(&'a str, &'a str, &'a str)> {
    kubelet
        .pods
        .iter()
        .flat_map(|p| {
            p.devices
                .iter()
                .filter(move |d| d.resource == resource)
                .flat_map(move |d| d.ids.iter().map(move |id| (p.namespace.as_str(), p.name.as_str(), id.as_str())))
        })
        .collect()
}

/// Physical devices in the kubelet's order; IDs a pod holds that are no longer allocatable (a
/// GPU taken out of service under it) are kept with their device.
fn physical<'a>(allocatable: &'a [String], held: &[(&'a str, &'a str, &'a str)]) -> Vec<Physical<'a>> {
    let mut phys: Vec<Physical<'_>> = Vec::new();
    for id in allocatable.iter().map(String::as_str).chain(held.iter().map(|h| h.2)) {
        let (dev, rep) = split_replica(id);
        match phys.iter_mut().find(|p| p.id == dev) {
            Some(p) if !p.replicas.contains(&rep) => p.replicas.push(rep),
            Some(_) => {}
            None => phys.push(Physical { id: dev, replicas: vec![rep] }),
        }
    }
    phys
}

/// One physical device's replica slots, each held by the pod the kubelet gave it to (counted
/// in `placed` by holder), and the pods on it with their replicas.
fn device_row(
    g: &GpuResource,
    p: &Physical<'_>,
    held: &[(&str, &str, &str)],
    placed: &mut [u64],
) -> (Vec<Slot>, Vec<PodRef>) {
    let holder_of = |ns: &str, name: &str| g.holders.iter().position(|h| h.namespace == ns && h.name == name);
    let mut row = Vec::new();
    let mut holders: Vec<PodRef> = Vec::new();
    for rep in &p.replicas {
        let id_holder = held.iter().find(|h| split_replica(h.2) == (p.id, *rep));
        let slot = match id_holder {
            Some((ns, name, _)) => {
                match holders.iter_mut().find(|r| r.namespace == *ns && r.name == *name) {
                    Some(r) => r.replicas.extend(*rep),
                    None => holders.push(PodRef {
                        namespace: (*ns).to_string(),
                        name: (*name).to_string(),
                        replicas: rep.iter().copied().collect(),
                    }),
                }
                match holder_of(ns, name) {
                    Some(h) => {
                        placed[h] += 1;
                        let state = if g.holders[h].terminating { SlotState::Terminating } else { SlotState::Held };
                        Slot { state, holder: u32::try_from(h).ok(), label: None }
                    }
                    // The kubelet still lists a pod the API no longer has (being removed).
                    None => {
                        Slot { state: SlotState::Terminating, holder: None, label: Some(format!("{ns}/{name}").into()) }
                    }
                }
            }
            None => Slot { state: SlotState::Free, holder: None, label: None },
        };
        row.push(slot);
    }
    (row, holders)
}

/// The rows after the devices: units the API says a pod holds that the kubelet has not
/// reported yet (it was just bound), and units the node advertises that the kubelet does not
/// offer (the device plugin marked them unhealthy).
fn unreported_rows(
    g: &GpuResource,
    placed: &[u64],
    phys: &[Physical<'_>],
    rows: &mut Vec<Vec<Slot>>,
    labels: &mut Vec<gpudash_model::i18n::Said>,
) {
    let unplaced: Vec<Slot> = g
        .holders
        .iter()
        .enumerate()
        .flat_map(|(h, holder): (usize, &Holder)| {
            let n = holder.count.saturating_sub(placed[h]);
            (0..n).map(move |_| Slot { state: SlotState::Held, holder: u32::try_from(h).ok(), label: None })
        })
        .collect();
    if !unplaced.is_empty() {
        rows.push(unplaced);
        labels.push(gpudash_model::say!("not yet reported by the kubelet", "kubelet の報告待ち"));
    }
    let listed: u64 = phys.iter().map(|p| p.replicas.len() as u64).sum();
    let out = g.capacity.saturating_sub(listed).min(64);
    if out > 0 {
        rows.push((0..out).map(|_| Slot { state: SlotState::Out, holder: None, label: None }).collect());
        labels.push(gpudash_model::say!("out of service", "使用不可"));
    }
}
