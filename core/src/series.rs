//! What of a view is recorded as history (by a site and by the fleet): each series' value at
//! one moment, and how far each must move before a new sample is worth writing.

use std::collections::HashMap;

use gpudash_model::model::ClusterView;

/// (node, metric, resource).
pub type SeriesKey = (String, String, String);

/// The physical GPUs `h` holds of `g`: its own share where the mode gives it one (HAMi vGPU),
/// else its units × [`gpu_share_per_unit`].
pub fn gpu_share_of(g: &gpudash_model::model::GpuResource, h: &gpudash_model::model::Holder) -> f64 {
    match h.share_permille {
        Some(p) => f64::from(p) / 1000.0,
        None => h.count as f64 * gpu_share_per_unit(g),
    }
}

/// The physical GPUs one unit of a resource amounts to: a time-slicing or MPS replica
/// 1/replicas, a MIG slice its compute slices out of the GPU's (7 on A100/H100/H200, 4 on
/// A30), a DRA device or a whole GPU 1.
pub fn gpu_share_per_unit(g: &gpudash_model::model::GpuResource) -> f64 {
    use gpudash_model::model::Sharing;
    match g.sharing {
        // A HAMi vGPU's share is its own (`Holder::share_permille`); this is the even split.
        Sharing::TimeSlicing | Sharing::Mps | Sharing::Vgpu => 1.0 / g.replicas_per_gpu.max(1) as f64,
        Sharing::Mig => {
            // `1g.5gb`: one compute slice.
            let slices = g.profile.as_deref().and_then(|p| p.split('g').next()).and_then(|n| n.parse::<u32>().ok());
            let per_gpu = if g.product.as_deref().is_some_and(|p| p.contains("A30")) { 4.0 } else { 7.0 };
            slices.map_or(1.0, |s| (f64::from(s) / per_gpu).min(1.0))
        }
        Sharing::None | Sharing::Dra => 1.0,
    }
}

/// Values of every series at one moment.
pub fn values(view: &ClusterView) -> Vec<(SeriesKey, f64)> {
    let mut out = Vec::new();
    let k = |n: &str, m: &str, r: &str| (n.to_string(), m.to_string(), r.to_string());
    for n in &view.nodes {
        for g in &n.gpu_resources {
            out.push((k(&n.name, "gpu_capacity", &g.resource), g.capacity as f64));
            out.push((k(&n.name, "gpu_allocatable", &g.resource), g.allocatable as f64));
            out.push((k(&n.name, "gpu_allocated", &g.resource), g.allocated as f64));
            out.push((k(&n.name, "gpu_holders", &g.resource), g.holders.len() as f64));
            out.push((k(&n.name, "gpu_out_of_service", &g.resource), g.out_of_service as f64));
        }
        out.push((k(&n.name, "mem_allocatable", ""), n.memory.allocatable_bytes as f64));
        out.push((k(&n.name, "mem_requests", ""), n.memory.requested_bytes as f64));
        out.push((k(&n.name, "mem_limits", ""), n.memory.limits_bytes as f64));
        if let Some(u) = n.memory.used_bytes {
            out.push((k(&n.name, "mem_used", ""), u as f64));
        }
        // What a node's agent measured, while it is fresh: a silent agent leaves a gap.
        if n.agent.as_ref().is_some_and(|a| !a.stale) {
            for g in &n.gpu_resources {
                for d in g.devices.iter().filter(|d| d.busy_percent.is_some()) {
                    let busy = f64::from(d.busy_percent.unwrap_or(0));
                    out.push((k(&n.name, "gpu_busy", &format!("{}|{}", g.resource, d.name)), busy));
                }
            }
            if let Some(b) = n.memory.board_used_bytes {
                out.push((k(&n.name, "mem_board_used", ""), b as f64));
            }
            // GPU memory per pod (nvmap on Jetson): the pods that hold some, and the GPU
            // holders (whose drop to zero is worth a point).
            let holds_gpu = |ns: &str, name: &str| {
                n.gpu_resources.iter().any(|g| g.holders.iter().any(|h| h.namespace == ns && h.name == name))
            };
            for p in &n.pods {
                if let Some(b) = p.gpu_memory_bytes.filter(|b| *b > 0 || holds_gpu(&p.namespace, &p.name)) {
                    out.push((k(&n.name, "gpu_mem", &format!("{}/{}", p.namespace, p.name)), b as f64));
                }
            }
            if let Some(b) = n.memory.split.as_ref().and_then(|s| s.nvmap_used_bytes) {
                out.push((k(&n.name, "gpu_mem_nvmap", ""), b as f64));
            }
        }
    }
    // Quota use per namespace: `node` is the namespace, `resource` is `QUOTA/KEY`.
    for q in &view.quotas {
        let r = format!("{}/{}", q.name, q.resource);
        out.push((k(&q.namespace, "quota_used", &r), q.used as f64));
        out.push((k(&q.namespace, "quota_hard", &r), q.hard as f64));
    }
    out.push((k("", "pending", ""), view.pending.len() as f64));
    out.push((k("", "pending_gpu", ""), view.pending.iter().filter(|p| p.gpu_request.is_some()).count() as f64));
    out
}

/// Each node's memory deadband (1/256 of its board), for [`band`].
pub fn deadbands(view: &ClusterView) -> HashMap<String, f64> {
    view.nodes.iter().map(|n| (n.name.clone(), n.memory.allocatable_bytes as f64 / 256.0)).collect()
}

/// How far a series must move before a new sample is written (between heartbeats): memory use
/// by 1/256 of the board, GPU busy by two points, everything else by any change.
pub fn band(deadbands: &HashMap<String, f64>, key: &SeriesKey) -> f64 {
    match key.1.as_str() {
        "mem_used" | "mem_board_used" | "gpu_mem" | "gpu_mem_nvmap" => deadbands.get(&key.0).copied().unwrap_or(0.0),
        // Busy moves every second: two points is noise.
        "gpu_busy" => 2.0,
        _ => 0.0,
    }
}
