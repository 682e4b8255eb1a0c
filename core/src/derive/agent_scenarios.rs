//! `tests/scenarios/agent/agents.yaml` with agent reports: exact replica placement from the
//! kubelet's map, measured use, board RAM, stale agents and the agent diagnoses.

use super::tests::{load, scenario_text};
use super::*;
use gpudash_model::model::{Severity, SlotState};

use crate::agent::{parse, AgentSeen};

const T0: &str = "2026-12-03T10:00:00Z";

fn seen(node: &str, report: &str, last_ok: Option<&str>) -> Arc<AgentSeen> {
    Arc::new(AgentSeen {
        node: node.into(),
        pod: format!("gpudash/gpudash-agent-{node}"),
        report: Some(parse(report.as_bytes()).unwrap()),
        last_ok: last_ok.and_then(|t| t.parse().ok()),
        error: None,
    })
}

const SERVER: &str = r#"{"version":1,"node":"gpu-ts-01","generated_at":0,
 "kubelet":{"value":{"allocatable":[{"resource":"nvidia.com/gpu","ids":["GPU-aaaa::0","GPU-aaaa::1","GPU-aaaa::2","GPU-aaaa::3",
    "GPU-bbbb::0","GPU-bbbb::1","GPU-bbbb::2","GPU-bbbb::3"]}],
  "pods":[{"namespace":"vision","name":"line-inspect-7d9f8c6b5-k2x7p","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-aaaa::0"]}]},
          {"namespace":"vision","name":"weld-check-5f6a7b8c9-q4w5e","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-bbbb::0"]}]},
          {"namespace":"vision","name":"label-ocr-6b7c8d9e0-r6t7y","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-aaaa::1"]}]},
          {"namespace":"ml","name":"llm-assist-0","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-bbbb::1","GPU-bbbb::2"]}]}]},
  "seen_at":0,"error":null},
 "tegrastats":null,
 "dcgm":{"value":[{"index":"0","uuid":"GPU-aaaa","busy_percent":97.0,"memory_used_bytes":12884901888},
  {"index":"1","uuid":"GPU-bbbb","busy_percent":12.0,"memory_used_bytes":17179869184}],"seen_at":0,"error":null}}"#;

const JETSON: &str = r#"{"version":1,"node":"orin-nano-01","generated_at":0,
 "kubelet":{"value":{"allocatable":[{"resource":"nvidia.com/gpu","ids":["tegra::0","tegra::1"]}],
  "pods":[{"namespace":"vision","name":"shelf-cam-8c9d0e1f2-u8i9o","devices":[{"resource":"nvidia.com/gpu","ids":["tegra::0"]}]},
          {"namespace":"vision","name":"pose-check-9d0e1f2a3-p1a2s","devices":[{"resource":"nvidia.com/gpu","ids":["tegra::1"]}]}]},"seen_at":0,"error":null},
 "tegrastats":{"value":{"ram_used_bytes":2251292672,"ram_total_bytes":7990149120,"gpu_busy_percent":64},"seen_at":0,"error":null},
 "dcgm":null}"#;

fn view(agents: Vec<Arc<AgentSeen>>, now: &str) -> ClusterView {
    let mut inputs = load(&scenario_text("agent/agents.yaml"));
    inputs.agents = agents;
    derive(&inputs, &Options::default(), Source::default(), 1, now.parse().unwrap_or_default())
}

fn codes(v: &ClusterView) -> Vec<(String, String, Severity)> {
    v.diagnoses.iter().map(|d| (d.code.to_string(), d.name.clone(), d.severity)).collect()
}

#[test]
fn the_kubelets_map_places_each_replica_on_its_gpu_with_measured_use() {
    let v = view(vec![seen("gpu-ts-01", SERVER, Some(T0)), seen("orin-nano-01", JETSON, Some(T0))], T0);
    let n = v.nodes.iter().find(|n| n.name == "gpu-ts-01").unwrap_or_else(|| panic!("node"));
    assert_eq!(n.agent.as_ref().map(|a| (a.stale, a.seen_at.clone())), Some((false, Some(T0.to_string()))));
    let g = &n.gpu_resources[0];
    assert!(g.placement_known);
    assert_eq!(g.physical_gpus, Some(2));
    assert_eq!(g.rows, ["GPU 0 · 97% busy · 12.0 GiB used", "GPU 1 · 12% busy · 16.0 GiB used"]);
    let who = |row: usize, i: usize| g.slots[row][i].holder.map(|h| g.holders[h as usize].name.clone());
    assert_eq!(who(0, 0).as_deref(), Some("line-inspect-7d9f8c6b5-k2x7p"));
    assert_eq!(who(0, 1).as_deref(), Some("label-ocr-6b7c8d9e0-r6t7y"));
    assert_eq!(g.slots[0][2].state, SlotState::Free);
    assert_eq!(who(1, 1).as_deref(), Some("llm-assist-0"));
    assert_eq!(who(1, 2).as_deref(), Some("llm-assist-0"));
    let d = &g.devices[1];
    assert_eq!((d.uuid.as_deref(), d.busy_percent, d.memory_used_bytes), (Some("GPU-bbbb"), Some(12), Some(16 << 30)));
    let llm = d.holders.iter().find(|h| h.name == "llm-assist-0").map(|h| h.replicas.clone());
    assert_eq!(llm, Some(vec![1, 2]));
    // Measured contention: GPU 0 is 97 % busy with two pods; GPU 1 has two pods but idles.
    let c = codes(&v);
    let contention: Vec<_> = c.iter().filter(|(code, _, _)| code == "gpu-time-slice-contention").collect();
    assert_eq!(contention.len(), 1, "{c:?}");
    assert_eq!((contention[0].1.as_str(), contention[0].2), ("gpu-ts-01", Severity::Warning));
    let msg = v.diagnoses.iter().find(|d| d.code == "gpu-time-slice-contention").map(|d| d.message.clone());
    assert!(msg.is_some_and(|m| m.contains("GPU 0") && m.contains("97% busy") && m.contains("label-ocr")));
    // The Jetson: GR3D busy on its one GPU, the board's RAM beside requests and limits.
    let j = v.nodes.iter().find(|n| n.name == "orin-nano-01").unwrap_or_else(|| panic!("node"));
    assert_eq!(j.memory.board_used_bytes, Some(2_251_292_672));
    assert!(j.memory.board_used_permille.is_some_and(|p| p > 250 && p < 300), "{:?}", j.memory);
    assert_eq!(j.gpu_resources[0].devices[0].busy_percent, Some(64));
    assert_eq!(j.gpu_resources[0].devices[0].uuid, None, "the integrated GPU has no UUID in the device plugin's map");
    // A GPU node without an agent, while others have one.
    assert!(c.contains(&("agent-missing".into(), "gpu-x86-02".into(), Severity::Info)), "{c:?}");
    assert!(!c.iter().any(|(code, n, _)| code == "agent-missing" && n != "gpu-x86-02"));
}

#[test]
fn a_silent_agent_is_stale_not_zero_and_contention_falls_back_to_the_api() {
    let later = "2026-12-03T10:01:00Z";
    let v = view(vec![seen("gpu-ts-01", SERVER, Some(T0)), seen("orin-nano-01", JETSON, Some(later))], later);
    let n = v.nodes.iter().find(|n| n.name == "gpu-ts-01").unwrap_or_else(|| panic!("node"));
    assert_eq!(n.agent.as_ref().map(|a| a.stale), Some(true));
    // The last map and use are kept, marked stale, never zeroed.
    assert_eq!(n.gpu_resources[0].devices[0].busy_percent, Some(97));
    let c = codes(&v);
    assert!(c.contains(&("agent-stale".into(), "gpu-ts-01".into(), Severity::Info)), "{c:?}");
    let contention: Vec<_> =
        c.iter().filter(|(code, n, _)| code == "gpu-time-slice-contention" && n == "gpu-ts-01").collect();
    assert_eq!(contention.len(), 1);
    assert_eq!(contention[0].2, Severity::Info, "stale measurements: the API's count decides");
    // Without any agent nothing about agents is said, and placement is the API's.
    let none = view(Vec::new(), T0);
    assert!(!codes(&none).iter().any(|(code, _, _)| code.starts_with("agent-")));
    let g = &none.nodes.iter().find(|n| n.name == "gpu-ts-01").unwrap_or_else(|| panic!("node")).gpu_resources[0];
    assert!(!g.placement_known && g.devices.is_empty());
}

#[test]
fn a_held_unit_the_kubelet_has_not_reported_and_units_out_of_service_get_rows_of_their_own() {
    // The kubelet lists only healthy devices; the API counts a pod the kubelet has not placed.
    let partial = SERVER.replace(r#""GPU-bbbb::2","GPU-bbbb::3"]}],"#, r#""GPU-bbbb::2"]}],"#).replace(
        r#"{"namespace":"ml","name":"llm-assist-0","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-bbbb::1","GPU-bbbb::2"]}]}"#,
        r#"{"namespace":"ml","name":"llm-assist-0","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-bbbb::1"]}]}"#,
    );
    let v = view(vec![seen("gpu-ts-01", &partial, Some(T0))], T0);
    let g = &v.nodes.iter().find(|n| n.name == "gpu-ts-01").unwrap_or_else(|| panic!("node")).gpu_resources[0];
    assert_eq!(g.rows.last().map(|r| r.en.as_ref()), Some("out of service"), "{:?}", g.rows);
    assert!(g.rows.iter().any(|r| r == "not yet reported by the kubelet"), "{:?}", g.rows);
    let held: usize = g.slots.concat().iter().filter(|s| s.state == SlotState::Held).count();
    assert_eq!(held, 5, "every unit the API counts is drawn once");
}

/// The Jetson's report with nvmap's GPU memory by pod (as the agent serves it).
const JETSON_NVMAP: &str = r#"{"version":1,"node":"orin-nano-01","generated_at":0,
 "kubelet":{"value":{"allocatable":[{"resource":"nvidia.com/gpu","ids":["tegra::0","tegra::1"]}],
  "pods":[{"namespace":"vision","name":"shelf-cam-8c9d0e1f2-u8i9o","devices":[{"resource":"nvidia.com/gpu","ids":["tegra::0"]}]},
          {"namespace":"vision","name":"pose-check-9d0e1f2a3-p1a2s","devices":[{"resource":"nvidia.com/gpu","ids":["tegra::1"]}]}]},"seen_at":0,"error":null},
 "tegrastats":{"value":{"ram_used_bytes":2251292672,"ram_total_bytes":7990149120,"gpu_busy_percent":64},"seen_at":0,"error":null},
 "dcgm":null,
 "gpu_memory":{"value":{"source":"nvmap","pods":[
    {"uid":"8e7d6c5b-4a39-4281-b7f6-e5d4c3b2a190","bytes":1677721600,"containers":[["aaaaaaaaaaaa",1677721600]],"processes":1},
    {"uid":"3f2a9c41-6b7d-4e85-9a10-5c4d3e2f1a0b","bytes":419430400,"containers":[["bbbbbbbbbbbb",419430400]],"processes":1},
    {"uid":"00000000-0000-4000-8000-00000000dead","bytes":1048576,"containers":[],"processes":1}],
  "outside_bytes":18575360,"outside":[{"pid":1731,"name":"Xorg","bytes":18575360}],
  "total_bytes":2116726272,"nvmap_used_bytes":2116726272,"skipped_lines":0,"exited":0},"seen_at":0,"error":null}}"#;

#[test]
fn gpu_memory_by_pod_splits_the_board_and_a_pod_over_its_limit_is_diagnosed() {
    let v = view(vec![seen("orin-nano-01", JETSON_NVMAP, Some(T0))], T0);
    let j = v.nodes.iter().find(|n| n.name == "orin-nano-01").unwrap_or_else(|| panic!("node"));
    let gpu = |name: &str| j.pods.iter().find(|p| p.name.starts_with(name)).and_then(|p| p.gpu_memory_bytes);
    assert_eq!(gpu("pose-check"), Some(1_677_721_600));
    assert_eq!(gpu("shelf-cam"), Some(419_430_400));
    let others: Vec<_> =
        j.pods.iter().filter(|p| !p.name.starts_with("pose") && !p.name.starts_with("shelf")).collect();
    assert!(
        others.iter().all(|p| p.gpu_memory_bytes == Some(0)),
        "the table lists every process with GPU memory: {others:?}"
    );
    let s = j.memory.split.clone().unwrap_or_else(|| panic!("no split: {:?}", j.memory));
    // All pods' processes, the one of a pod the API no longer lists included.
    assert_eq!(s.gpu_pods_bytes, 1_677_721_600 + 419_430_400 + 1_048_576);
    assert_eq!(s.other_pods_bytes, None, "no metrics in this scenario: unknown, not zero");
    assert_eq!(s.system_bytes, 2_251_292_672 - s.gpu_pods_bytes);
    assert_eq!(s.free_bytes, 7_990_149_120 - 2_251_292_672);
    assert_eq!(s.total_bytes, s.gpu_pods_bytes + s.system_bytes + s.free_bytes);
    assert_eq!(s.gpu_outside_bytes, 18_575_360);
    assert_eq!(s.permille.iter().sum::<u32>(), 1000);
    assert_eq!(j.memory.board_free_bytes, Some(s.free_bytes));
    // pose-check: 1.6 GiB of GPU memory against a 1.5 GiB limit; shelf-cam is within its 2 GiB.
    let over: Vec<_> = v.diagnoses.iter().filter(|d| d.code == "gpu-memory-beyond-limit").collect();
    assert_eq!(over.len(), 1, "{:?}", codes(&v));
    let d = over[0];
    assert_eq!(
        (d.kind.as_str(), d.namespace.as_deref(), d.node.as_deref()),
        ("Pod", Some("vision"), Some("orin-nano-01"))
    );
    assert!(d.name.starts_with("pose-check") && d.severity == Severity::Warning);
    assert!(d.message.contains("1.6 GiB of GPU memory") && d.message.contains("1.5 GiB"), "{}", d.message);
    assert!(d.message.contains("5.3 GiB of the board's 7.4 GiB is free"), "{}", d.message);
    // Without nvmap (the first Jetson report) nothing is known, and nothing is said.
    let v = view(vec![seen("orin-nano-01", JETSON, Some(T0))], T0);
    let j = v.nodes.iter().find(|n| n.name == "orin-nano-01").unwrap_or_else(|| panic!("node"));
    assert!(j.pods.iter().all(|p| p.gpu_memory_bytes.is_none()) && j.memory.split.is_none());
    assert!(!v.diagnoses.iter().any(|d| d.code == "gpu-memory-beyond-limit"));
}

#[test]
fn where_tegrastats_prints_no_gr3d_the_devfreq_load_is_the_gpus_busy() {
    // A Thor-like report: tegrastats without GR3D, the GPU's devfreq load read apart.
    let report = JETSON
        .replace(r#","gpu_busy_percent":64"#, "")
        .replace(r#""dcgm":null}"#, r#""dcgm":null,"devfreq_busy":{"value":36.7,"seen_at":0,"error":null}}"#);
    let v = view(vec![seen("orin-nano-01", &report, Some(T0))], T0);
    let j = v.nodes.iter().find(|n| n.name == "orin-nano-01").unwrap_or_else(|| panic!("node"));
    assert_eq!(j.gpu_resources[0].devices[0].busy_percent, Some(37));
    // GR3D, where printed, wins.
    let both =
        JETSON.replace(r#""dcgm":null}"#, r#""dcgm":null,"devfreq_busy":{"value":5.0,"seen_at":0,"error":null}}"#);
    let v = view(vec![seen("orin-nano-01", &both, Some(T0))], T0);
    let j = v.nodes.iter().find(|n| n.name == "orin-nano-01").unwrap_or_else(|| panic!("node"));
    assert_eq!(j.gpu_resources[0].devices[0].busy_percent, Some(64));
}

/// The demo's Xavier NX runs no device plugin: Kubernetes counts no GPU there, so the load its
/// agent measures (GR3D, from the recorded Xavier NX line's figures) is carried by the agent's
/// view; on a board whose GPU is advertised the load sits on the GPU instead.
#[test]
fn a_board_without_the_device_plugin_shows_its_measured_load_on_its_agent() {
    const XAVIER: &str = r#"{"version":1,"node":"xavier-nx-03","generated_at":0,
     "kubelet":{"value":{"allocatable":[],"pods":[]},"seen_at":0,"error":null},
     "tegrastats":{"value":{"ram_used_bytes":4626317312,"ram_total_bytes":8149532672,"gpu_busy_percent":62},"seen_at":0,"error":null},
     "dcgm":null}"#;
    let mut inputs = load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""));
    inputs.agents = vec![seen("xavier-nx-03", XAVIER, Some(T0)), seen("orin-nano-01", JETSON, Some(T0))];
    let v = derive(&inputs, &Options::default(), Source::default(), 1, T0.parse().unwrap_or_default());
    let x = v.nodes.iter().find(|n| n.name == "xavier-nx-03").unwrap_or_else(|| panic!("node"));
    assert!(x.gpu_resources.is_empty());
    assert_eq!(x.agent.as_ref().and_then(|a| a.gpu_busy_percent), Some(62));
    assert_eq!(x.memory.board_used_bytes, Some(4412 << 20));
    let j = v.nodes.iter().find(|n| n.name == "orin-nano-01").unwrap_or_else(|| panic!("node"));
    assert_eq!(j.agent.as_ref().map(|a| a.gpu_busy_percent), Some(None), "its load is on its GPU");
}

#[test]
fn a_holder_whose_gpu_idles_for_two_hours_while_a_pod_waits_is_told_and_not_before() {
    // GPU 1 of gpu-ts-01 (weld-check and llm-assist) measured 2 % busy by dcgm-exporter, and a
    // model waiting for nvidia.com/gpu that could go there.
    let idle_report = SERVER.replace(r#""busy_percent":12.0"#, r#""busy_percent":2.0"#);
    let waiting = "apiVersion: v1\nkind: Pod\nmetadata: {name: forecast-5d6e7f8a9-w1e2r, namespace: ml, creationTimestamp: \"2026-12-03T09:00:00Z\"}\n\
        spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: \"4\"}}}]}\n\
        status: {phase: Pending, conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable, \
        message: \"0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.\"}]}\n";
    let mut inputs = load(&format!("{}\n---\n{waiting}", scenario_text("agent/agents.yaml")));
    let mut cache = Cache::default();
    let at = |t: &str| -> jiff::Timestamp { t.parse().unwrap_or_default() };
    let run = |inputs: &mut Inputs, cache: &mut Cache, t: &str| {
        inputs.agents = vec![seen("gpu-ts-01", &idle_report, Some(t))];
        derive_cached(inputs, &Options::default(), Source::default(), 1, at(t), cache)
    };
    let idle = |v: &ClusterView| -> Vec<String> {
        v.diagnoses.iter().filter(|d| d.code == "gpu-held-idle").map(|d| d.name.clone()).collect()
    };
    assert!(idle(&run(&mut inputs, &mut cache, T0)).is_empty(), "idle since now");
    assert!(idle(&run(&mut inputs, &mut cache, "2026-12-03T11:59:00Z")).is_empty(), "1 h 59 min");
    let v = run(&mut inputs, &mut cache, "2026-12-03T12:00:30Z");
    assert_eq!(idle(&v), ["llm-assist-0", "weld-check-5f6a7b8c9-q4w5e"]);
    let d =
        v.diagnoses.iter().find(|d| d.name == "llm-assist-0" && d.code == "gpu-held-idle").cloned().unwrap_or_default();
    assert_eq!((d.severity, d.node.as_deref()), (Severity::Warning, Some("gpu-ts-01")));
    assert!(
        d.message.starts_with("ml/llm-assist-0 holds 2 nvidia.com/gpu on gpu-ts-01, and its GPU has been under 5 % busy for 2 h 0 min (2 % now"),
        "{}",
        d.message
    );
    // Busy again, the count starts over; an agent gone stale ends it too (unknown is not idle).
    inputs.agents = vec![seen("gpu-ts-01", SERVER, Some("2026-12-03T12:01:00Z"))];
    let v = derive_cached(&inputs, &Options::default(), Source::default(), 1, at("2026-12-03T12:01:00Z"), &mut cache);
    assert!(idle(&v).is_empty());
    assert!(idle(&run(&mut inputs, &mut cache, "2026-12-03T13:00:00Z")).is_empty(), "idle again since 12:01");
    // Nothing waiting: nothing said, however long it idles.
    let mut alone = load(&scenario_text("agent/agents.yaml"));
    let mut cache = Cache::default();
    run(&mut alone, &mut cache, T0);
    assert!(idle(&run(&mut alone, &mut cache, "2026-12-03T15:00:00Z")).is_empty());
}
