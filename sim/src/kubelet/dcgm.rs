//! dcgm-exporter as a simulated discrete-GPU server serves it (`/_sim/dcgm/{node}`): one
//! line per metric and GPU, labelled as the exporter labels them (`gpu`, `UUID`, `device`,
//! `modelName`, `Hostname`), for the node's whole GPUs as its device plugin advertises them or
//! a DRA driver publishes them.
//! Utilisation and framebuffer move with time — busy and idle in turns, each GPU in its own
//! phase — so that the demo's agents measure work. Written here in the exporter's format,
//! apart from the agent's parser.

use std::fmt::Write as _;

use serde_json::Value;

use super::devices;

/// Utilisation of GPU `i` at `t` seconds: about 40 s busy (70–97 %), 20 s idle (0–4 %).
fn util(i: usize, t: u64) -> u64 {
    let phase = (t + 23 * i as u64) % 60;
    let jitter = (t.wrapping_mul(2_654_435_761).wrapping_add(i as u64 * 97)) % 28;
    if phase < 40 {
        70 + jitter
    } else {
        jitter % 5
    }
}

/// MiB in a DRA device's `memory` capacity (`80Gi`, `9856Mi`).
fn mib(q: &str) -> Option<u64> {
    q.strip_suffix("Gi")
        .and_then(|n| n.parse::<u64>().ok())
        .map(|g| g * 1024)
        .or_else(|| q.strip_suffix("Mi")?.parse().ok())
}

/// Whether a DRA driver's device is in use: a claim has it allocated and a pod reserved.
fn claimed(claims: &[Value], node: &str, device: &str) -> bool {
    claims.iter().any(|c| {
        let reserved = c.pointer("/status/reservedFor").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
        let results = c.pointer("/status/allocation/devices/results").and_then(Value::as_array);
        reserved
            && results
                .into_iter()
                .flatten()
                .any(|r| r["device"].as_str() == Some(device) && r["pool"].as_str().is_none_or(|p| p == node))
    })
}

/// The exporter's page for `node` at `t` seconds, or `None` for a node without whole GPUs: those
/// its device plugin advertises (each at work in turns), and the whole GPUs a DRA driver
/// publishes for it in `slices` — at work in turns while a pod holds them through `claims`, else
/// idle (a MIG-enabled GPU reports no utilisation to the exporter, so its slices are not listed).
pub fn page(node: &Value, slices: &[Value], claims: &[Value], t: u64) -> Option<String> {
    let name = node["metadata"]["name"].as_str().unwrap_or("");
    let mut model =
        node.pointer("/metadata/labels/nvidia.com~1gpu.product").and_then(Value::as_str).map(str::to_string);
    let mut total_mib: Option<u64> =
        node.pointer("/metadata/labels/nvidia.com~1gpu.memory").and_then(Value::as_str).and_then(|m| m.parse().ok());
    let mut gpus: Vec<String> = Vec::new();
    // DRA GPUs no pod uses: idle.
    let mut unused: Vec<String> = Vec::new();
    for a in devices::advertised(node) {
        for id in a.ids {
            let base = id.split("::").next().unwrap_or(&id).to_string();
            if base.starts_with("GPU-") && !gpus.contains(&base) {
                gpus.push(base);
            }
        }
    }
    for s in slices.iter().filter(|s| s.pointer("/spec/nodeName").and_then(Value::as_str) == Some(name)) {
        for d in s.pointer("/spec/devices").and_then(Value::as_array).into_iter().flatten() {
            let attr = |k: &str| d.pointer(&format!("/attributes/{k}/string")).and_then(Value::as_str);
            let Some(uuid) = attr("uuid").filter(|_| attr("type") == Some("gpu")) else { continue };
            if !gpus.iter().any(|g| g == uuid) {
                gpus.push(uuid.to_string());
                if !claimed(claims, name, d["name"].as_str().unwrap_or("")) {
                    unused.push(uuid.to_string());
                }
            }
            model = model.or_else(|| attr("productName").map(str::to_string));
            total_mib = total_mib.or_else(|| d.pointer("/capacity/memory/value").and_then(Value::as_str).and_then(mib));
        }
    }
    if gpus.is_empty() {
        return None;
    }
    let total_mib = total_mib.unwrap_or(40_960);
    // GPU feature discovery names a time-sliced GPU `…-SHARED`; the exporter reads NVML's name.
    let model = model.unwrap_or_else(|| "NVIDIA GPU".into());
    let model = model.trim_end_matches("-SHARED").replace('-', " ");
    let mut out =
        String::from("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
    let labels = |i: usize, uuid: &str| {
        format!(
            r#"gpu="{i}",UUID="{uuid}",pci_bus_id="00000000:{:02X}:00.0",device="nvidia{i}",modelName="{model}",Hostname="{name}""#,
            0x17 + i
        )
    };
    let busy = |i: usize| if unused.contains(&gpus[i]) { util(i, t) % 3 } else { util(i, t) };
    for (i, g) in gpus.iter().enumerate() {
        let _ = writeln!(out, "DCGM_FI_DEV_GPU_UTIL{{{}}} {}", labels(i, g), busy(i));
    }
    out.push_str("# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n");
    let used = |i: usize| {
        if unused.contains(&gpus[i]) {
            total_mib / 100
        } else {
            total_mib * (20 + util(i, t) * 3 / 4) / 100
        }
    };
    for (i, g) in gpus.iter().enumerate() {
        let _ = writeln!(out, "DCGM_FI_DEV_FB_USED{{{}}} {}", labels(i, g), used(i));
    }
    out.push_str("# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).\n# TYPE DCGM_FI_DEV_FB_FREE gauge\n");
    for (i, g) in gpus.iter().enumerate() {
        let _ = writeln!(out, "DCGM_FI_DEV_FB_FREE{{{}}} {}", labels(i, g), total_mib.saturating_sub(used(i)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_page_names_each_whole_gpu_and_its_use_moves() {
        let node = serde_json::json!({
            "metadata": {"name": "gpu-x86-01", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB", "nvidia.com/gpu.memory": "40960"}},
            "status": {"allocatable": {"nvidia.com/gpu": "2"}, "capacity": {"nvidia.com/gpu": "2"}}
        });
        let p = page(&node, &[], &[], 10).unwrap_or_default();
        assert_eq!(p.matches("DCGM_FI_DEV_GPU_UTIL{").count(), 2, "{p}");
        assert!(p.contains(r#"modelName="NVIDIA A100 PCIE 40GB""#) && p.contains(r#"UUID="GPU-"#), "{p}");
        let busy: Vec<u64> = (0..60).map(|t| util(0, t)).collect();
        assert!(busy.iter().any(|b| *b >= 70) && busy.iter().any(|b| *b < 5), "busy and idle in turns");
        assert!(page(&serde_json::json!({"metadata": {"name": "cpu-only"}}), &[], &[], 0).is_none());
        // A DRA driver's whole GPUs (not a MIG-enabled GPU's slices), named as it publishes them.
        let dra = serde_json::json!({"metadata": {"name": "gpu-dra-01"}, "status": {}});
        let slice = serde_json::json!({"spec": {"nodeName": "gpu-dra-01", "devices": [
            {"name": "gpu-0",
             "attributes": {"type": {"string": "gpu"}, "uuid": {"string": "GPU-aa"}, "productName": {"string": "NVIDIA A100 80GB PCIe"}},
             "capacity": {"memory": {"value": "80Gi"}}},
            {"name": "gpu-2-mig-19-0-1", "attributes": {"type": {"string": "mig"}, "uuid": {"string": "MIG-bb"}}}]}});
        let held = serde_json::json!({"status": {"reservedFor": [{"resource": "pods", "name": "llm-0"}],
            "allocation": {"devices": {"results": [{"device": "gpu-0", "pool": "gpu-dra-01", "driver": "gpu.nvidia.com"}]}}}});
        let p = page(&dra, std::slice::from_ref(&slice), std::slice::from_ref(&held), 10).unwrap_or_default();
        assert_eq!(p.matches("DCGM_FI_DEV_GPU_UTIL{").count(), 1, "{p}");
        // At work while a pod holds it (10 s in is the busy phase); idle with no pod on its claim.
        let util = |p: &str| {
            p.lines()
                .find(|l| l.starts_with("DCGM_FI_DEV_GPU_UTIL{"))
                .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        };
        assert!(util(&p).is_some_and(|u| u >= 70), "{p}");
        let warm = serde_json::json!({"status": {"allocation": {"devices": {"results": [{"device": "gpu-0", "pool": "gpu-dra-01"}]}}}});
        for t in 0..60 {
            let idle = page(&dra, std::slice::from_ref(&slice), std::slice::from_ref(&warm), t).unwrap_or_default();
            assert!(util(&idle).is_some_and(|u| u < 5), "{idle}");
        }
        let p = page(&dra, &[slice], &[held], 10).unwrap_or_default();
        assert!(p.contains(r#"UUID="GPU-aa""#) && p.contains(r#"modelName="NVIDIA A100 80GB PCIe""#), "{p}");
        assert!(p.contains("DCGM_FI_DEV_FB_FREE") && !p.contains("MIG-bb"), "{p}");
    }
}
