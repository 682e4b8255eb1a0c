//! Derivation tests on the built-in edge scenario's real object shapes and on targeted fixtures.

use super::*;
use gpudash_model::model::{GpuRequest, NodeView, Severity, Sharing, SourceMode};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

/// Loads `kubectl get -o yaml`-shaped documents (objects and Lists) into typed inputs.
pub(crate) fn load(text: &str) -> Inputs {
    super::load::from_kubectl_yaml(text).expect("fixture")
}

/// The text of a scenario file under `tests/scenarios/` (`onsite/gpu-unhealthy.yaml`).
pub(crate) fn scenario_text(rel: &str) -> String {
    let path = format!("{}/../tests/scenarios/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn edge() -> ClusterView {
    let inputs = load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""));
    derive(
        &inputs,
        &Options::default(),
        Source { mode: SourceMode::Demo, synced: true, ..Source::default() },
        7,
        jiff::Timestamp::UNIX_EPOCH,
    )
}

fn node<'a>(v: &'a ClusterView, name: &str) -> &'a NodeView {
    v.nodes.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("node {name}"))
}

#[test]
fn the_orin_nano_second_model_is_pending_for_insufficient_gpu() {
    let v = edge();
    let p = v.pending.iter().find(|p| p.name.starts_with("anomaly-detector")).unwrap_or_else(|| panic!("pending pod"));
    assert_eq!(p.nodes_total, Some(8));
    assert_eq!(p.reasons[0].reason, "Insufficient nvidia.com/gpu");
    assert_eq!(p.reasons[0].nodes, Some(1));
    assert_eq!(p.gpu_request, Some(GpuRequest { resource: "nvidia.com/gpu".into(), count: 1 }));
    assert!(p.diagnoses.contains(&gpudash_model::model::Code::from("insufficient-gpu")));
    let nano = node(&v, "orin-nano-01");
    assert_eq!(nano.pending_pods, 1);
    let g = &nano.gpu_resources[0];
    assert_eq!((g.capacity, g.allocated, g.sharing), (1, 1, Sharing::None));
}

/// Pods waiting for the same reason share its words (the reasons and the insufficient-gpu
/// sentence, both languages): one text kept, not one a pod (10,000 flood pods held ~1 KiB each).
#[test]
fn pods_waiting_for_the_same_reason_share_its_words() {
    let mut inputs = load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""));
    let first =
        inputs.pods.iter().find(|p| p.metadata.name.as_deref().is_some_and(|n| n.starts_with("anomaly-detector")));
    let mut twin = crate::pod::Pod::clone(first.unwrap_or_else(|| panic!("the pending pod")));
    twin.metadata.name = Some("anomaly-detector-twin".into());
    inputs.pods.push(Arc::new(twin));
    let v = derive(
        &inputs,
        &Options::default(),
        Source { mode: SourceMode::Demo, synced: true, ..Source::default() },
        1,
        jiff::Timestamp::UNIX_EPOCH,
    );
    let both: Vec<&PendingPod> = v.pending.iter().filter(|p| p.name.starts_with("anomaly-detector")).collect();
    assert_eq!(both.len(), 2, "{:?}", v.pending.iter().map(|p| &p.name).collect::<Vec<_>>());
    let (a, b) = (&both[0].reasons[0].reason, &both[1].reasons[0].reason);
    assert!(Arc::ptr_eq(&a.en, &b.en) && Arc::ptr_eq(&a.ja, &b.ja), "one reason text: {a:?}");
    let told: Vec<&gpudash_model::i18n::Said> = v
        .diagnoses
        .iter()
        .filter(|d| d.code.as_str() == "insufficient-gpu" && d.name.starts_with("anomaly-detector"))
        .map(|d| &d.message)
        .collect();
    assert_eq!(told.len(), 2);
    assert!(Arc::ptr_eq(&told[0].en, &told[1].en) && Arc::ptr_eq(&told[0].ja, &told[1].ja), "one sentence");
    assert_ne!(told[0].en, told[0].ja, "both languages kept");
}

#[test]
fn the_agx_orin_shows_four_time_sliced_replicas_all_held() {
    let v = edge();
    let agx = node(&v, "orin-agx-01");
    assert!(agx.unified_memory);
    let g = &agx.gpu_resources[0];
    assert_eq!(
        (g.resource.as_str(), g.physical_gpus, g.replicas_per_gpu, g.capacity, g.allocated),
        ("nvidia.com/gpu", Some(1), 4, 4, 4)
    );
    assert_eq!(g.sharing, Sharing::TimeSlicing);
    assert_eq!(g.holders.len(), 4);
    // requests: 4 + 6 (init 512Mi < 6Gi) + 12 + 2 GiB
    assert_eq!(agx.memory.requested_bytes, 24 << 30);
    assert_eq!(agx.memory.limits_bytes, (6 + 8 + 16 + 3) << 30);
    assert_eq!(agx.memory.used_bytes, Some(31_457_280 * 1024));
}

#[test]
fn mig_and_whole_gpus_on_the_x86_server_are_separate_resources() {
    let v = edge();
    let x86 = node(&v, "gpu-x86-01");
    assert!(!x86.unified_memory);
    let mig = x86.gpu_resources.iter().find(|g| g.resource == "nvidia.com/mig-1g.5gb").unwrap_or_else(|| panic!("mig"));
    // The Succeeded job no longer holds its slice; batch-embed's two and team-retail's one do.
    assert_eq!((mig.sharing, mig.capacity, mig.allocated), (Sharing::Mig, 7, 3));
    let whole = x86.gpu_resources.iter().find(|g| g.resource == "nvidia.com/gpu").unwrap_or_else(|| panic!("gpu"));
    assert_eq!((whole.capacity, whole.allocated), (1, 1));
}

#[test]
fn every_demo_diagnosis_is_raised_once() {
    let v = edge();
    let codes: Vec<(&str, &str)> = v.diagnoses.iter().map(|d| (d.code.as_str(), d.name.as_str())).collect();
    for (code, name) in [
        ("insufficient-gpu", "anomaly-detector-6f8d7b5c4-r7zq9"),
        ("device-plugin-missing", "xavier-nx-03"),
        ("runtimeclass-missing", "pose-estimator-7d9f8b6c5"),
        ("gpu-pod-without-runtimeclass", "ocr-model-7c5b8d9f6-m2x7c"),
        ("unified-memory-overcommit", "orin-nx-02"),
        ("gpu-time-slice-contention", "orin-agx-01"),
        ("gpu-used-outside-scheduler", "xavier-nx-03"),
        ("gpu-quota-exhausted", "shelf-reid-6b8c9d7f5"),
        ("dra-claim-unreserved", "warmup-gpu"),
    ] {
        assert_eq!(codes.iter().filter(|c| **c == (code, name)).count(), 1, "{code} {name} in {codes:?}");
    }
    assert!(v.diagnoses.windows(2).all(|w| w[0].severity >= w[1].severity), "most severe first");
    assert_eq!(v.diagnoses[0].severity, Severity::Critical);
    assert_eq!(v.totals.pending, 2);
}

#[test]
fn no_metrics_means_unknown_use_never_zero() {
    let mut inputs = load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""));
    inputs.node_metrics = None;
    inputs.pod_metrics = None;
    let v = derive(&inputs, &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert!(v.nodes.iter().all(|n| n.memory.used_bytes.is_none()));
}

#[test]
fn a_scheduled_pod_keeps_no_stale_reason() {
    let text = r#"
apiVersion: v1
kind: Pod
metadata: {name: m, namespace: ml, uid: u2}
spec: {nodeName: n1, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status:
  phase: Running
  conditions: [{type: PodScheduled, status: "True"}]
---
apiVersion: v1
kind: Event
metadata: {name: m.1, namespace: ml}
involvedObject: {kind: Pod, name: m, namespace: ml, uid: u2}
reason: FailedScheduling
message: '0/1 nodes are available: 1 Insufficient nvidia.com/gpu.'
"#;
    let v = derive(&load(text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert!(v.pending.is_empty());
    assert!(v.diagnoses.iter().all(|d| d.code != "insufficient-gpu"));
}

#[test]
fn pending_reason_falls_back_to_the_newest_event_of_the_same_pod() {
    let text = r#"
apiVersion: v1
kind: Pod
metadata: {name: m, namespace: ml, uid: new, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Event
metadata: {name: m.old, namespace: ml}
involvedObject: {kind: Pod, name: m, namespace: ml, uid: old}
reason: FailedScheduling
lastTimestamp: "2026-01-01T00:00:05Z"
message: '0/1 nodes are available: 1 node(s) had untolerated taint(s).'
---
apiVersion: v1
kind: Event
metadata: {name: m.a, namespace: ml}
involvedObject: {kind: Pod, name: m, namespace: ml, uid: new}
reason: FailedScheduling
lastTimestamp: "2026-01-01T00:00:01Z"
message: '0/1 nodes are available: 1 Insufficient cpu.'
---
apiVersion: v1
kind: Event
metadata: {name: m.b, namespace: ml}
involvedObject: {kind: Pod, name: m, namespace: ml, uid: new}
reason: FailedScheduling
lastTimestamp: "2026-01-01T00:00:09Z"
message: '0/1 nodes are available: 1 Insufficient nvidia.com/gpu.'
"#;
    let v = derive(&load(text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert_eq!(v.pending[0].reasons[0].reason, "Insufficient nvidia.com/gpu");
    assert_eq!(v.pending[0].pending_since.as_deref(), Some("2026-01-01T00:00:00Z"));
}

/// HAMi vGPU (`tests/scenarios/sharing/hami.yaml`, shapes from HAMi's protocol document and
/// code): each card a row with its vGPUs' memory and cores, the pods' own shares, and no
/// "GPU" made of HAMi's memory and cores resources.
#[test]
fn hami_vgpus_are_drawn_by_card_from_the_annotations() {
    let v = derive(
        &load(&scenario_text("sharing/hami.yaml")),
        &Options::default(),
        Source::default(),
        1,
        jiff::Timestamp::UNIX_EPOCH,
    );
    for n in &v.nodes {
        assert!(n.gpu_resources.iter().all(|g| g.resource == "nvidia.com/gpu"), "{}: {:?}", n.name, n.gpu_resources);
    }
    let g = &node(&v, "v100-hami-01").gpu_resources[0];
    assert_eq!((g.sharing, g.physical_gpus, g.replicas_per_gpu, g.placement_known), (Sharing::Vgpu, Some(2), 10, true));
    assert_eq!((g.capacity, g.allocated), (20, 4));
    assert_eq!(g.product.as_deref(), Some("Tesla V100-PCIE-32GB"));
    assert_eq!(&*g.rows[0].en, "GPU 0 · free 16768/32768 MiB, 50 % cores");
    assert_eq!(&*g.rows[1].en, "GPU 1 · free 24768/32768 MiB, 100 % cores");
    assert!(g.rows[1].ja.contains("空き 24768/32768 MiB"), "{}", g.rows[1].ja);
    let held: Vec<String> = g.slots[1]
        .iter()
        .filter(|s| s.holder.is_some())
        .map(|s| {
            format!(
                "{} {}",
                g.holders[s.holder.unwrap_or(0) as usize].name,
                s.label.as_ref().map_or("", |l| l.en.as_ref())
            )
        })
        .collect();
    assert_eq!(held, ["gpu-pod 3000 MiB · 0 %", "gpu-pod 5000 MiB · 0 %"]);
    assert_eq!(g.slots[1].len(), 10, "two held, eight free");
    assert_eq!(&*g.rows[2].en, "card not yet written by HAMi");
    let share = |name: &str| g.holders.iter().find(|h| h.name.starts_with(name)).and_then(|h| h.share_permille);
    // 50 % of the cores; memory over the card where cores are not limited (3000 and 5000 of 32768 MiB).
    assert_eq!((share("llm-chat"), share("gpu-pod"), share("whisper")), (Some(500), Some(92 + 153), None));
    assert_eq!(g.devices[0].holders.len(), 1);
    assert_eq!(g.devices[1].memory_bytes, Some(32768 * 1024 * 1024));
    let a10 = &node(&v, "a10-hami-02").gpu_resources[0];
    assert_eq!(&*a10.rows[1].en, "GPU 1 · free 17271/23028 MiB, 100 % cores");
    assert_eq!(a10.holders[0].share_permille, Some(250));
}

/// HAMi shares no card can give (`tests/scenarios/sharing/hami-waiting.yaml` on `hami.yaml`'s
/// servers): a share larger than any card can never be placed; one larger than any card has
/// free names each node's most free card; one that fits is not diagnosed. HAMi's own event is
/// the pod's message.
#[test]
fn hami_shares_no_card_can_give_are_diagnosed() {
    let text = [scenario_text("sharing/hami.yaml"), scenario_text("sharing/hami-waiting.yaml")].join("\n---\n");
    let v = derive(&load(&text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let on = |name: &str| -> Vec<(String, String, String)> {
        v.diagnoses
            .iter()
            .filter(|d| d.name == name)
            .map(|d| (d.code.to_string(), d.message.en.to_string(), d.message.ja.to_string()))
            .collect()
    };
    let llm = on("llm-70b-0");
    assert_eq!(llm.len(), 1, "{llm:?}");
    assert_eq!(llm[0].0, "gpu-share-exceeds-gpu");
    assert!(llm[0].1.starts_with("Asks for 40000 MiB of one GPU"), "{}", llm[0].1);
    assert!(llm[0].1.contains("the largest is 32768 MiB (Tesla V100-PCIE-32GB on v100-hami-01)"), "{}", llm[0].1);
    assert!(llm[0].2.contains("40000 MiB") && llm[0].2.contains("32768 MiB"), "{}", llm[0].2);
    let embed = on("embed-5d6c7b8a9-t4u5v");
    assert_eq!(embed.len(), 1, "{embed:?}");
    assert_eq!(embed[0].0, "insufficient-gpu-memory");
    assert!(
        embed[0].1.contains(
            "The most free on each node: v100-hami-01 GPU 1: 24768 of 32768 MiB free; a10-hami-02 GPU 0: 23028 of 23028 MiB free."
        ),
        "{}",
        embed[0].1
    );
    assert!(embed[0].2.contains("v100-hami-01 の GPU 1：32768 MiB 中 24768 MiB 空き"), "{}", embed[0].2);
    let ocr = on("ocr-whole-0");
    assert_eq!(ocr.iter().map(|d| d.0.as_str()).collect::<Vec<_>>(), ["gpu-share-exceeds-gpu"]);
    assert!(ocr[0].1.starts_with("Asks for 150 % of one GPU's memory"), "{}", ocr[0].1);
    assert!(on("tiny-0").is_empty(), "a share that fits: {:?}", on("tiny-0"));
    let p = v.pending.iter().find(|p| p.name.starts_with("embed-")).unwrap_or_else(|| panic!("embed pending"));
    assert_eq!(p.message.as_deref(), Some("no available node, 2 nodes do not meet"), "HAMi's event");
    assert_eq!(p.scheduler.as_deref(), Some("hami-scheduler"));
    assert!(p.diagnoses.contains(&gpudash_model::model::Code::from("insufficient-gpu-memory")), "{:?}", p.diagnoses);
    assert_eq!(p.problems.len(), 1, "the pod's diagnosis joined to it");
}

/// This year's silicon (`tests/scenarios/silicon/`): the DGX Spark's GB10 is a unified-memory
/// board though it is no Tegra; the Jetson Thor is a Tegra board, and its crash-looping device
/// plugin is named.
#[test]
fn a_dgx_spark_and_a_jetson_thor_are_unified_memory_boards() {
    let text =
        [scenario_text("silicon/dgx-spark-gb10.yaml"), scenario_text("silicon/jetson-thor.yaml")].join("\n---\n");
    let v = derive(&load(&text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let spark = node(&v, "spark-01");
    assert!(spark.unified_memory, "GB10: the board's memory is the GPU's");
    assert_eq!(spark.gpu_resources[0].product.as_deref(), Some("NVIDIA-GB10"));
    assert_eq!(spark.memory.board_bytes, 127_541_140 * 1024);
    let d = v.diagnoses.iter().find(|d| d.code.as_str() == "unified-memory-overcommit" && d.name == "spark-01");
    assert!(d.is_some(), "limits 142 GiB on a 121.6 GiB board: {:?}", v.diagnoses);
    let thor = node(&v, "thor-01");
    assert!(thor.unified_memory);
    let dpm = v.diagnoses.iter().find(|d| d.code.as_str() == "device-plugin-missing" && d.name == "thor-01");
    let m = dpm.map(|d| d.message.en.clone()).unwrap_or_default();
    assert!(m.contains("CrashLoopBackOff") && m.contains("restarted 14 times"), "{m}");
}

/// An MPS node whose plugin waits for an MPS control daemon that does not run
/// (`tests/scenarios/sharing/mps-daemon-missing.yaml`): the daemon is named as what to fix, on
/// the node and to the model aimed at it; with the daemon running and ready, no such word.
#[test]
fn an_mps_node_without_its_control_daemon_is_told_so() {
    let text = scenario_text("sharing/mps-daemon-missing.yaml");
    let v = derive(&load(&text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let code = |c: &str| v.diagnoses.iter().find(|d| d.code.as_str() == c && d.name == "l4-mps-01");
    let d = code("gpu-mps-daemon-missing").unwrap_or_else(|| panic!("{:?}", v.diagnoses));
    assert_eq!(d.severity, Severity::Critical, "a model waits");
    assert!(d.message.en.contains("error waiting for MPS daemon") && d.message.ja.contains("MPS コントロールデーモン"));
    assert!(code("device-plugin-missing").is_none(), "the plugin runs; the daemon is missing");
    let p = v.pending.iter().find(|p| p.name.starts_with("detector-mps")).unwrap_or_else(|| panic!("pending"));
    assert!(p.diagnoses.contains(&gpudash_model::model::Code::from("gpu-mps-daemon-missing")), "{:?}", p.diagnoses);
    let told: Vec<&str> =
        v.diagnoses.iter().filter(|d| d.name.starts_with("detector-mps")).map(|d| d.message.en.as_ref()).collect();
    assert!(told.iter().any(|m| m.contains("no MPS control daemon runs there")), "{told:?}");
    // The daemon's pod running and ready: the plugin's own state is what is left to tell.
    let daemon = "- apiVersion: v1\n  kind: Pod\n  metadata: {name: nvdp-nvidia-device-plugin-mps-control-daemon-k2l3m, namespace: \
        nvidia-device-plugin}\n  spec: {nodeName: l4-mps-01, containers: [{name: mps-control-daemon-ctr, image: \
        \"nvcr.io/nvidia/k8s-device-plugin:v0.17.0\"}]}\n  status: {phase: Running, containerStatuses: [{name: mps-control-daemon-ctr, \
        ready: true, restartCount: 0, image: x, imageID: \"\", started: true, state: {running: {startedAt: \"2026-12-01T06:00:00Z\"}}}]}\n";
    let v = derive(
        &load(&format!("{text}{daemon}")),
        &Options::default(),
        Source::default(),
        1,
        jiff::Timestamp::UNIX_EPOCH,
    );
    assert!(!v.diagnoses.iter().any(|d| d.code.as_str() == "gpu-mps-daemon-missing"), "{:?}", v.diagnoses);
    assert!(v.diagnoses.iter().any(|d| d.code.as_str() == "device-plugin-missing" && d.name == "l4-mps-01"));
}

#[test]
fn a_non_default_scheduler_is_named_and_its_message_kept_raw() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: v, namespace: ml}\nspec: {schedulerName: volcano, containers: []}\nstatus: {phase: \
        Pending, conditions: [{type: PodScheduled, status: \"False\", message: \"0/2 nodes are available: 2 Insufficient cpu.\"}]}\n";
    let v = derive(&load(text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert_eq!(v.pending[0].scheduler.as_deref(), Some("volcano"));
    assert!(v.pending[0].reasons.is_empty());
    assert!(v.pending[0].message.is_some());
}

#[test]
fn handler_missing_and_shared_request_too_large_are_diagnosed() {
    let text = r#"
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: nvidia}
handler: nvidia
---
apiVersion: v1
kind: Pod
metadata: {name: s, namespace: ml}
spec: {nodeName: n1, runtimeClassName: nvidia, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Event
metadata: {name: s.1, namespace: ml}
involvedObject: {kind: Pod, name: s, namespace: ml}
reason: FailedCreatePodSandBox
message: 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured'
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml}
spec: {nodeName: n1, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}
status: {phase: Failed, reason: UnexpectedAdmissionError, message: 'Allocate failed due to rpc error: code = Unknown desc = request for "nvidia.com/gpu": invalid request: maximum request size for shared resources is 1, which is unexpected'}
"#;
    let v = derive(&load(text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let codes: Vec<&str> = v.diagnoses.iter().map(|d| d.code.as_str()).collect();
    assert!(codes.contains(&"runtime-handler-missing"), "{codes:?}");
    assert!(codes.contains(&"shared-gpu-request-too-large"), "{codes:?}");
}

#[test]
fn zero_allocatable_under_capacity_is_a_broken_device_plugin_but_renamed_capacity_is_not() {
    let text = r#"
apiVersion: v1
kind: Node
metadata: {name: broken}
status: {capacity: {nvidia.com/gpu: "2"}, allocatable: {nvidia.com/gpu: "0"}}
---
apiVersion: v1
kind: Node
metadata: {name: renamed, labels: {nvidia.com/gpu.present: "true", nvidia.com/gpu.count: "1", nvidia.com/gpu.replicas: "4"}}
status: {capacity: {nvidia.com/gpu: "0", nvidia.com/gpu.shared: "4"}, allocatable: {nvidia.com/gpu: "0", nvidia.com/gpu.shared: "4"}}
"#;
    let v = derive(&load(text), &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let dp: Vec<&str> =
        v.diagnoses.iter().filter(|d| d.code == "device-plugin-missing").map(|d| d.name.as_str()).collect();
    assert_eq!(dp, vec!["broken"]);
}

#[test]
fn the_unified_memory_selector_marks_matching_nodes() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {board: igx}}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n";
    let opts =
        Options { unified_selector: Options::parse_selector("board=igx").unwrap_or_default(), ..Options::default() };
    let v = derive(&load(text), &opts, Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    assert!(v.nodes[0].unified_memory);
    assert!(!v.nodes[1].unified_memory);
    assert!(Options::parse_selector("bad key=x").is_err());
}

#[test]
fn pod_facts_are_reused_until_the_pod_changes_and_dropped_when_it_goes() {
    let pod = |rv: &str, gpus: &str| {
        let text = format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: a, namespace: ml, uid: u1, resourceVersion: \"{rv}\"}}\nspec: {{nodeName: n, containers: \
                [{{name: c, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}\nstatus: {{phase: Running}}\n"
        );
        load(&text).pods
    };
    let mut cache = super::Cache::default();
    // The store hands out the same object until the pod changes.
    let stored = pod("1", "1");
    let facts = |cache: &mut super::Cache, pods: &[Arc<crate::pod::Pod>]| {
        cache.pods.update(pods);
        pods.iter().map(|p| cache.pods.facts(p).cloned().unwrap_or_else(|| panic!("no facts"))).collect::<Vec<_>>()
    };
    let first = facts(&mut cache, &stored);
    let again = facts(&mut cache, &stored);
    assert!(std::sync::Arc::ptr_eq(&first[0], &again[0]), "an unchanged pod is not re-parsed");
    let changed = facts(&mut cache, &pod("2", "2"));
    assert_eq!(changed[0].requests.get("nvidia.com/gpu"), Some(&2000));
    assert_eq!(cache.pods.len(), 1);
    assert_eq!(cache.pods.on("n").map(|o| o.held.len()), Some(1), "the changed pod replaced the old on its node");
    assert!(facts(&mut cache, &[]).is_empty());
    assert!(cache.pods.is_empty(), "facts of deleted pods are dropped");
    assert!(cache.pods.on("n").is_none(), "and the node holds none");
    // The cached derivation equals the plain one.
    let mut inputs =
        load("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {nvidia.com/gpu: \"2\"}}\n");
    inputs.pods = pod("3", "1");
    let plain = derive(&inputs, &Options::default(), Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
    let cached = super::derive_cached(
        &inputs,
        &Options::default(),
        Source::default(),
        1,
        jiff::Timestamp::UNIX_EPOCH,
        &mut cache,
    );
    assert_eq!(plain, cached);
    assert_eq!(cached.nodes[0].gpu_resources[0].allocated, 1);
}

/// The per-node memo gives exactly what a fresh derivation gives after every kind of change
/// (a pod changed, added, removed; a node changed; memory use moved; a pending pod aimed at a
/// node), and reuses the views of the nodes nothing touched.
#[test]
fn node_views_are_reused_only_while_nothing_they_depend_on_changed() {
    let mut inputs = load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""));
    let opts = Options::default();
    let mut cache = Cache::default();
    let at = |inputs: &Inputs, cache: &mut Cache| {
        let cached = derive_cached(inputs, &opts, Source::default(), 1, jiff::Timestamp::UNIX_EPOCH, cache);
        let plain = derive(inputs, &opts, Source::default(), 1, jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(cached, plain, "the memo changed the result");
        cached
    };
    let same = |a: &ClusterView, b: &ClusterView, name: &str| {
        let find = |v: &ClusterView| v.nodes.iter().find(|n| n.name == name).cloned();
        matches!((find(a), find(b)), (Some(x), Some(y)) if Arc::ptr_eq(&x, &y))
    };
    let pod_index = |inputs: &Inputs, name: &str| {
        inputs.pods.iter().position(|p| p.metadata.name.as_deref().is_some_and(|n| n.starts_with(name)))
    };
    let v0 = at(&inputs, &mut cache);
    assert_eq!(cache.nodes(), v0.nodes.len());
    let v1 = at(&inputs, &mut cache);
    assert!(v1.nodes.iter().zip(&v0.nodes).all(|(a, b)| Arc::ptr_eq(a, b)), "nothing changed: every view reused");

    // A pod on orin-agx-01 changes: only that node's view is rebuilt.
    let i = inputs
        .pods
        .iter()
        .position(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some("orin-agx-01"))
        .unwrap_or_else(|| panic!("a pod on orin-agx-01"));
    let mut p = (*inputs.pods[i]).clone();
    p.metadata.resource_version = Some("changed".into());
    inputs.pods[i] = Arc::new(p.clone());
    let v2 = at(&inputs, &mut cache);
    assert!(!same(&v1, &v2, "orin-agx-01") && same(&v1, &v2, "gpu-x86-01") && same(&v1, &v2, "orin-nano-01"));

    // The pod goes, then comes back on another node.
    inputs.pods.remove(i);
    let v3 = at(&inputs, &mut cache);
    assert!(!same(&v2, &v3, "orin-agx-01") && same(&v2, &v3, "gpu-x86-01"));
    p.spec.get_or_insert_with(Default::default).node_name = Some("gpu-x86-01".into());
    inputs.pods.push(Arc::new(p));
    let v4 = at(&inputs, &mut cache);
    assert!(!same(&v3, &v4, "gpu-x86-01") && same(&v3, &v4, "orin-agx-01"));

    // The node object changes (cordoned).
    let j = inputs.nodes.iter().position(|n| n.metadata.name.as_deref() == Some("orin-nano-01")).unwrap_or(0);
    let mut n = (*inputs.nodes[j]).clone();
    n.spec.get_or_insert_with(Default::default).unschedulable = Some(true);
    inputs.nodes[j] = Arc::new(n);
    let v5 = at(&inputs, &mut cache);
    assert!(!same(&v4, &v5, "orin-nano-01") && same(&v4, &v5, "gpu-x86-01"));

    // Memory use of a held pod moves (metrics), with the pod object unchanged.
    let held = inputs
        .pods
        .iter()
        .find(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some("k3s-server-01"))
        .map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone()))
        .unwrap_or_default();
    let mut m = PodMetrics::default();
    m.metadata.namespace = held.0;
    m.metadata.name = held.1;
    m.containers = vec![ContainerMetrics {
        name: "c".into(),
        usage: [("memory".to_string(), K8sQuantity("123Mi".into()))].into(),
    }];
    Arc::make_mut(inputs.pod_metrics.get_or_insert_with(Arc::default)).push(m);
    let v6 = at(&inputs, &mut cache);
    assert!(!same(&v5, &v6, "k3s-server-01") && same(&v5, &v6, "gpu-x86-01"));

    // A pending pod that names gpu-x86-01 changes its pending count only.
    let k = pod_index(&inputs, "anomaly-detector").unwrap_or_else(|| panic!("pending pod"));
    let mut w = (*inputs.pods[k]).clone();
    w.metadata.name = Some("aimed".into());
    w.metadata.uid = Some("aimed-uid".into());
    w.spec.get_or_insert_with(Default::default).node_selector =
        Some([("kubernetes.io/hostname".to_string(), "gpu-x86-01".to_string())].into());
    inputs.pods.push(Arc::new(w));
    let v7 = at(&inputs, &mut cache);
    assert!(!same(&v6, &v7, "gpu-x86-01") && same(&v6, &v7, "orin-nx-02"));

    // A node goes: its memo goes with it.
    inputs.nodes.remove(j);
    let v8 = at(&inputs, &mut cache);
    assert_eq!(cache.nodes(), v8.nodes.len());
}

/// A pod aimed at a node whose device plugin is down is told so, not to free a replica: that
/// node has no GPU to free.
#[test]
fn a_pod_aimed_at_a_node_without_its_device_plugin_is_pointed_at_the_plugin() {
    let v = edge();
    let about = |pod: &str| {
        v.diagnoses
            .iter()
            .find(|d| d.code == "insufficient-gpu" && d.name.starts_with(pod))
            .map(|d| d.message.clone())
            .unwrap_or_else(|| panic!("insufficient-gpu for {pod}"))
    };
    let reader = about("label-reader");
    assert!(reader.contains("xavier-nx-03") && reader.contains("device plugin"), "{reader}");
    assert!(!reader.contains("free a replica"), "{reader}");
    let other = about("anomaly-detector");
    assert!(other.contains("already held") && !other.contains("device plugin is missing"), "{other}");
    assert!(v.diagnoses.iter().any(|d| d.code == "device-plugin-missing" && d.name == "xavier-nx-03"));
}

#[test]
fn views_get_their_joins_from_the_derivation_links_node_problems_and_pending_problems() {
    let v = edge();
    let link = |code: &str, name: &str| {
        v.diagnoses.iter().find(|d| d.code == code && d.name.starts_with(name)).and_then(|d| d.link.clone())
    };
    assert_eq!(link("device-plugin-missing", "xavier-nx-03").as_deref(), Some("/nodes/xavier-nx-03"));
    assert_eq!(
        link("gpu-pod-without-runtimeclass", "ocr-model").as_deref(),
        Some("/nodes/orin-nx-02"),
        "a bound pod links to its node"
    );
    assert_eq!(
        link("insufficient-gpu", "anomaly-detector").as_deref(),
        Some("/pending#pod-vision-anomaly-detector-6f8d7b5c4-r7zq9"),
        "a pending pod links to its entry"
    );
    assert_eq!(link("runtimeclass-missing", "pose-estimator"), None, "a ReplicaSet is shown nowhere");
    let xavier = node(&v, "xavier-nx-03");
    let codes: Vec<&str> = xavier.problems.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, vec!["device-plugin-missing", "gpu-used-outside-scheduler"]);
    let p = v.pending.iter().find(|p| p.name.starts_with("anomaly-detector")).unwrap_or_else(|| panic!("pending"));
    assert_eq!(p.problems.iter().map(|d| d.code.as_str()).collect::<Vec<_>>(), vec!["insufficient-gpu"]);
    // One overcommit rule: the card's field and the diagnosis agree on every node.
    for n in &v.nodes {
        let diagnosed = v.diagnoses.iter().any(|d| d.code == "unified-memory-overcommit" && d.name == n.name);
        assert_eq!(n.memory.overcommit_bytes > 0, diagnosed, "{}", n.name);
    }
}

/// A diagnosis keeps the time it was first found while it holds, starts again once it has
/// cleared, and takes over history's time across a restart only when it still holds; a pod's
/// diagnosis names the node the pod is bound to.
#[test]
fn each_diagnosis_says_since_when_it_holds_and_on_which_node() {
    let text = gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or("");
    let inputs = load(text);
    let synced = || Source { mode: SourceMode::Demo, synced: true, ..Source::default() };
    let at = |s: i64| jiff::Timestamp::from_second(s).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let find = |v: &ClusterView, code: &str| -> gpudash_model::model::Diagnosis {
        v.diagnoses
            .iter()
            .find(|d| d.code.as_str() == code)
            .map(|d| gpudash_model::model::Diagnosis::clone(d))
            .unwrap_or_else(|| panic!("no {code}"))
    };
    let mut cache = Cache::default();
    // History had insufficient-gpu open since 1,000 s and a diagnosis that no longer holds.
    let pending = find(&edge(), "insufficient-gpu");
    cache.carry_since([
        (diag_key(&pending), ts(&at(1000))),
        (("gpu-node-down".into(), "Node".into(), String::new(), "gone".into()), ts(&at(900))),
    ]);
    let v1 = derive_cached(&inputs, &Options::default(), synced(), 1, at(5000), &mut cache);
    assert_eq!(find(&v1, "insufficient-gpu").since.as_deref(), Some("1970-01-01T00:16:40Z"), "carried over");
    let contention = find(&v1, "gpu-time-slice-contention");
    assert_eq!(contention.since.as_deref(), Some("1970-01-01T01:23:20Z"), "new: now");
    assert_eq!(contention.node.as_deref(), Some(contention.name.as_str()), "a node's diagnosis names it");
    let unbound = find(&v1, "gpu-pod-without-runtimeclass");
    assert!(unbound.node.as_deref().is_some_and(|n| !n.is_empty()), "a bound pod's node: {unbound:?}");
    assert_eq!(find(&v1, "insufficient-gpu").node, None, "a Pending pod has no node");
    // The pending pod's own copy says the same.
    let copy = v1.pending.iter().flat_map(|p| &p.problems).find(|d| d.code.as_str() == "insufficient-gpu");
    assert_eq!(copy.and_then(|d| d.since.as_deref()), Some("1970-01-01T00:16:40Z"));
    // … and is the list's own, not a copy (10,000 flood pods held 10,000 copies).
    let shared = |v: &ClusterView| {
        v.pending.iter().flat_map(|p| &p.problems).all(|d| v.diagnoses.iter().any(|l| Arc::ptr_eq(l, d)))
    };
    assert!(shared(&v1), "a pending pod's diagnosis is the list's Arc");
    // Later: unchanged while it holds.
    let v2 = derive_cached(&inputs, &Options::default(), synced(), 2, at(6000), &mut cache);
    assert_eq!(find(&v2, "gpu-time-slice-contention").since, contention.since);
    assert!(shared(&v2), "shared in a later revision too");
    // Cleared (no inputs), then found again: a new start.
    let _ = derive_cached(&Inputs::default(), &Options::default(), synced(), 3, at(7000), &mut cache);
    let v4 = derive_cached(&inputs, &Options::default(), synced(), 4, at(8000), &mut cache);
    assert_eq!(find(&v4, "insufficient-gpu").since.as_deref(), Some("1970-01-01T02:13:20Z"));
    assert_eq!(cache.since.open.len(), v4.diagnoses.len(), "only the open ones are kept");
}

/// Each pod's workload from its controller: a ReplicaSet's Deployment when the ReplicaSet is
/// known, the ReplicaSet itself when it is not, StatefulSets, Jobs and DaemonSets as they are.
#[test]
fn holders_and_pending_pods_name_their_workload() {
    let v = edge();
    let holder = |name: &str| {
        v.nodes
            .iter()
            .flat_map(|n| &n.gpu_resources)
            .flat_map(|g| &g.holders)
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no holder {name}"))
            .workload
            .clone()
    };
    assert_eq!(holder("yolo-detector-6c9f7d8b5-x2k4p").as_deref(), Some("Deployment/yolo-detector"));
    assert_eq!(holder("triton-server-0").as_deref(), Some("StatefulSet/triton-server"));
    assert_eq!(holder("batch-embed-1").as_deref(), Some("StatefulSet/batch-embed"));
    let pending = v.pending.iter().find(|p| p.name.starts_with("anomaly-detector")).and_then(|p| p.owner.clone());
    assert_eq!(pending.as_deref(), Some("Deployment/anomaly-detector"));
    let mem =
        |name: &str| v.nodes.iter().flat_map(|n| &n.pods).find(|p| p.name == name).and_then(|p| p.workload.clone());
    // coredns' ReplicaSet is not in the scenario: named as itself, not guessed.
    assert_eq!(mem("coredns-ccb96694c-7xq2m").as_deref(), Some("ReplicaSet/coredns-ccb96694c"));
    assert_eq!(
        mem("nvidia-device-plugin-daemonset-4jx8k").as_deref(),
        Some("DaemonSet/nvidia-device-plugin-daemonset")
    );
}

/// One change to the inputs, as the watchers would make it.
#[derive(Debug, Clone)]
enum Change {
    /// A pod changes (a new object: its resourceVersion and memory request moved).
    Touch(usize),
    /// A pod goes.
    Remove(usize),
    /// A pod that went comes back, bound to the `n`th node or (none) waiting.
    Return(usize, Option<usize>),
    /// A pod stops holding its resources (Failed) or is refused by the kubelet.
    Fail(usize, bool),
    /// The store hands the pods out in another order.
    Rotate(usize),
    /// A node is cordoned or uncordoned.
    Cordon(usize),
    /// A node goes, or comes back.
    ToggleNode(usize),
    /// A pod's memory use is measured.
    Measure(usize, u16),
    /// A DRA claim's pods go (reservedFor emptied) or one comes back.
    Reserve(usize),
}

fn change() -> impl proptest::strategy::Strategy<Value = Change> {
    use proptest::prelude::*;
    prop_oneof![
        any::<usize>().prop_map(Change::Touch),
        any::<usize>().prop_map(Change::Remove),
        (any::<usize>(), proptest::option::of(any::<usize>())).prop_map(|(a, b)| Change::Return(a, b)),
        (any::<usize>(), any::<bool>()).prop_map(|(a, b)| Change::Fail(a, b)),
        any::<usize>().prop_map(Change::Rotate),
        any::<usize>().prop_map(Change::Cordon),
        any::<usize>().prop_map(Change::ToggleNode),
        (any::<usize>(), any::<u16>()).prop_map(|(a, b)| Change::Measure(a, b)),
        any::<usize>().prop_map(Change::Reserve),
    ]
}

/// Applies a change; `gone` holds the pods and nodes taken out, to bring back.
fn apply(inputs: &mut Inputs, gone: &mut (Vec<Pod>, Vec<Arc<Node>>), c: &Change) {
    let pods = inputs.pods.len().max(1);
    match *c {
        Change::Touch(i) if !inputs.pods.is_empty() => {
            let mut p = (*inputs.pods[i % pods]).clone();
            p.metadata.resource_version = Some(format!("{i}"));
            if let Some(c) = p.spec.as_mut().and_then(|s| s.containers.first_mut()) {
                let req =
                    c.resources.get_or_insert_with(Default::default).requests.get_or_insert_with(Default::default);
                req.0.retain(|(k, _)| k != "memory");
                req.0.push(("memory".into(), K8sQuantity(format!("{}Mi", i % 4096))));
            }
            inputs.pods[i % pods] = Arc::new(p);
        }
        Change::Remove(i) if !inputs.pods.is_empty() => gone.0.push((*inputs.pods.remove(i % pods)).clone()),
        Change::Return(i, node) if !gone.0.is_empty() => {
            let n = gone.0.len();
            let mut p = gone.0.remove(i % n);
            let to = node.and_then(|k| inputs.nodes.get(k % inputs.nodes.len().max(1)));
            let spec = p.spec.get_or_insert_with(Default::default);
            spec.node_name = to.and_then(|n| n.metadata.name.clone());
            let st = p.status.get_or_insert_with(Default::default);
            st.phase = Some(if to.is_some() { "Running" } else { "Pending" }.into());
            inputs.pods.insert(i % (inputs.pods.len() + 1), Arc::new(p));
        }
        Change::Fail(i, refused) if !inputs.pods.is_empty() => {
            let mut p = (*inputs.pods[i % pods]).clone();
            let st = p.status.get_or_insert_with(Default::default);
            st.phase = Some("Failed".into());
            if refused {
                st.reason = Some("UnexpectedAdmissionError".into());
                st.message = Some("Allocate failed: request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1".into());
            }
            inputs.pods[i % pods] = Arc::new(p);
        }
        Change::Rotate(i) => {
            let k = (i % pods).min(inputs.pods.len());
            inputs.pods.rotate_left(k);
        }
        Change::Cordon(i) if !inputs.nodes.is_empty() => {
            let k = i % inputs.nodes.len();
            let mut n = (*inputs.nodes[k]).clone();
            let spec = n.spec.get_or_insert_with(Default::default);
            spec.unschedulable = Some(!spec.unschedulable.unwrap_or(false));
            inputs.nodes[k] = Arc::new(n);
        }
        Change::ToggleNode(i) => match gone.1.pop() {
            Some(n) => inputs.nodes.push(n),
            None if !inputs.nodes.is_empty() => {
                let k = i % inputs.nodes.len();
                gone.1.push(inputs.nodes.remove(k));
            }
            None => {}
        },
        Change::Measure(i, mib) if !inputs.pods.is_empty() => {
            let p = &inputs.pods[i % pods];
            let mut m = PodMetrics::default();
            m.metadata.namespace = p.metadata.namespace.clone();
            m.metadata.name = p.metadata.name.clone();
            m.containers = vec![ContainerMetrics {
                name: "c".into(),
                usage: [("memory".to_string(), K8sQuantity(format!("{mib}Mi")))].into(),
            }];
            let all = Arc::make_mut(inputs.pod_metrics.get_or_insert_with(Arc::default));
            all.retain(|o| (&o.metadata.namespace, &o.metadata.name) != (&m.metadata.namespace, &m.metadata.name));
            all.push(m);
        }
        Change::Reserve(i) if !inputs.claims.is_empty() => {
            let k = i % inputs.claims.len();
            let mut c = (*inputs.claims[k]).clone();
            if let Some(st) = c.status.as_mut() {
                if st.reserved_for.is_empty() {
                    let name = inputs.pods.get(i % pods).and_then(|p| p.metadata.name.clone()).unwrap_or_default();
                    st.reserved_for.push(crate::dra::Consumer { resource: "pods".into(), name });
                } else {
                    st.reserved_for.clear();
                }
            }
            inputs.claims[k] = Arc::new(c);
        }
        _ => {}
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Incremental and whole derivation agree after any sequence of changes, on scenarios that
    /// between them raise every node, pod, DRA and quota diagnosis: equal views, and the delta
    /// the live stream would send from the last view gives the new one.
    #[test]
    fn the_incremental_derivation_equals_the_whole_one(
        scenario in 0usize..5,
        changes in proptest::collection::vec(change(), 1..40),
    ) {
        let text = match scenario {
            0 => gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or("").to_string(),
            1 => scenario_text("diagnoses.yaml"),
            2 => scenario_text("dra/whole-mig-shared-unreserved.yaml"),
            3 => scenario_text("quota/deployment-blocked.yaml"),
            _ => scenario_text("onsite/plugin-crashloop.yaml"),
        };
        let mut inputs = load(&text);
        let opts = Options::default();
        let source = Source { synced: true, ..Source::default() };
        let at = |k: i64| jiff::Timestamp::from_second(1_800_000_000 + k).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let mut cache = Cache::default();
        let mut gone = (Vec::new(), Vec::new());
        let split = super::fork::Backwards;
        let mut last = super::derive_forked(&inputs, &opts, source.clone(), 0, at(0), &mut cache, &split);
        for (k, c) in changes.iter().enumerate() {
            apply(&mut inputs, &mut gone, c);
            let r = u64::try_from(k + 1).unwrap_or(u64::MAX);
            let t = at(i64::try_from(k + 1).unwrap_or(0));
            // Split wherever it can be, the second half first: the same view.
            let cached = super::derive_forked(&inputs, &opts, source.clone(), r, t, &mut cache, &split);
            // A fresh derivation knows no history: it is given the since times the cache kept.
            let mut fresh = Cache::default();
            fresh.carry_since(last.diagnoses.iter().filter_map(|d| Some((diag_key(d), d.since.clone()?))));
            let whole = derive_cached(&inputs, &opts, source.clone(), r, t, &mut fresh);
            proptest::prop_assert_eq!(&cached, &whole, "after {:?}", &changes[..=k]);
            let mut moved = last.clone();
            proptest::prop_assert!(gpudash_model::model::ViewDelta::between(&last, &cached).apply(&mut moved));
            proptest::prop_assert_eq!(&moved, &whole);
            last = cached;
        }
    }
}

/// The split of slices and claims kept between revisions equals a fresh one after claims come,
/// go, change and move in the store's order.
#[test]
fn the_kept_dra_split_equals_a_fresh_one() {
    let mut inputs = load(&scenario_text("dra/whole-mig-shared-unreserved.yaml"));
    assert!(inputs.claims.len() >= 3 && !inputs.slices.is_empty());
    let mut split = dra::Split::default();
    let mut gone = Vec::new();
    for step in 0..16 {
        match step % 4 {
            0 => gone.push(inputs.claims.remove(step % inputs.claims.len())),
            1 => inputs.claims.extend(gone.pop()),
            2 => inputs.claims.rotate_left(1),
            _ => {
                let k = step % inputs.claims.len();
                inputs.claims[k] = Arc::new((*inputs.claims[k]).clone());
            }
        }
        let kept = split.update(&inputs.slices, &inputs.claims);
        let fresh = dra::by_node(&inputs.slices, &inputs.claims);
        assert_eq!(kept.len(), fresh.len(), "step {step}");
        for (node, d) in &fresh {
            assert!(kept.get(*node).is_some_and(|k| k.same(d)), "step {step}: {node} differs");
        }
    }
}

#[test]
fn a_view_written_in_english_is_plain_json_and_in_japanese_differs_only_in_its_sentences() {
    let v = edge();
    let plain = serde_json::to_string(&v).unwrap();
    assert_eq!(gpudash_model::i18n::to_json(gpudash_model::i18n::Lang::En, &v).unwrap(), plain);
    let cards = serde_json::to_string(&gpudash_model::model::WithCards(&v)).unwrap();
    assert_eq!(
        gpudash_model::i18n::to_json(gpudash_model::i18n::Lang::En, &gpudash_model::model::WithCards(&v)).unwrap(),
        cards
    );
    let ja: serde_json::Value =
        serde_json::from_str(&gpudash_model::i18n::to_json(gpudash_model::i18n::Lang::Ja, &v).unwrap()).unwrap();
    let en: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert_ne!(ja, en);
    assert_eq!(ja["nodes"].as_array().map(Vec::len), en["nodes"].as_array().map(Vec::len));
    let said = |x: &serde_json::Value| {
        x["diagnoses"].as_array().map(|d| d.iter().map(|d| d["message"].clone()).collect::<Vec<_>>())
    };
    let (je, ee) = (said(&ja).unwrap_or_default(), said(&en).unwrap_or_default());
    assert_eq!(je.len(), ee.len());
    assert!(je.iter().zip(&ee).any(|(j, e)| j != e), "the diagnoses are written in Japanese");
    assert_eq!(ja["revision"], en["revision"]);
}
