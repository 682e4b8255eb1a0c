//! dcgm-exporter as a simulated discrete-GPU server serves it (`/_sim/dcgm/{node}`): one
//! line per metric and GPU, labelled as the exporter labels them (`gpu`, `UUID`, `device`,
//! `modelName`, `Hostname`), for the node's whole GPUs as its device plugin advertises them.
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

/// The exporter's page for `node` at `t` seconds, or `None` for a node without whole GPUs.
pub fn page(node: &Value, t: u64) -> Option<String> {
    let name = node["metadata"]["name"].as_str().unwrap_or("");
    let model =
        node.pointer("/metadata/labels/nvidia.com~1gpu.product").and_then(Value::as_str).unwrap_or("NVIDIA GPU");
    let total_mib: u64 = node
        .pointer("/metadata/labels/nvidia.com~1gpu.memory")
        .and_then(Value::as_str)
        .and_then(|m| m.parse().ok())
        .unwrap_or(40_960);
    let mut gpus: Vec<String> = Vec::new();
    for a in devices::advertised(node) {
        for id in a.ids {
            let base = id.split("::").next().unwrap_or(&id).to_string();
            if base.starts_with("GPU-") && !gpus.contains(&base) {
                gpus.push(base);
            }
        }
    }
    if gpus.is_empty() {
        return None;
    }
    // GPU feature discovery names a time-sliced GPU `…-SHARED`; the exporter reads NVML's name.
    let model = model.trim_end_matches("-SHARED").replace('-', " ");
    let mut out =
        String::from("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
    let labels = |i: usize, uuid: &str| {
        format!(
            r#"gpu="{i}",UUID="{uuid}",pci_bus_id="00000000:{:02X}:00.0",device="nvidia{i}",modelName="{model}",Hostname="{name}""#,
            0x17 + i
        )
    };
    for (i, g) in gpus.iter().enumerate() {
        let _ = writeln!(out, "DCGM_FI_DEV_GPU_UTIL{{{}}} {}", labels(i, g), util(i, t));
    }
    out.push_str("# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n");
    let used = |i: usize| total_mib * (20 + util(i, t) * 3 / 4) / 100;
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
        let p = page(&node, 10).unwrap_or_default();
        assert_eq!(p.matches("DCGM_FI_DEV_GPU_UTIL{").count(), 2, "{p}");
        assert!(p.contains(r#"modelName="NVIDIA A100 PCIE 40GB""#) && p.contains(r#"UUID="GPU-"#), "{p}");
        let busy: Vec<u64> = (0..60).map(|t| util(0, t)).collect();
        assert!(busy.iter().any(|b| *b >= 70) && busy.iter().any(|b| *b < 5), "busy and idle in turns");
        assert!(page(&serde_json::json!({"metadata": {"name": "cpu-only"}}), 0).is_none());
    }
}
