//! The deployment files: plain manifests and the Helm chart give gpudash exactly get/list/watch
//! on what it reads, and run it non-root, read-only, without capabilities, with probes.
//!
//! The chart is rendered by `gpudash_tests::helm` (no registry ships Helm to the build machines);
//! the real API server's dry run of both is in `real_cluster.rs`.

use gpudash_tests::helm::docs;
use serde_yaml::Value;

fn chart(overrides: &str) -> Vec<Value> {
    gpudash_tests::helm::chart(overrides, "gpudash", "edge-ops")
}

fn kind<'a>(docs: &'a [Value], k: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"].as_str() == Some(k)).collect()
}

/// A Deployment's pod run non-root with seccomp `RuntimeDefault`, its first container read-only,
/// without privilege escalation or capabilities, with probes on `/healthz` and `/readyz` and
/// bounded resources: that container.
fn hardened_pod<'a>(pod: &'a Value, what: &str) -> &'a Value {
    assert_eq!(pod["securityContext"]["runAsNonRoot"], Value::Bool(true), "{what}");
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"].as_str(), Some("RuntimeDefault"), "{what}");
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], Value::Bool(true), "{what}");
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], Value::Bool(false), "{what}");
    assert_eq!(c["securityContext"]["capabilities"]["drop"][0].as_str(), Some("ALL"), "{what}");
    assert_eq!(c["livenessProbe"]["httpGet"]["path"].as_str(), Some("/healthz"), "{what}");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"].as_str(), Some("/readyz"), "{what}");
    for k in ["requests", "limits"] {
        for r in ["cpu", "memory"] {
            assert!(!c["resources"][k][r].is_null(), "{what}: resources.{k}.{r}");
        }
    }
    c
}

fn check(docs: &[Value], what: &str) {
    let roles = kind(docs, "ClusterRole");
    assert_eq!(roles.len(), 1, "{what}: one ClusterRole");
    let mut granted = Vec::new();
    for rule in roles[0]["rules"].as_sequence().into_iter().flatten() {
        for verb in rule["verbs"].as_sequence().into_iter().flatten() {
            let v = verb.as_str().unwrap_or("");
            assert!(["get", "list", "watch"].contains(&v), "{what}: verb {v:?} granted");
        }
        for g in rule["apiGroups"].as_sequence().into_iter().flatten() {
            for r in rule["resources"].as_sequence().into_iter().flatten() {
                granted.push(format!("{}/{}", g.as_str().unwrap_or("?"), r.as_str().unwrap_or("?")));
            }
        }
    }
    granted.sort();
    assert_eq!(
        granted,
        vec![
            "/events",
            "/nodes",
            "/pods",
            "/resourcequotas",
            "apps/daemonsets",
            "apps/deployments",
            "apps/replicasets",
            "metrics.k8s.io/nodes",
            "metrics.k8s.io/pods",
            "node.k8s.io/runtimeclasses",
            "resource.k8s.io/deviceclasses",
            "resource.k8s.io/resourceclaims",
            "resource.k8s.io/resourceclaimtemplates",
            "resource.k8s.io/resourceslices"
        ],
        "{what}: exactly what gpudash reads"
    );
    assert!(kind(docs, "Role").is_empty() && kind(docs, "Secret").is_empty() && kind(docs, "ConfigMap").is_empty());
    let binding = kind(docs, "ClusterRoleBinding");
    assert_eq!(binding[0]["roleRef"]["name"], roles[0]["metadata"]["name"], "{what}");
    assert_ne!(binding[0]["roleRef"]["name"].as_str(), Some("cluster-admin"));
    let dep = kind(docs, "Deployment");
    let pod = &dep[0]["spec"]["template"]["spec"];
    hardened_pod(pod, what);
    let claim = pod["volumes"]
        .as_sequence()
        .into_iter()
        .flatten()
        .find_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
        .unwrap_or("");
    assert!(
        kind(docs, "PersistentVolumeClaim").iter().any(|p| p["metadata"]["name"].as_str() == Some(claim)),
        "{what}: the history PVC is mounted"
    );
    assert_eq!(kind(docs, "Service").len(), 1, "{what}");
    check_agent(docs, what);
}

/// The agent DaemonSet: on GPU nodes only, reading the kubelet's socket directory read-only and
/// nothing else of the host, no API token, every capability dropped, bounded resources.
fn check_agent(docs: &[Value], what: &str) {
    let ds = kind(docs, "DaemonSet");
    assert_eq!(ds.len(), 1, "{what}: one agent DaemonSet");
    let t = &ds[0]["spec"]["template"];
    assert_eq!(
        t["metadata"]["labels"]["app.kubernetes.io/name"].as_str(),
        Some("gpudash-agent"),
        "{what}: the label gpudash finds agents by"
    );
    assert_eq!(
        ds[0]["metadata"]["namespace"],
        kind(docs, "Deployment")[0]["metadata"]["namespace"],
        "{what}: in gpudash's namespace"
    );
    let pod = &t["spec"];
    assert_eq!(pod["automountServiceAccountToken"], Value::Bool(false), "{what}");
    assert!(pod["hostNetwork"].is_null() && pod["hostPID"].is_null(), "{what}");
    let terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .as_sequence()
        .map_or(0, Vec::len);
    assert!(terms >= 1, "{what}: GPU nodes only");
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], Value::Bool(true), "{what}");
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], Value::Bool(false), "{what}");
    assert_eq!(c["securityContext"]["capabilities"]["drop"][0].as_str(), Some("ALL"), "{what}");
    assert!(c["securityContext"]["privileged"].is_null(), "{what}");
    assert_eq!(c["ports"][0]["name"].as_str(), Some("report"), "{what}");
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as_str(), Some("spec.nodeName"), "{what}");
    for k in ["requests", "limits"] {
        for r in ["cpu", "memory"] {
            assert!(!c["resources"][k][r].is_null(), "{what}: agent resources.{k}.{r}");
        }
    }
    let host: Vec<(&str, &str)> = pod["volumes"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(|v| Some((v["name"].as_str()?, v["hostPath"]["path"].as_str()?)))
        .collect();
    assert!(host.contains(&("pod-resources", "/var/lib/kubelet/pod-resources")), "{what}: {host:?}");
    assert!(
        host.iter().all(|(_, p)| matches!(
            *p,
            "/var/lib/kubelet/pod-resources" | "/usr/bin/tegrastats" | "/sys/kernel/debug" | "/proc"
        )),
        "{what}: {host:?}"
    );
    for m in c["volumeMounts"].as_sequence().into_iter().flatten() {
        assert_eq!(m["readOnly"], Value::Bool(true), "{what}: {m:?} mounted read-only");
    }
    let args: Vec<&str> = c["args"].as_sequence().into_iter().flatten().filter_map(Value::as_str).collect();
    assert!(args.contains(&"--pod-resources=/var/lib/kubelet/pod-resources/kubelet.sock"), "{what}: {args:?}");
    // Only gpudash's pods reach the agents' port (round two: 300 trickling connections kept
    // every agent slot full).
    let np = kind(docs, "NetworkPolicy");
    assert_eq!(np.len(), 1, "{what}: one NetworkPolicy for the agents");
    let spec = &np[0]["spec"];
    let selects = &spec["podSelector"]["matchLabels"];
    assert_eq!(selects["app.kubernetes.io/name"].as_str(), Some("gpudash-agent"), "{what}: it selects the agents");
    for (k, v) in selects.as_mapping().into_iter().flatten() {
        assert_eq!(&t["metadata"]["labels"][k.as_str().unwrap_or("")], v, "{what}: the agents carry {k:?}");
    }
    assert_eq!(strs(&spec["policyTypes"]), ["Ingress"], "{what}");
    let rules = spec["ingress"].as_sequence().map_or(0, Vec::len);
    assert_eq!(rules, 1, "{what}: one rule");
    let from = &spec["ingress"][0]["from"];
    assert_eq!(from.as_sequence().map_or(0, Vec::len), 1, "{what}: one source");
    let gd = &kind(docs, "Deployment")[0]["spec"]["template"]["metadata"]["labels"];
    for (k, v) in from[0]["podSelector"]["matchLabels"].as_mapping().into_iter().flatten() {
        assert_eq!(&gd[k.as_str().unwrap_or("")], v, "{what}: the source is gpudash's pods ({k:?})");
    }
    assert!(from[0]["namespaceSelector"].is_null() && from[0]["ipBlock"].is_null(), "{what}: nothing else");
    assert_eq!(spec["ingress"][0]["ports"][0]["port"].as_u64(), Some(9401), "{what}");
}

#[test]
fn plain_manifests_are_read_only_and_hardened() {
    let text = std::fs::read_to_string(gpudash_tests::root().join("deploy/manifests/gpudash.yaml")).unwrap_or_default();
    check(&docs(&text), "manifests");
}

/// The chart with the agent on and `values` (its sources) over the defaults.
fn agent_chart(values: &str) -> Vec<Value> {
    chart(&format!(
        "agent: {{enabled: true, image: {{repository: a, tag: b}}, interval: \"1\", {values}, dcgm: false, dcgmUrl: x, \
         resources: {{requests: {{cpu: 5m, memory: 8Mi}}, limits: {{cpu: 100m, memory: 32Mi}}}}}}"
    ))
}

/// The agent DaemonSet's pod spec.
fn agent_pod(docs: &[Value]) -> Value {
    kind(docs, "DaemonSet")[0]["spec"]["template"]["spec"].clone()
}

/// A YAML list of strings.
fn strs(v: &Value) -> Vec<&str> {
    v.as_sequence().into_iter().flatten().filter_map(Value::as_str).collect()
}

#[test]
fn the_rendered_helm_chart_is_read_only_and_hardened() {
    let rendered = chart("");
    check(&rendered, "chart");
    assert!(kind(&rendered, "Ingress").is_empty(), "ingress is optional and off by default");
    let with_ingress =
        chart("ingress: {enabled: true, className: traefik, host: dash.example}\nextraArgs: [--base-path, /gpu]");
    check(&with_ingress, "chart with ingress");
    let ing = kind(&with_ingress, "Ingress");
    assert_eq!(ing[0]["spec"]["ingressClassName"].as_str(), Some("traefik"));
    let args = &kind(&with_ingress, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["args"];
    assert_eq!(args.as_sequence().map(Vec::len), Some(3), "{args:?}");
    // A Jetson fleet: tegrastats from the host, read-only; the agent can be switched off.
    let jetson = agent_chart("tegrastats: true");
    check(&jetson, "chart with tegrastats");
    let jetson_pod = agent_pod(&jetson);
    let args = strs(&jetson_pod["containers"][0]["args"]);
    assert!(args.contains(&"--tegrastats=/host/tegrastats --interval 1000"), "{args:?}");
    // GPU memory per pod on Jetson: nvmap's table and the host's /proc, both read-only.
    let nvmap = agent_chart("tegrastats: true, nvmap: true");
    check(&nvmap, "chart with nvmap");
    let pod = agent_pod(&nvmap);
    let args = strs(&pod["containers"][0]["args"]);
    assert!(
        args.contains(&"--nvmap=/host/sys/kernel/debug/nvmap/iovmm/clients") && args.contains(&"--proc=/host/proc"),
        "{args:?}"
    );
    let mounts: Vec<&str> = pod["containers"][0]["volumeMounts"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(|m| m["mountPath"].as_str())
        .collect();
    assert!(mounts.contains(&"/host/sys/kernel/debug") && mounts.contains(&"/host/proc"), "{mounts:?}");
    assert!(
        jetson_pod["volumes"]
            .as_sequence()
            .into_iter()
            .flatten()
            .all(|v| v["hostPath"]["path"].as_str() != Some("/proc")),
        "the host's /proc only with nvmap on"
    );
    // Thor and discrete GPUs: NVML through the NVIDIA runtime class, the host's /proc only.
    let nvml = agent_chart("tegrastats: false, nvml: true");
    check(&nvml, "chart with nvml");
    let pod = agent_pod(&nvml);
    assert_eq!(pod["runtimeClassName"].as_str(), Some("nvidia"));
    let args = strs(&pod["containers"][0]["args"]);
    assert!(
        args.contains(&"--nvml=auto")
            && args.contains(&"--proc=/host/proc")
            && !args.iter().any(|a| a.starts_with("--nvmap")),
        "{args:?}"
    );
    let volumes: Vec<&str> =
        pod["volumes"].as_sequence().into_iter().flatten().filter_map(|v| v["hostPath"]["path"].as_str()).collect();
    assert!(volumes.contains(&"/proc") && !volumes.contains(&"/sys/kernel/debug"), "{volumes:?}");
    let without = chart("agent: {enabled: false}");
    assert!(kind(&without, "DaemonSet").is_empty());
}

#[test]
fn the_dockerfile_builds_non_root_from_a_minimal_image() {
    let d = std::fs::read_to_string(gpudash_tests::root().join("Dockerfile")).unwrap_or_default();
    let froms: Vec<&str> = d.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 3, "one build stage, the gpudash and the agent images");
    assert!(froms[1..].iter().all(|f| f.contains("distroless")), "{froms:?}");
    assert!(froms[1].contains(" AS agent"), "{froms:?}");
    assert!(froms[2].contains("nonroot") && froms[2].contains(" AS gpudash"), "the default target: {froms:?}");
    assert!(d.contains("--platform=$BUILDPLATFORM") && d.contains("aarch64-unknown-linux-gnu"), "arm64 cross-built");
    assert!(d.lines().any(|l| l.starts_with("USER 65532")));
    assert!(d.contains("cargo xtask site") && d.contains("--locked"));
}

/// The chart's PrometheusRule is the plain rules file (the one `promtool test rules` checks) at
/// the chart's default thresholds, each threshold is a value, and the ServiceMonitor scrapes the
/// Service's port.
#[test]
fn the_charts_alert_rules_are_the_tested_rules_file() {
    assert!(kind(&chart(""), "PrometheusRule").is_empty(), "off by default: the CRDs may be absent");
    let on = chart("alerts: {prometheusRule: true, serviceMonitor: true}");
    check(&on, "chart with alerts");
    let rule = kind(&on, "PrometheusRule");
    assert_eq!(rule.len(), 1);
    let plain = std::fs::read_to_string(gpudash_tests::root().join("deploy/prometheus/gpudash-rules.yaml")).unwrap();
    let plain: Value = serde_yaml::from_str(&plain).unwrap();
    assert_eq!(rule[0]["spec"]["groups"], plain["groups"], "chart and rules file differ");
    assert_eq!(rule[0]["metadata"]["labels"]["release"].as_str(), Some("kube-prometheus-stack"));

    let tuned = chart("alerts: {prometheusRule: true, pendingSeconds: \"60\", boardDownFor: 30s}");
    let rules = &kind(&tuned, "PrometheusRule")[0]["spec"]["groups"][0]["rules"];
    let by = |name: &str| {
        rules
            .as_sequence()
            .into_iter()
            .flatten()
            .find(|r| r["alert"].as_str() == Some(name))
            .cloned()
            .unwrap_or_default()
    };
    assert!(by("GpuModelPending")["expr"].as_str().is_some_and(|e| e.ends_with("> 60")), "{:?}", by("GpuModelPending"));
    assert_eq!(by("GpuBoardDown")["for"].as_str(), Some("30s"));
    let annotations = by("GpuBoardDown")["annotations"]["summary"].as_str().unwrap_or("").to_string();
    assert!(annotations.contains("{{ $labels.node }}"), "Prometheus' templates pass through Helm: {annotations}");

    let sm = kind(&on, "ServiceMonitor");
    assert_eq!(sm.len(), 1);
    let svc = kind(&on, "Service");
    let svc_labels = &svc[0]["metadata"]["labels"];
    for (k, v) in sm[0]["spec"]["selector"]["matchLabels"].as_mapping().into_iter().flatten() {
        assert_eq!(&svc_labels[k], v, "the ServiceMonitor selects the Service");
    }
    let port = sm[0]["spec"]["endpoints"][0]["port"].as_str();
    assert!(svc[0]["spec"]["ports"].as_sequence().into_iter().flatten().any(|p| p["name"].as_str() == port));
    assert_eq!(sm[0]["spec"]["endpoints"][0]["path"].as_str(), Some("/metrics"));
}

/// The fleet's Deployment, from the plain manifests or the chart: no cluster access at all (no
/// role, no service account token), run as the site's pod is (non-root, read-only, no
/// capabilities, probes, bounded resources), the Secret and sites file mounted read-only — and
/// every `GPUDASH_*` variable it sets is one `gpudash fleet` reads (checked against its `--help`).
fn check_fleet(d: &[Value], what: &str) {
    assert!(
        ["ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"].iter().all(|k| kind(d, k).is_empty()),
        "{what}"
    );
    let dep = kind(d, "Deployment");
    assert_eq!(dep.len(), 1, "{what}");
    let pod = &dep[0]["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], Value::Bool(false), "{what}: the fleet reads no cluster");
    let c = hardened_pod(pod, what);
    assert_eq!(c["args"][0].as_str(), Some("fleet"), "{what}");
    for m in c["volumeMounts"].as_sequence().into_iter().flatten().filter(|m| m["name"].as_str() != Some("tmp")) {
        assert_eq!(m["readOnly"], Value::Bool(true), "{what}: {m:?}");
    }
    let env: Vec<&str> = c["env"].as_sequence().into_iter().flatten().filter_map(|e| e["name"].as_str()).collect();
    assert!(env.contains(&"GPUDASH_AUTH_TOKEN_FILE") && env.contains(&"GPUDASH_FLEET_DATABASE_URL"), "{what}: {env:?}");
    let help = std::process::Command::new(gpudash_tests::bin())
        .args(["fleet", "--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .expect("gpudash fleet --help");
    for e in &env {
        assert!(help.contains(&format!("env: {e}=")), "{what}: {e} is not read by `gpudash fleet`:\n{help}");
    }
    // The Secret's files are root's: the fleet (non-root) reads them through the pod's group.
    let mode = pod["volumes"]
        .as_sequence()
        .into_iter()
        .flatten()
        .find_map(|v| v["secret"]["defaultMode"].as_u64())
        .unwrap_or(0o644);
    assert!(
        pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsGroup"] && mode & 0o040 != 0,
        "{what}: the secret (mode {mode:o}) must be readable by the fleet's group"
    );
    assert_eq!(kind(d, "Service").len(), 1, "{what}");
}

/// The plain manifests: the fleet's Deployment as above, no credential shipped filled in, and a
/// sites file `gpudash fleet` takes; the trial PostgreSQL without a password.
#[test]
fn the_fleet_manifests_are_hardened_and_name_only_what_the_fleet_reads() {
    let text = std::fs::read_to_string(gpudash_tests::root().join("deploy/fleet/gpudash-fleet.yaml")).unwrap();
    let d = docs(&text);
    check_fleet(&d, "fleet manifests");
    let secret = kind(&d, "Secret");
    assert_eq!(secret.len(), 1);
    for (k, v) in secret[0]["stringData"].as_mapping().into_iter().flatten() {
        assert_eq!(v.as_str(), Some(""), "{k:?}: no credential shipped filled in");
    }
    let sites = kind(&d, "ConfigMap")[0]["data"]["sites.yaml"].as_str().unwrap_or_default().to_string();
    let parsed: Value = serde_yaml::from_str(&sites).unwrap();
    assert!(parsed["sites"][0]["url"].as_str().is_some_and(|u| u.starts_with("https://")), "{sites}");
    let pg = std::fs::read_to_string(gpudash_tests::root().join("deploy/fleet/postgres-example.yaml")).unwrap();
    let pg = docs(&pg);
    assert_eq!(kind(&pg, "StatefulSet").len(), 1);
    assert!(kind(&pg, "Secret")[0]["stringData"]["password"].as_str() == Some(""), "no password shipped");
}

/// The fleet's chart: the same Deployment, naming the Secret and sites ConfigMap the operator
/// made (the chart makes no Secret), its flags passed through.
#[test]
fn the_fleet_chart_renders_the_same_hardened_fleet() {
    let d = gpudash_tests::helm::chart_named("gpudash-fleet", "", "fleet", "ops");
    check_fleet(&d, "fleet chart");
    assert!(kind(&d, "Secret").is_empty() && kind(&d, "ConfigMap").is_empty(), "the operator's own");
    let tuned = gpudash_tests::helm::chart_named(
        "gpudash-fleet",
        "extraArgs: [--base-path, /fleet]\nsecretName: portal-fleet\nallowedHost: ops.example",
        "fleet",
        "ops",
    );
    check_fleet(&tuned, "fleet chart, tuned");
    let pod = &kind(&tuned, "Deployment")[0]["spec"]["template"]["spec"];
    let args: Vec<&str> =
        pod["containers"][0]["args"].as_sequence().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(args, ["fleet", "--base-path", "/fleet"]);
    let secrets: Vec<&str> =
        pod["volumes"].as_sequence().into_iter().flatten().filter_map(|v| v["secret"]["secretName"].as_str()).collect();
    assert_eq!(secrets, ["portal-fleet"]);
}
