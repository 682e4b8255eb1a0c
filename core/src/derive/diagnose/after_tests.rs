//! What the node decided after binding (`tests/scenarios/after/*.yaml`), each case derived
//! alone at a fixed time: the codes raised, what they say, and that Failed pods hold nothing.

use gpudash_model::i18n::{Lang, Say};
use gpudash_model::model::{ClusterView, Diagnosis, Severity, Source};

use crate::derive::tests::{load, scenario_text};
use crate::derive::{derive, Options};

/// A file under `tests/scenarios/after/`, derived at 2026-11-30T12:00:00Z.
fn after(file: &str) -> ClusterView {
    at(file, "2026-11-30T12:00:00Z")
}

fn at(file: &str, now: &str) -> ClusterView {
    let now = now.parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    derive(&load(&scenario_text(&format!("after/{file}"))), &Options::default(), Source::default(), 1, now)
}

fn all<'a>(v: &'a ClusterView, code: &str) -> Vec<&'a Diagnosis> {
    v.diagnoses.iter().filter(|d| d.code == code).map(AsRef::as_ref).collect()
}

fn one<'a>(v: &'a ClusterView, code: &str) -> &'a Diagnosis {
    let found = all(v, code);
    assert_eq!(found.len(), 1, "{code}: {:#?}", v.diagnoses);
    found[0]
}

/// The sentence in both languages, each said whole (no placeholder left, no English clause in
/// the Japanese beyond names and the kubelet's quoted words).
fn both(d: &Diagnosis) -> (String, String) {
    let (en, ja) = (d.message.say(Lang::En).to_string(), d.message.say(Lang::Ja).to_string());
    for s in [&en, &ja] {
        assert!(!s.contains('{') || s.contains("{\"metadata"), "a placeholder left: {s}");
    }
    assert_ne!(en, ja);
    (en, ja)
}

#[test]
fn a_workloads_pods_refused_at_admission_are_one_diagnosis_with_a_count_and_hold_nothing() {
    let v = after("admission-rejected.yaml");
    let refused = all(&v, "gpu-admission-rejected");
    assert_eq!(refused.len(), 2, "{:#?}", v.diagnoses);
    let rs = refused.iter().find(|d| d.name == "seam-checker-7b6c5d4e3").expect("the ReplicaSet's");
    assert_eq!(
        (rs.kind.as_str(), rs.severity, rs.node.as_deref()),
        ("ReplicaSet", Severity::Critical, Some("orin-agx-full"))
    );
    let (en, ja) = both(rs);
    assert!(
        en.starts_with(
            "3 GPU pod(s) of ReplicaSet vision/seam-checker-7b6c5d4e3 refused by the kubelet on orin-agx-full"
        ),
        "{en}"
    );
    assert!(
        en.contains("OutOfnvidia.com/gpu: \"Pod was rejected: Node didn't have enough resource: nvidia.com/gpu"),
        "{en}"
    );
    assert!(en.contains("every nvidia.com/gpu there (1) is held, by vision/weld-inspector-5d8f7c6b9-q2w3e"), "{en}");
    assert!(en.contains("spec.nodeName bypasses the scheduler"), "{en}");
    assert!(ja.contains("アドミッションで拒否"), "{ja}");
    let bare = refused.iter().find(|d| d.name == "label-reader").expect("the bare pod's");
    let (en, _) = both(bare);
    assert!(en.contains("UnexpectedAdmissionError") && en.contains("the node offers no nvidia.com/gpu now"), "{en}");
    // Failed pods are no holders: the one running model alone holds the board's GPU.
    let full = v.nodes.iter().find(|n| n.name == "orin-agx-full").expect("node");
    let g = &full.gpu_resources[0];
    assert_eq!((g.allocated, g.holders.len()), (1, 1));
    // The node's card shows the refusal.
    assert!(full.problems.iter().any(|d| d.code == "gpu-admission-rejected"), "{:?}", full.problems);
}

#[test]
fn a_model_oom_killed_on_a_unified_memory_board_is_told_its_limit_must_cover_gpu_memory() {
    let v = after("orin-nano-oom.yaml");
    let d = one(&v, "gpu-model-oom-killed");
    assert_eq!((d.kind.as_str(), d.name.as_str(), d.severity), ("Pod", "llm-chat-6c5b4a39d-x8y9z", Severity::Critical));
    let (en, ja) = both(d);
    assert!(
        en.starts_with(
            "Container llm of assist/llm-chat-6c5b4a39d-x8y9z was killed for memory (OOMKilled, exit 137) 6 time(s)"
        ),
        "{en}"
    );
    assert!(
        en.contains("the last at 2026-11-30T11:53:02Z") && en.contains("crash-loops now (CrashLoopBackOff)"),
        "{en}"
    );
    assert!(en.contains("orin-nano-01 is a unified-memory board") && en.contains("memory limit of 4.0 GiB"), "{en}");
    assert!(en.contains("cover the model's GPU memory"), "{en}");
    assert!(ja.contains("OOMKilled") && ja.contains("ユニファイドメモリー"), "{ja}");
    // It holds its GPU (it is Running, between restarts) and the card says so.
    let n = &v.nodes[0];
    assert_eq!(n.gpu_resources[0].allocated, 1);
    assert!(n.problems.iter().any(|p| p.code == "gpu-model-oom-killed"));
    // A container state it no longer has is no diagnosis.
    let clean = scenario_text("after/orin-nano-oom.yaml").replace("OOMKilled", "Completed");
    let v = derive(
        &load(&clean),
        &Options::default(),
        Source::default(),
        1,
        "2026-11-30T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    );
    assert!(all(&v, "gpu-model-oom-killed").is_empty());
}

#[test]
fn an_eviction_is_named_and_the_replacement_is_never_told_a_free_gpu_is_held() {
    let v = after("evicted-memory-pressure.yaml");
    let d = one(&v, "gpu-pod-evicted");
    assert_eq!(
        (d.kind.as_str(), d.name.as_str(), d.node.as_deref()),
        ("ReplicaSet", "asr-whisper-5f4e3d2c1", Some("orin-agx-press"))
    );
    let (en, _) = both(d);
    assert!(en.contains("\"The node was low on resource: memory. Threshold quantity: 100Mi"), "{en}");
    assert!(
        en.contains(
            "the node reports MemoryPressure now, and its taint node.kubernetes.io/memory-pressure keeps new pods off"
        ),
        "{en}"
    );
    // The replacement waits: a unit is free on the pressured board, and it is told why it
    // cannot go there — not that every unit is held.
    let p = v.pending.iter().find(|p| p.name == "asr-whisper-5f4e3d2c1-p0o9i").expect("replacement");
    let told = p.problems.iter().find(|d| d.code == "insufficient-gpu").expect("insufficient-gpu");
    let en = told.message.say(Lang::En);
    assert!(en.contains("a unit is free on orin-agx-press, but the scheduler keeps the pod off that node"), "{en}");
    assert!(en.contains("MemoryPressure") && !en.contains("already held"), "{en}");
    // The evicted pod holds nothing.
    let press = v.nodes.iter().find(|n| n.name == "orin-agx-press").expect("node");
    assert_eq!(press.gpu_resources[0].allocated, 0);
}

#[test]
fn a_preempted_model_names_the_preemptor_and_its_class_and_the_replacement_points_to_it() {
    let v = after("preempted.yaml");
    let d = one(&v, "gpu-preempted");
    assert_eq!(
        (d.name.as_str(), d.severity, d.node.as_deref()),
        ("shelf-counter-6b5a4c3d2-a1s2d", Severity::Warning, Some("orin-agx-line2"))
    );
    let (en, ja) = both(d);
    assert!(en.starts_with("Preempted on orin-agx-line2 at 2026-11-30T11:30:01.204311Z by safety/safety-zone-7a6b5c4d3-z1x2c (PriorityClass line-critical)"), "{en}");
    assert!(ja.contains("プリエンプト"), "{ja}");
    let p = v.pending.iter().find(|p| p.name == "shelf-counter-6b5a4c3d2-q7w8e").expect("replacement");
    assert!(p.diagnoses.contains(&"gpu-preempted".into()), "{:?}", p.diagnoses);
    assert!(p.problems.iter().any(|d| d.code == "gpu-preempted"));
    // An hour later the event is old news.
    let later = at("preempted.yaml", "2026-11-30T12:31:00Z");
    assert!(all(&later, "gpu-preempted").is_empty());
}

#[test]
fn a_holder_that_never_starts_is_named_with_its_reason_and_the_waiting_pod_points_to_it() {
    let v = after("holder-never-starts.yaml");
    let d = one(&v, "gpu-held-not-running");
    assert_eq!(
        (d.name.as_str(), d.severity, d.node.as_deref()),
        ("pallet-reader-7d6c5b4a3-u8i9o", Severity::Critical, Some("orin-nx-dock"))
    );
    let (en, ja) = both(d);
    assert!(en.starts_with("logistics/pallet-reader-7d6c5b4a3-u8i9o holds 1 nvidia.com/gpu on orin-nx-dock but has not run for 3 h 4 min: container reader is ImagePullBackOff"), "{en}");
    assert!(en.contains("while 1 pod(s) wait for nvidia.com/gpu"), "{en}");
    assert!(en.contains("The image's manifest has no linux/arm64 entry"), "{en}");
    assert!(ja.contains("3 時間 4 分間動いていません"), "{ja}");
    let p = v.pending.iter().find(|p| p.name == "forklift-guard-5c4b3a2d1-m1n2b").expect("waiting pod");
    let told = p.problems.iter().find(|d| d.code == "insufficient-gpu").expect("insufficient-gpu");
    let en = told.message.say(Lang::En);
    assert!(en.contains("logistics/pallet-reader-7d6c5b4a3-u8i9o holds one on orin-nx-dock without running for 3 h 4 min (ImagePullBackOff)"), "{en}");
    assert!(p.problems.iter().any(|d| d.code == "gpu-held-not-running"), "{:?}", p.diagnoses);
    assert!(v.nodes[0].problems.iter().any(|d| d.code == "gpu-held-not-running"), "on the node card");
    // Nine minutes after it started it is not yet a problem; with nothing waiting, a warning.
    assert!(all(&at("holder-never-starts.yaml", "2026-11-30T09:04:00Z"), "gpu-held-not-running").is_empty());
    let alone = scenario_text("after/holder-never-starts.yaml");
    let alone =
        &alone[..alone.find("- apiVersion: v1\n  kind: Pod\n  metadata: {name: forklift").expect("waiting pod")];
    let v = derive(
        &load(alone),
        &Options::default(),
        Source::default(),
        1,
        "2026-11-30T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    );
    assert_eq!(one(&v, "gpu-held-not-running").severity, Severity::Warning);
}

#[test]
fn an_exec_format_error_is_told_as_an_image_for_another_architecture() {
    // The runtime's words when an amd64 binary starts on arm64 (rancher/rancher#32340:
    // "exec user process caused: exec format error"), then the crash loop.
    let text = scenario_text("after/holder-never-starts.yaml").replace(
        "state: {waiting: {reason: ImagePullBackOff,",
        "lastState: {terminated: {reason: Error, exitCode: 1, message: \"exec /usr/bin/reader: exec format error\"}}\n      state: {waiting: {reason: CrashLoopBackOff,",
    );
    let v = derive(
        &load(&text),
        &Options::default(),
        Source::default(),
        1,
        "2026-11-30T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    );
    let (en, _) = both(one(&v, "gpu-held-not-running"));
    assert!(
        en.contains("container reader is CrashLoopBackOff")
            && en.contains("no build for this node's architecture (arm64)"),
        "{en}"
    );
}

/// The scenario's first pod of `name` with its `status:` block replaced by `status`.
fn with_status(file: &str, name: &str, status: &str) -> String {
    let text = scenario_text(&format!("after/{file}"));
    let at = text.find(&format!("metadata: {{name: {name},")).unwrap_or_else(|| panic!("{name} in {file}"));
    let from = at + text[at..].find("  status:").unwrap_or_else(|| panic!("status of {name}"));
    let to = text[from..].find("\n- apiVersion").map_or(text.len(), |i| from + i + 1);
    format!("{}  status: {status}\n{}", &text[..from], &text[to..])
}

fn said_at(text: &str, code: &str, name: &str) -> String {
    let v = derive(
        &load(text),
        &Options::default(),
        Source::default(),
        1,
        "2026-11-30T12:00:00Z".parse().unwrap_or_default(),
    );
    v.diagnoses
        .iter()
        .find(|d| d.code == code && d.name == name)
        .map(|d| d.message.say(Lang::En).to_string())
        .unwrap_or_else(|| panic!("no {code} for {name}: {:#?}", v.diagnoses))
}

#[test]
fn each_code_is_raised_on_the_words_public_reports_show() {
    // Refusals at admission, as the kubelet and device plugins wrote them: kubernetes#125579 (a
    // reboot, the plugin not yet healthy), NVIDIA/k8s-device-plugin#231 (a lost GPU, a
    // Deployment piling up Failed pods), Project-HAMi/HAMi#71 (the plugin's socket gone).
    for message in [
        "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices GPU-0f3a, which is unexpected",
        "Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = Unable to retrieve list of available devices: error creating nvml.Device 3: nvml: GPU is lost, which is unexpected",
        "Pod was rejected: Allocate failed due to rpc error: code = Unavailable desc = error reading from server: EOF, which is unexpected",
    ] {
        let status = format!("{{phase: Failed, reason: UnexpectedAdmissionError, message: \"{message}\"}}");
        let m = said_at(&with_status("admission-rejected.yaml", "label-reader", &status), "gpu-admission-rejected", "label-reader");
        assert!(m.contains(message) || m.contains(&message[..200]), "{m}");
    }
    // Evictions in the kubelet's other words (pkg/kubelet/eviction/helpers.go, 1.36.3; the
    // emptyDir one as the real kubelet of tests/tests/real_node.rs wrote it): local storage,
    // told as such — never the memory advice.
    for message in [
        "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. ",
        "Container whisper exceeded its local ephemeral storage limit \\\"2Gi\\\". ",
        "The node had condition: [DiskPressure]. ",
        "Usage of EmptyDir volume \\\"scratch\\\" exceeds the limit \\\"4Mi\\\". ",
    ] {
        let status = format!("{{phase: Failed, reason: Evicted, message: \"{message}\"}}");
        let m = said_at(
            &with_status("evicted-memory-pressure.yaml", "asr-whisper-5f4e3d2c1-k9l8m", &status),
            "gpu-pod-evicted",
            "asr-whisper-5f4e3d2c1",
        );
        assert!(m.contains(message.trim().replace("\\\"", "\"").as_str()), "{m}");
        assert!(
            m.contains("for local storage") && m.contains("ephemeral-storage limit") && !m.contains("memory"),
            "{m}"
        );
    }
    // A Job's model killed for memory with restartPolicy Never: terminated now, the pod Failed
    // (no reason of its own), still told.
    let job = "{phase: Failed, startTime: \"2026-11-30T10:02:01Z\", containerStatuses: [{name: llm, ready: false, restartCount: 0, \
        state: {terminated: {reason: OOMKilled, exitCode: 137, finishedAt: \"2026-11-30T11:00:00Z\"}}}]}";
    let m = said_at(
        &with_status("orin-nano-oom.yaml", "llm-chat-6c5b4a39d-x8y9z", job),
        "gpu-model-oom-killed",
        "llm-chat-6c5b4a39d-x8y9z",
    );
    assert!(
        m.contains("(OOMKilled, exit 137) 1 time(s), the last at 2026-11-30T11:00:00Z") && !m.contains("crash-loops"),
        "{m}"
    );
    // A holder that cannot start for other reasons: a missing Secret key (pkg/kubelet's words),
    // and a bound pod whose containers the kubelet never started.
    let config = "{phase: Pending, startTime: \"2026-11-30T08:55:01Z\", containerStatuses: [{name: reader, ready: false, restartCount: 0, \
        state: {waiting: {reason: CreateContainerConfigError, message: \"couldn't find key token in Secret logistics/registry-cred\"}}}]}";
    let m = said_at(
        &with_status("holder-never-starts.yaml", "pallet-reader-7d6c5b4a3-u8i9o", config),
        "gpu-held-not-running",
        "pallet-reader-7d6c5b4a3-u8i9o",
    );
    assert!(
        m.contains("CreateContainerConfigError") && m.contains("kubectl describe pod -n logistics pallet-reader"),
        "{m}"
    );
    let bare = "{phase: Pending, startTime: \"2026-11-30T08:55:01Z\"}";
    let m = said_at(
        &with_status("holder-never-starts.yaml", "pallet-reader-7d6c5b4a3-u8i9o", bare),
        "gpu-held-not-running",
        "pallet-reader-7d6c5b4a3-u8i9o",
    );
    assert!(
        m.contains("the kubelet has not started its containers") && m.contains("container runtime on orin-nx-dock"),
        "{m}"
    );
    // A preemption as schedulers before 1.27 wrote it (namespace/name in the message, no
    // `related`), and as 1.36 writes it without `related` (the preemptor found by its UID).
    let text = scenario_text("after/preempted.yaml");
    let related = "  related: {apiVersion: v1, kind: Pod, name: safety-zone-7a6b5c4d3-z1x2c, namespace: safety, uid: 6a1e9b2c-3d4e-4f50-8a1b-2c3d4e5f6a7b}\n";
    let by_uid = text.replace(related, "");
    let old = by_uid.replace(
        "Preempted by pod 6a1e9b2c-3d4e-4f50-8a1b-2c3d4e5f6a7b on node orin-agx-line2",
        "Preempted by safety/safety-zone-7a6b5c4d3-z1x2c on node orin-agx-line2",
    );
    for t in [by_uid, old] {
        let m = said_at(&t, "gpu-preempted", "shelf-counter-6b5a4c3d2-a1s2d");
        assert!(m.contains("by safety/safety-zone-7a6b5c4d3-z1x2c (PriorityClass line-critical)"), "{m}");
    }
}

/// A real kubelet (v1.36.3, tests/tests/real_node.rs, two runs in three) left a pod it evicted
/// for its emptyDir in phase Succeeded with no reason or message: its container exited 0 on
/// SIGTERM. The kubelet's Warning `Evicted` event is then all that names the eviction, and it
/// is enough.
#[test]
fn an_evicted_pod_that_ended_succeeded_is_named_from_the_kubelets_event() {
    let status = "{phase: Succeeded, startTime: \"2026-11-30T09:10:05Z\", containerStatuses: [{name: whisper, ready: false, \
        restartCount: 0, state: {terminated: {reason: Completed, exitCode: 0, finishedAt: \"2026-11-30T11:40:10Z\"}}}]}";
    let mut text = with_status("evicted-memory-pressure.yaml", "asr-whisper-5f4e3d2c1-k9l8m", status);
    text.push_str(
        "- apiVersion: v1
  kind: Event
  metadata: {name: asr-whisper-5f4e3d2c1-k9l8m.187ea1b2c3d4e5f6, namespace: voice, creationTimestamp: \"2026-11-30T11:40:05Z\"}
  involvedObject: {apiVersion: v1, kind: Pod, name: asr-whisper-5f4e3d2c1-k9l8m, namespace: voice}
  reason: Evicted
  message: 'Usage of EmptyDir volume \"scratch\" exceeds the limit \"4Mi\". '
  type: Warning
  source: {component: kubelet, host: orin-agx-press}
  firstTimestamp: \"2026-11-30T11:40:05Z\"
  lastTimestamp: \"2026-11-30T11:40:05Z\"
",
    );
    let m = said_at(&text, "gpu-pod-evicted", "asr-whisper-5f4e3d2c1");
    assert!(
        m.contains("for local storage: \"Usage of EmptyDir volume \"scratch\" exceeds the limit \"4Mi\".\""),
        "{m}"
    );
    // Without the event, an ended pod is no eviction.
    let quiet = with_status("evicted-memory-pressure.yaml", "asr-whisper-5f4e3d2c1-k9l8m", status);
    let v = derive(
        &load(&quiet),
        &Options::default(),
        Source::default(),
        1,
        "2026-11-30T12:00:00Z".parse().unwrap_or_default(),
    );
    assert!(all(&v, "gpu-pod-evicted").is_empty(), "{:?}", v.diagnoses);
}
