//! The what-if check against the simulator's edge scenario (the same objects the demo serves).

use gpudash_model::model::FitInput;

use super::workload::{from_form, from_yaml};
use super::*;
use crate::derive::node as dnode;
use crate::derive::tests::load;

fn edge() -> Inputs {
    load(gpudash_sim::DEMO_SCENARIO.split("kind: Timeline").next().unwrap_or(""))
}

fn unified(n: &Node) -> bool {
    dnode::unified_memory(n, false)
}

fn run(yaml: &str) -> FitResult {
    let w = from_yaml(yaml).unwrap();
    fit(&edge(), &w, &unified)
}

fn node<'a>(r: &'a FitResult, name: &str) -> &'a NodeFit {
    r.nodes.iter().find(|n| n.node == name).unwrap_or_else(|| panic!("{name}"))
}

const SECOND_MODEL: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: second-model, namespace: vision}
spec:
  runtimeClassName: nvidia
  nodeSelector: {factory.example.com/line: press-3}
  containers:
  - name: m
    image: registry.factory.local/vision/second:1.0
    resources: {limits: {nvidia.com/gpu: "1", memory: 2Gi}, requests: {memory: 1Gi}}
"#;

#[test]
fn the_second_model_on_the_orin_nano_does_not_fit_and_would_with_two_replicas() {
    let r = run(SECOND_MODEL);
    assert_eq!(
        r.summary,
        "0/8 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint(s), \
         6 node(s) didn't match Pod's node affinity/selector."
    );
    assert_eq!(node(&r, "orin-nano-01").reasons, vec!["Insufficient nvidia.com/gpu"]);
    assert!(
        r.suggestions.iter().any(|s| s
            == "node orin-nano-01 would fit with time-slicing replicas ≥ 2 (the models would share the GPU's compute \
        and memory, without isolation)"),
        "{:?}",
        r.suggestions
    );
    assert_eq!(r.placeable, 0);
    let h = node(&r, "orin-nano-01").headroom.clone().unwrap_or_default();
    assert!(h.board_bytes > 7 << 30);
}

#[test]
fn taints_need_tolerations() {
    let base = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}], "nodeSelector": {"kubernetes.io/hostname": "k3s-server-01"}TOL}}"#;
    let r = run(&base.replace("TOL", ""));
    assert_eq!(node(&r, "k3s-server-01").reasons, vec![TAINT]);
    assert!(
        r.summary.starts_with("0/8 nodes are available: 1 node(s) had untolerated taint(s), 7 node(s) didn't match"),
        "{}",
        r.summary
    );
    for tol in [
        r#"{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}"#,
        r#"{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}"#,
        r#"{"operator": "Exists"}"#,
    ] {
        let r = run(&base.replace("TOL", &format!(r#", "tolerations": [{tol}]"#)));
        assert!(node(&r, "k3s-server-01").fits, "{tol}: {:?}", node(&r, "k3s-server-01"));
    }
    let wrong_effect = run(&base.replace("TOL", r#", "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoExecute"}]"#));
    assert!(!node(&wrong_effect, "k3s-server-01").fits);
    let form = FitInput {
        cpu_request: "100m".into(),
        tolerations: "node-role.kubernetes.io/control-plane:NoSchedule".into(),
        node_selector: "kubernetes.io/hostname=k3s-server-01".into(),
        ..FitInput::default()
    };
    assert!(node(&fit(&edge(), &from_form(&form).unwrap(), &unified), "k3s-server-01").fits);
}

fn affinity(expr: &str) -> Vec<String> {
    let yaml = format!(
        r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "x"}}, "spec": {{"containers": [{{"name": "c", "resources": {{"requests": {{"cpu": "10m"}}}}}}],
        "tolerations": [{{"operator": "Exists"}}],
        "affinity": {{"nodeAffinity": {{"requiredDuringSchedulingIgnoredDuringExecution": {{"nodeSelectorTerms": [{expr}]}}}}}}}}}}"#
    );
    run(&yaml).nodes.into_iter().filter(|n| n.fits).map(|n| n.node).collect()
}

#[test]
fn node_affinity_supports_every_operator() {
    let e =
        |k: &str, op: &str, v: &str| format!(r#"{{"matchExpressions": [{{"key": "{k}", "operator": "{op}"{v}}}]}}"#);
    assert_eq!(
        affinity(&e("kubernetes.io/arch", "In", r#", "values": ["amd64"]"#)),
        vec!["gpu-dra-01", "gpu-x86-01", "gpu-x86-02", "k3s-server-01"]
    );
    assert_eq!(
        affinity(&e("kubernetes.io/arch", "NotIn", r#", "values": ["amd64"]"#)),
        vec!["orin-agx-01", "orin-nano-01", "orin-nx-02", "xavier-nx-03"]
    );
    assert_eq!(affinity(&e("nvidia.com/mig.strategy", "Exists", "")), vec!["gpu-x86-01"]);
    assert_eq!(affinity(&e("nvidia.com/gpu.present", "DoesNotExist", "")), vec!["k3s-server-01", "xavier-nx-03"]);
    assert_eq!(
        affinity(&e("nvidia.com/gpu.replicas", "Gt", r#", "values": ["1"]"#)),
        vec!["gpu-x86-02", "orin-agx-01", "orin-nx-02"]
    );
    assert_eq!(
        affinity(&e("nvidia.com/gpu.replicas", "Lt", r#", "values": ["2"]"#)),
        vec!["gpu-x86-01", "orin-nano-01"]
    );
    // Terms are OR'd; matchFields on metadata.name.
    let two = format!(
        "{}, {}",
        e("kubernetes.io/hostname", "In", r#", "values": ["orin-nano-01"]"#),
        r#"{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["xavier-nx-03"]}]}"#
    );
    assert_eq!(affinity(&two), vec!["orin-nano-01", "xavier-nx-03"]);
}

#[test]
fn unified_memory_headroom_counts_requests_and_limits_against_the_board() {
    let yaml = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"nodeSelector": {"kubernetes.io/hostname": "orin-agx-01"}, "containers": [{"name": "c", "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "4Gi"}}}]}}"#;
    let r = run(yaml);
    let agx = node(&r, "orin-agx-01");
    assert!(agx.fits);
    let h = agx.headroom.clone().unwrap_or_default();
    let board = 64_335_836i64 * 1024;
    assert_eq!(h.board_bytes as i64, board);
    assert_eq!(h.after_requests_bytes, board - (24 << 30) - (2 << 30));
    assert_eq!(h.after_limits_bytes, board - (33 << 30) - (4 << 30));
    assert!(node(&r, "gpu-x86-01").headroom.is_none(), "discrete-GPU servers have no unified headroom");
    assert_eq!(h.board_free_bytes, None, "no agent: nothing measured, nothing said");
    // With the board's agent: what tegrastats says is really free, beside what requests say.
    let mut inputs = edge();
    let report = r#"{"version":1,"node":"orin-agx-01","generated_at":0,
      "tegrastats":{"value":{"ram_used_bytes":42949672960,"ram_total_bytes":65851621376},"seen_at":0,"error":null}}"#;
    inputs.agents = vec![std::sync::Arc::new(crate::agent::AgentSeen {
        node: "orin-agx-01".into(),
        pod: "gpudash/gpudash-agent-orin-agx-01".into(),
        report: crate::agent::parse(report.as_bytes()).ok(),
        last_ok: None,
        error: None,
    })];
    let w = from_yaml(yaml).unwrap();
    let measured = fit(&inputs, &w, &unified);
    let h = node(&measured, "orin-agx-01").headroom.clone().unwrap_or_default();
    assert_eq!(h.board_free_bytes, Some(65_851_621_376 - 42_949_672_960));
    // On the Orin NX the limits already exceed the board: suggest a limit that keeps it whole.
    let nx = run(&yaml.replace("orin-agx-01", "orin-nx-02"));
    assert!(node(&nx, "orin-nx-02").headroom.as_ref().is_some_and(|h| h.after_limits_bytes < 0));
    assert!(
        nx.suggestions
            .iter()
            .any(|s| s.starts_with("fits on orin-nx-02, but the memory limits of the pods already there exceed")),
        "{:?}",
        nx.suggestions
    );
    // On the AGX a 40 GiB limit would overcommit: the suggestion names the largest safe limit.
    let big = run(&yaml.replace("4Gi", "40Gi"));
    assert!(
        big.suggestions.iter().any(|s| s.starts_with("fits on orin-agx-01 if the memory limit is ≤ 28.4 GiB")),
        "{:?}",
        big.suggestions
    );
}

#[test]
fn a_missing_runtime_class_is_reported_as_the_api_would() {
    let r = run(&SECOND_MODEL.replace("runtimeClassName: nvidia", "runtimeClassName: nvidia-legacy"));
    assert_eq!(r.summary, "pod rejected: RuntimeClass \"nvidia-legacy\" not found");
    assert!(
        r.suggestions[0].starts_with(
            "missing RuntimeClass nvidia-legacy on this cluster (it has: nvidia, nvidia-cdi, nvidia-experimental)"
        ),
        "{:?}",
        r.suggestions
    );
}

#[test]
fn replicas_are_counted_across_nodes() {
    let d = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: embed}
spec:
  replicas: 5
  template:
    spec:
      runtimeClassName: nvidia
      containers: [{name: c, resources: {limits: {nvidia.com/mig-1g.5gb: "1"}}}]
"#;
    let r = run(&d.replace("replicas: 5", "replicas: 4"));
    assert_eq!((r.replicas, r.placeable), (4, 4));
    assert_eq!(node(&r, "gpu-x86-01").capacity_for, 4);
    let r = run(&d.replace("replicas: 5", "replicas: 9"));
    assert_eq!(r.placeable, 4, "7 slices, 3 held");
}

#[test]
fn bad_input_points_at_the_field() {
    let e = from_yaml(&SECOND_MODEL.replace("memory: 2Gi", "memory: 2GB")).err().unwrap_or_default();
    assert_eq!(e.field, "spec.containers[0].resources.limits.memory");
    assert!(e.message.contains("2GB"));
    assert_eq!(from_yaml("kind: Pod\nspec: [").err().unwrap_or_default().field, "yaml");
    assert_eq!(from_yaml("apiVersion: v1\nkind: Secret\n").err().unwrap_or_default().field, "kind");
    assert_eq!(
        from_yaml("apiVersion: v1\nkind: Pod\nspec: {containers: []}\n").err().unwrap_or_default().field,
        "spec.containers"
    );
    assert_eq!(from_yaml(&"#".repeat(70_000)).err().unwrap_or_default().field, "yaml");
    let f = FitInput { memory_limit: "lots".into(), ..FitInput::default() };
    assert_eq!(from_form(&f).err().unwrap_or_default().field, "memory_limit");
    let f = FitInput { gpu_count: "0.5".into(), ..FitInput::default() };
    assert_eq!(from_form(&f).err().unwrap_or_default().field, "gpu_count");
    let f = FitInput { tolerations: "a=b:Sometimes".into(), ..FitInput::default() };
    assert_eq!(from_form(&f).err().unwrap_or_default().field, "tolerations");
}

fn quota_inputs(file: &str) -> Inputs {
    load(&crate::derive::tests::scenario_text(&format!("quota/{file}")))
}

const TEAM_A_MODEL: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: another-model, namespace: team-a}
spec:
  replicas: 1
  template:
    spec:
      runtimeClassName: nvidia
      containers:
      - name: m
        resources: {limits: {nvidia.com/gpu: "1", memory: 4Gi}}
"#;

#[test]
fn a_pod_the_namespace_quota_refuses_gets_the_api_servers_words_before_node_verdicts() {
    let mut inputs = quota_inputs("deployment-blocked.yaml");
    inputs.runtime_classes = edge().runtime_classes;
    let w = from_yaml(TEAM_A_MODEL).unwrap();
    let r = fit(&inputs, &w, &unified);
    assert_eq!(
        r.summary,
        "pods \"another-model\" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, \
            limited: requests.nvidia.com/gpu=1"
    );
    assert_eq!(r.placeable, 0);
    assert!(node(&r, "orin-agx-shared").fits, "the board itself has room: the quota is what refuses");
    assert!(r.suggestions.iter().any(|s| s.contains("raise the quota")), "{:?}", r.suggestions);
    // Another namespace has no quota: the same workload fits.
    let other = from_yaml(&TEAM_A_MODEL.replace("namespace: team-a", "namespace: vision")).unwrap();
    assert!(fit(&inputs, &other, &unified).summary.starts_with("1/1 nodes can run it"));
}

#[test]
fn a_scoped_quota_applies_only_to_the_pods_it_selects() {
    let mut inputs = quota_inputs("scoped-job-blocked.yaml");
    inputs.runtime_classes = edge().runtime_classes;
    let job = |priority: &str| {
        format!("apiVersion: batch/v1\nkind: Job\nmetadata: {{name: train, namespace: team-ml}}\nspec:\n  template:\n    spec:\n      \
            {priority}runtimeClassName: nvidia\n      containers:\n      - name: t\n        resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}\n")
    };
    let high = from_yaml(&job("priorityClassName: high\n      ")).unwrap();
    assert!(fit(&inputs, &high, &unified).summary.contains("exceeded quota: gpu-high-priority"));
    let normal = from_yaml(&job("")).unwrap();
    assert!(
        !fit(&inputs, &normal, &unified).summary.contains("exceeded quota"),
        "the quota's scope does not select it"
    );
    // The form names the namespace too; replicas beyond the room are said.
    let form = FitInput {
        gpu_count: "1".into(),
        namespace: "team-a".into(),
        runtime_class: "nvidia".into(),
        ..FitInput::default()
    };
    let mut a = quota_inputs("deployment-blocked.yaml");
    a.runtime_classes = edge().runtime_classes;
    let r = fit(&a, &from_form(&form).unwrap(), &unified);
    assert!(r.summary.starts_with("pods \"what-if\" is forbidden: exceeded quota: gpu-quota"), "{}", r.summary);
}

fn dra_inputs() -> Inputs {
    let mut text = String::new();
    for f in ["whole-mig-shared-unreserved.yaml", "shares-extended-dual.yaml", "class-and-driver-missing.yaml"] {
        text.push_str(&crate::derive::tests::scenario_text(&format!("dra/{f}")));
        text.push_str("\n---\n");
    }
    load(&text)
}

fn run_dra(yaml: &str) -> FitResult {
    let w = from_yaml(yaml).unwrap();
    fit(&dra_inputs(), &w, &unified)
}

#[test]
fn a_dra_workload_is_counted_against_free_matching_devices() {
    // A template pasted with the Deployment (one file, as kubectl apply -f would take it).
    let r = run_dra(
        r#"
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: llm}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: rerank, namespace: llm}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: m
        image: r:1
        resources: {requests: {cpu: "1", memory: 2Gi}, claims: [{name: gpu}]}
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
"#,
    );
    // Free whole GPUs: gpu-l4-ext-01 none (ocr-0), gpu-a100-01 none (llm-serve-0 and the
    // unused warmup claim), gpu-a100-mig-01 none (its GPU 0 has a MIG partition taken),
    // gpu-l4-shared-01 none; the H100 allows shares: free; gpu-l4-dual-01: two free.
    assert!(node(&r, "gpu-h100-01").fits, "{r:#?}");
    assert_eq!(node(&r, "gpu-l4-dual-01").capacity_for, 2, "{r:#?}");
    assert_eq!(node(&r, "gpu-a100-01").reasons, ["cannot allocate all claims"]);
    assert_eq!(node(&r, "gpu-a100-mig-01").reasons, ["cannot allocate all claims"]);
    assert_eq!(node(&r, "ipc-cpu-01").reasons, ["cannot allocate all claims"]);
    assert_eq!(r.placeable, 3);
    // A MIG profile through the class and a request selector.
    let mig = run_dra(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: llm}
spec:
  containers: [{name: m, image: s:1, resources: {claims: [{name: mig}]}}]
  resourceClaims: [{name: mig, resourceClaimTemplateName: mig-1g10gb}]
"#,
    );
    assert_eq!(mig.nodes.iter().filter(|n| n.fits).map(|n| n.node.as_str()).collect::<Vec<_>>(), ["gpu-a100-mig-01"]);
    assert_eq!(node(&mig, "gpu-a100-mig-01").capacity_for, 1, "one 1g.10gb partition is free");
    assert!(mig.suggestions.iter().all(|s| !s.contains("beyond")), "{:?}", mig.suggestions);
}

#[test]
fn a_missing_class_a_missing_template_and_a_selector_beyond_the_check_are_said() {
    let missing = run_dra(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: line3}
spec:
  containers: [{name: m, image: s:1, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: example-gpu}]
"#,
    );
    assert_eq!(missing.placeable, 0);
    assert!(missing.summary.contains("DeviceClass gpu.example.com does not exist"), "{}", missing.summary);
    let no_template = run_dra(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: line3}
spec:
  containers: [{name: m, image: s:1}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: nope}]
"#,
    );
    assert!(no_template.summary.contains("ResourceClaimTemplate line3/nope"), "{}", no_template.summary);
    let beyond = run_dra(
        r#"
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: a100-only, namespace: llm}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('a100')"}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: llm}
spec:
  containers: [{name: m, image: s:1}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: a100-only}]
"#,
    );
    assert!(
        beyond.suggestions.iter().any(|s| s.contains("beyond what the what-if check evaluates")),
        "{:?}",
        beyond.suggestions
    );
    // A pod asking for nvidia.com/gpu where only a DRA class stands for it fits on DRA devices.
    let ext = run_dra(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: ocr-1, namespace: docs}
spec:
  containers: [{name: m, image: s:1, resources: {limits: {nvidia.com/gpu: "1"}}}]
"#,
    );
    assert!(node(&ext, "gpu-l4-dual-01").fits, "{ext:#?}");
    assert!(node(&ext, "gpu-h100-01").fits, "{ext:#?}");
    assert_eq!(node(&ext, "gpu-l4-ext-01").reasons, ["cannot allocate all claims"]);
    // A shared claim already allocated pins the pod to its node.
    let shared = run_dra(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: cam-ingest-3, namespace: vision}
spec:
  containers: [{name: m, image: s:1}]
  resourceClaims: [{name: g, resourceClaimName: shared-l4}]
"#,
    );
    assert_eq!(
        shared.nodes.iter().filter(|n| n.fits).map(|n| n.node.as_str()).collect::<Vec<_>>(),
        ["gpu-l4-shared-01"]
    );
    assert_eq!(node(&shared, "gpu-a100-01").reasons, ["resourceclaim not available on the node"]);
}

#[test]
fn a_pod_pinned_by_node_name_to_a_full_board_is_refused_by_the_kubelet_not_left_pending() {
    // spec.nodeName skips the scheduler: the kubelet of orin-nano-01 (its one GPU held)
    // refuses it in its own words, as a real kubelet does (tests/scenarios/after/
    // admission-rejected.yaml has the resulting pods).
    let r = run(&SECOND_MODEL.replace("nodeSelector: {factory.example.com/line: press-3}", "nodeName: orin-nano-01"));
    assert_eq!(
        r.summary,
        "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 1, capacity: 1"
    );
    assert_eq!(r.placeable, 0);
    assert!(
        r.suggestions
            .iter()
            .any(|s| s.en.starts_with("spec.nodeName pins the pod to orin-nano-01 and bypasses the scheduler")
                && s.en.contains("(OutOfnvidia.com/gpu)")),
        "{:?}",
        r.suggestions
    );
    // Pinned to a board with room, it is admitted; pinned to no node, it is told so.
    let r = run(&SECOND_MODEL.replace("nodeSelector: {factory.example.com/line: press-3}", "nodeName: no-such-board"));
    assert!(!r.summary.starts_with("Pod was rejected"), "{}", r.summary);
    assert!(
        r.suggestions.iter().any(|s| s.en.contains("no-such-board, which is no node of this cluster")),
        "{:?}",
        r.suggestions
    );
}

/// HAMi vGPU shares (`tests/scenarios/sharing/hami.yaml`): `nvidia.com/gpumem` is counted on the
/// cards, not as a node resource (the nodes advertise none: it read "Insufficient
/// nvidia.com/gpumem" everywhere before); a share no card has free is HAMi's
/// `CardInsufficientMemory` with the card that has the most; one that fits counts the replicas
/// the cards' free memory holds.
#[test]
fn hami_memory_shares_are_placed_on_the_cards() {
    let inputs = load(&crate::derive::tests::scenario_text("sharing/hami.yaml"));
    let ask = |mib: u32, replicas: u32| {
        let yaml = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: m, namespace: ml}}\nspec:\n  replicas: {replicas}\n  \
             selector: {{matchLabels: {{app: m}}}}\n  template:\n    metadata: {{labels: {{app: m}}}}\n    spec:\n      \
             schedulerName: hami-scheduler\n      containers:\n      - name: m\n        image: vllm:0.6\n        \
             resources: {{limits: {{nvidia.com/gpu: \"1\", nvidia.com/gpumem: \"{mib}\"}}}}\n"
        );
        fit(&inputs, &from_yaml(&yaml).unwrap(), &unified)
    };
    let r = ask(6000, 3);
    assert!(r.nodes.iter().all(|n| !n.reasons.iter().any(|r| r.contains("gpumem"))), "{:?}", r.nodes);
    assert_eq!(r.placeable, 3, "{}", r.summary);
    // Free by card: v100 16768 and 24768 MiB (2 + 4 shares of 6000), a10 23028 and 17271 (3 + 2).
    assert_eq!(node(&r, "v100-hami-01").capacity_for, 6);
    assert_eq!(node(&r, "a10-hami-02").capacity_for, 5);
    let r = ask(28000, 1);
    assert_eq!(r.placeable, 0);
    assert_eq!(node(&r, "v100-hami-01").reasons, ["CardInsufficientMemory"]);
    assert_eq!(r.summary, "0/2 nodes are available: 2 CardInsufficientMemory.");
    assert!(
        r.suggestions.iter().any(|s| s.contains("the most free is GPU 1 of v100-hami-01, 24768 of 32768 MiB")),
        "{:?}",
        r.suggestions
    );
    let r = ask(40000, 1);
    assert!(
        r.suggestions.iter().any(|s| s.contains("more than the largest card has (32768 MiB, on v100-hami-01)")),
        "{:?}",
        r.suggestions
    );
}
