//! The DRA scenario files (`tests/scenarios/dra/`) through the whole derivation: devices,
//! claims and holders per node, pending claims, and the DRA diagnoses.

use super::tests::{load, scenario_text};
use super::*;
use gpudash_model::model::{NodeView, Severity, Sharing};

fn node<'a>(v: &'a ClusterView, name: &str) -> &'a NodeView {
    v.nodes.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("node {name}"))
}

fn dra(file: &str) -> ClusterView {
    let inputs = load(&scenario_text(&format!("dra/{file}")));
    derive(&inputs, &Options::default(), Source::default(), 1, "2026-12-01T00:00:00Z".parse().unwrap_or_default())
}

fn entry<'a>(v: &'a ClusterView, node_name: &str, resource: &str) -> &'a gpudash_model::model::GpuResource {
    node(v, node_name)
        .gpu_resources
        .iter()
        .find(|g| g.resource == resource)
        .unwrap_or_else(|| panic!("{node_name}: no {resource} in {:#?}", node(v, node_name).gpu_resources))
}

fn codes(v: &ClusterView) -> Vec<(String, String)> {
    v.diagnoses.iter().map(|d| (d.code.to_string(), d.name.clone())).collect()
}

#[test]
fn dra_whole_gpus_mig_partitions_and_a_shared_claim_are_placed_exactly() {
    let v = dra("whole-mig-shared-unreserved.yaml");
    // Two whole A100s; the pool's older generation (gpu-9) does not count.
    let g = entry(&v, "gpu-a100-01", "gpu.nvidia.com");
    assert_eq!((g.sharing, g.capacity, g.allocated, g.placement_known), (Sharing::Dra, 2, 2, true));
    assert_eq!(g.product.as_deref(), Some("NVIDIA A100 80GB PCIe"));
    assert_eq!(g.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["gpu-0", "gpu-1"]);
    assert_eq!(
        g.devices[0].holders,
        [gpudash_model::model::PodRef { namespace: "llm".into(), name: "llm-serve-0".into(), replicas: vec![] }]
    );
    assert_eq!(g.devices[0].uuid.as_deref(), Some("GPU-2f6d1a4e-9b1c-4f0e-8d7a-1c2b3a4d5e01"));
    assert_eq!(g.devices[0].memory_bytes, Some(80 << 30));
    assert!(g.devices[1].holders.is_empty() && g.devices[1].claims[0].name == "warmup-gpu");
    assert_eq!(g.rows, ["GPU 0", "GPU 1"]);
    assert_eq!(g.holders[0].since.as_deref(), Some("2026-11-20T09:00:58Z"));
    assert_eq!(g.slots[0][0].holder, Some(0));
    assert_eq!(g.slots[1][0].state, gpudash_model::model::SlotState::Held);
    assert_eq!(g.slots[1][0].label.as_deref(), Some("claim llm/warmup-gpu · no pod"));
    // MIG devices under their parent GPU: one row, a slot per partition.
    let m = entry(&v, "gpu-a100-mig-01", "gpu.nvidia.com");
    assert_eq!((m.capacity, m.allocated, m.slots.len()), (4, 1, 1));
    let labels: Vec<_> =
        m.slots[0].iter().map(|s| (s.label.clone().unwrap_or_default().en.to_string(), s.state)).collect();
    assert_eq!(
        labels,
        [
            ("3g.40gb".to_string(), gpudash_model::model::SlotState::Free),
            ("1g.10gb".to_string(), gpudash_model::model::SlotState::Held),
            ("1g.10gb".to_string(), gpudash_model::model::SlotState::Free)
        ]
    );
    assert_eq!(m.devices[1].parent.as_deref(), Some("gpu-0"));
    assert_eq!(m.holders[0].name, "embed-0");
    // Pods with claims use the GPU through the scheduler, not outside it.
    assert!(node(&v, "gpu-a100-01").gpu_users_outside.is_empty());
    // One claim shared by three pods: one device, three holders.
    let s = entry(&v, "gpu-l4-shared-01", "gpu.nvidia.com");
    assert_eq!((s.capacity, s.allocated, s.holders.len()), (1, 1, 3));
    assert_eq!(s.devices[0].holders.len(), 3);
    assert_eq!(s.devices[0].claims.len(), 1);
    assert_eq!(s.slots[0][0].label.as_deref(), Some("3 pods share it"));
    // No device plugin is missing on DRA nodes; the unused claim is said.
    let c = codes(&v);
    assert!(c.contains(&("dra-claim-unreserved".into(), "warmup-gpu".into())), "{c:?}");
    assert!(!c.iter().any(|(code, _)| code == "device-plugin-missing" || code == "dra-driver-missing"), "{c:?}");
    let d = v.diagnoses.iter().find(|d| d.code == "dra-claim-unreserved").map(|d| d.link.clone());
    assert_eq!(d, Some(Some("/nodes/gpu-a100-01".into())));
    assert_eq!(v.totals.gpu_allocated, 2 + 1 + 1);
}

#[test]
fn dra_capacity_shares_extended_resources_and_two_allocators() {
    let v = dra("shares-extended-dual.yaml");
    let h = entry(&v, "gpu-h100-01", "gpu.nvidia.com");
    assert!(h.devices[0].shared);
    assert_eq!(h.devices[0].claims.iter().filter_map(|c| c.share_id.as_deref()).count(), 2);
    let labels: Vec<_> = h.slots[0].iter().map(|s| s.label.clone().unwrap_or_default()).collect();
    assert_eq!(labels, ["20.0 GiB", "10.0 GiB", "50.0 GiB free"]);
    assert_eq!(h.holders.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["asr-0", "tts-0"]);
    // The extended-resource pod holds the DRA device, not a phantom nvidia.com/gpu.
    let n = node(&v, "gpu-l4-ext-01");
    assert!(n.gpu_resources.iter().all(|g| g.resource != "nvidia.com/gpu"), "{:#?}", n.gpu_resources);
    assert_eq!(entry(&v, "gpu-l4-ext-01", "gpu.nvidia.com").holders[0].name, "ocr-0");
    let c = codes(&v);
    assert!(c.contains(&("gpu-dual-allocator".into(), "gpu-l4-dual-01".into())), "{c:?}");
    assert_eq!(c.iter().filter(|(code, _)| code == "gpu-dual-allocator").count(), 1, "{c:?}");
    // Its device comes through CDI from the DRA driver: no runtimeClassName is needed.
    assert!(!c.contains(&("gpu-pod-without-runtimeclass".into(), "ocr-0".into())), "{c:?}");
}

#[test]
fn dra_pending_claims_a_missing_class_and_a_missing_driver() {
    let v = dra("class-and-driver-missing.yaml");
    let p = |name: &str| v.pending.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("{name}"));
    let inspector = p("inspector-0");
    assert_eq!(inspector.claims.len(), 1);
    assert_eq!(
        (
            inspector.claims[0].name.as_str(),
            inspector.claims[0].device_class.as_deref(),
            inspector.claims[0].state.as_str()
        ),
        ("inspector-0-gpu-d8f2h", Some("gpu.nvidia.com"), "pending")
    );
    assert_eq!(inspector.reasons[0].reason, "cannot allocate all claims");
    // Its card says why: the GPU node it could go to has no DRA driver running.
    assert!(inspector.problems.iter().any(|d| d.code == "dra-driver-missing" && d.name == "orin-agx-dra-01"));
    assert!(inspector.diagnoses.contains(&gpudash_model::model::Code::from("dra-driver-missing")));
    let detector = p("detector-0");
    assert_eq!(detector.reasons[0].reason, "DeviceClass gpu.example.com does not exist");
    assert!(detector.diagnoses.contains(&gpudash_model::model::Code::from("dra-deviceclass-missing")));
    assert!(!detector.problems.iter().any(|d| d.code == "dra-driver-missing"), "its class is missing, not a driver");
    assert!(detector.problems.iter().any(|d| d.code == "dra-deviceclass-missing" && d.severity == Severity::Critical));
    let missing = v.diagnoses.iter().find(|d| d.code == "dra-driver-missing").map(|d| (d.name.clone(), d.severity));
    assert_eq!(missing, Some(("orin-agx-dra-01".into(), Severity::Critical)));
    let c = codes(&v);
    assert!(!c.iter().any(|(code, _)| code == "device-plugin-missing"), "{c:?}");
    // The template and claim the pod uses are not said twice.
    assert_eq!(c.iter().filter(|(code, _)| code == "dra-deviceclass-missing").count(), 1, "{c:?}");
}

#[test]
fn a_dra_drivers_whole_gpus_show_the_busy_and_memory_dcgm_exporter_measures() {
    let mut inputs = load(&scenario_text("dra/whole-mig-shared-unreserved.yaml"));
    // The node's agent, reading dcgm-exporter (the demo's simulated page names GPUs by the UUIDs
    // the DRA driver publishes), and an agent that went silent long ago on the same node.
    let report = r#"{"version":1,"node":"gpu-a100-01","generated_at":0,"kubelet":null,"tegrastats":null,
      "dcgm":{"value":[{"index":"0","uuid":"GPU-2f6d1a4e-9b1c-4f0e-8d7a-1c2b3a4d5e01","busy_percent":88.4,"memory_used_bytes":34359738368},
                       {"index":"1","uuid":"GPU-2f6d1a4e-9b1c-4f0e-8d7a-1c2b3a4d5e02","busy_percent":1.0}],"seen_at":0,"error":null}}"#;
    let seen = |last_ok: &str| {
        Arc::new(crate::agent::AgentSeen {
            node: "gpu-a100-01".into(),
            pod: "gpudash/gpudash-agent-gpu-a100-01".into(),
            report: Some(crate::agent::parse(report.as_bytes()).unwrap()),
            last_ok: last_ok.parse().ok(),
            error: None,
        })
    };
    inputs.agents = vec![seen("2026-12-01T00:00:00Z")];
    let now = "2026-12-01T00:00:00Z".parse().unwrap_or_default();
    let v = derive(&inputs, &Options::default(), Source::default(), 1, now);
    let g = entry(&v, "gpu-a100-01", "gpu.nvidia.com");
    let measured: Vec<(Option<u32>, Option<u64>)> =
        g.devices.iter().map(|d| (d.busy_percent, d.memory_used_bytes)).collect();
    assert_eq!(measured, [(Some(88), Some(32 << 30)), (Some(1), None)]);
    assert_eq!(g.rows, ["GPU 0 · 88% busy · 32.0 GiB used", "GPU 1 · 1% busy"]);
    // The MIG node's slices are not measured (no agent there, and dcgm-exporter reports no
    // utilisation for a MIG-enabled GPU).
    assert!(entry(&v, "gpu-a100-mig-01", "gpu.nvidia.com").devices.iter().all(|d| d.busy_percent.is_none()));
    // A silent agent's last word is shown, and says so.
    inputs.agents = vec![seen("2026-11-30T00:00:00Z")];
    let v = derive(&inputs, &Options::default(), Source::default(), 2, now);
    assert_eq!(entry(&v, "gpu-a100-01", "gpu.nvidia.com").rows[0], "GPU 0 · 88% busy · 32.0 GiB used · stale");
}
