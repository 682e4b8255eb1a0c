//! `./run.sh --local-cluster`: a real control plane (kine/SQLite, kube-apiserver,
//! controller-manager, scheduler, kwok) shaped like the demo cluster, and gpudash watching it.
//! The demo's nodes, labels, GPU capacity, device plugins and workloads are created through the
//! API, so the real scheduler and controllers place them and say why when they cannot. The
//! admin kubeconfig is written to `target/control-plane/kubeconfig` for kubectl beside it;
//! Ctrl-C (or SIGTERM) stops gpudash and the whole plane.
//!
//! Where a real node can run (root, containerd, runc, the CNI plugins, cgroup v1's memory
//! controller: `tests/src/real_node.rs`), one joins the kwok ones — `orin-real-1`, a real
//! kubelet with the device plugin as a DaemonSet, gpudash-agent as a pod and a model on it —
//! unless `--no-real-node` is given; where it cannot, the plane runs kwok-only and says why.
//!
//! Usage: gpudash-local-cluster GPUDASH_BINARY [SCENARIO.yaml] [--no-real-node] [-- gpudash serve args…]

use std::path::PathBuf;

use anyhow::{bail, Context};
use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::demo_shape;
use gpudash_tests::real_node::{self, NodeSpec, RealNode};
use gpudash_tests::Proc;
use serde_json::json;

/// The real node's name.
const REAL: &str = "orin-real-1";

/// Starts the real node, its agent and a model on it; `None` (said why) where it cannot run.
async fn real_node(plane: &ControlPlane, agent: &std::path::Path) -> Option<RealNode> {
    if let Some(why) = real_node::unavailable() {
        eprintln!("==> no real node ({why}): the plane runs with kwok's nodes only");
        return None;
    }
    eprintln!("==> starting a real node ({REAL}: kubelet, containerd, runc, the device plugin; about 15 s)");
    let node = match RealNode::start(plane, NodeSpec::jetson(REAL, 4)).await {
        Ok(n) => n,
        Err(e) => {
            eprintln!("==> no real node: {e:#}");
            return None;
        }
    };
    let model = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "line-watcher", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "line-watcher"}},
                 "template": {"metadata": {"labels": {"app": "line-watcher"}},
                              "spec": {"nodeSelector": {"kubernetes.io/hostname": REAL}, "automountServiceAccountToken": false,
                                       "terminationGracePeriodSeconds": 1,
                                       "containers": [{"name": "model", "image": "gpudash.local/model:1",
                                                       "imagePullPolicy": "IfNotPresent", "args": ["--alloc-mib=16", "--serve=:8000"],
                                                       "resources": {"limits": {"memory": "64Mi", "nvidia.com/gpu": "1"}}}]}}}});
    let agent_ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpudash"}});
    if agent.exists() {
        if let Err(e) = plane.apply(&[agent_ns, node.agent_pod("gpudash", agent)]) {
            eprintln!("==> the real node's agent was not created: {e:#}");
        }
    } else {
        eprintln!("==> {} is missing: the real node runs without its agent", agent.display());
    }
    if let Err(e) = plane.apply(&[model]) {
        eprintln!("==> the real node's model was not created: {e:#}");
    }
    Some(node)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, serve_args) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..], &[][..]),
    };
    let no_real_node = ours.iter().any(|a| a == "--no-real-node");
    let ours: Vec<&String> = ours.iter().filter(|a| *a != "--no-real-node").collect();
    let Some(gpudash) = ours.first().map(PathBuf::from) else {
        bail!("usage: gpudash-local-cluster GPUDASH_BINARY [SCENARIO.yaml] [--no-real-node] [-- gpudash serve args…]")
    };
    let scenario =
        ours.get(1).map(PathBuf::from).unwrap_or_else(|| gpudash_tests::root().join("sim/scenarios/edge.yaml"));
    let text = std::fs::read_to_string(&scenario).with_context(|| format!("reading {}", scenario.display()))?;
    let shape = demo_shape::from_scenario(&text).with_context(|| format!("{}", scenario.display()))?;

    eprintln!("==> starting a real control plane (kine/SQLite, kube-apiserver, controller-manager, scheduler, kwok)");
    let plane = ControlPlane::start().await?;
    let kubeconfig = gpudash_tests::target_dir().join("control-plane/kubeconfig");
    std::fs::create_dir_all(kubeconfig.parent().unwrap_or(&kubeconfig))?;
    std::fs::copy(&plane.kubeconfig, &kubeconfig)?;
    eprintln!(
        "==> creating {} nodes and {} workloads from {} through the API",
        shape.nodes.len(),
        shape.workloads.len(),
        scenario.display()
    );
    plane.create_shape(&shape).await?;
    let node = if no_real_node { None } else { real_node(&plane, &gpudash.with_file_name("gpudash-agent")).await };
    eprintln!(
        "==> kubectl: {} --kubeconfig {} get pods -A",
        gpudash_tests::control_plane::kubectl_bin().display(),
        kubeconfig.display()
    );

    let mut serve: Vec<String> = vec!["serve".into(), "--kubeconfig".into(), kubeconfig.display().to_string()];
    if node.is_some() && !serve_args.iter().any(|a| a.starts_with("--agent-namespace")) {
        serve.extend(["--agent-namespace".into(), "gpudash".into()]);
    }
    if !serve_args.iter().any(|a| a.starts_with("--site-root")) {
        serve.extend(["--site-root".into(), gpudash_tests::site_root().display().to_string()]);
    }
    serve.extend(serve_args.iter().cloned());
    let log = plane.dir().join("gpudash.log");
    let mut gd = Proc::spawn_logged(&gpudash, &serve, &log)?;
    let listen = serve_args
        .iter()
        .position(|a| a == "--listen")
        .and_then(|i| serve_args.get(i + 1).cloned())
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    eprintln!(
        "==> gpudash (log: {}): open http://{listen}/ — Ctrl-C stops gpudash and the control plane",
        log.display()
    );

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    let code = loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break 0,
            _ = term.recv() => break 0,
            _ = tick.tick() => {
                if let Some(c) = gd.exited() {
                    eprintln!("gpudash exited ({c}):\n{}", gd.output());
                    break 1;
                }
            }
        }
    };
    eprintln!("==> stopping gpudash and the control plane");
    gd.kill();
    if let Some(mut n) = node {
        let left = n.stop();
        if !left.is_empty() {
            eprintln!("==> the real node could not undo: {left:?}");
        }
    }
    drop(plane);
    let _ = std::fs::remove_file(&kubeconfig);
    std::process::exit(code)
}
