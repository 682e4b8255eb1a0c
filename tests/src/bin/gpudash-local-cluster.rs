//! `./run.sh --local-cluster`: a real control plane (kine/SQLite, kube-apiserver,
//! controller-manager, scheduler, kwok) shaped like the demo cluster, and gpudash watching it.
//! The demo's nodes, labels, GPU capacity, device plugins and workloads are created through the
//! API, so the real scheduler and controllers place them and say why when they cannot. The
//! admin kubeconfig is written to `target/control-plane/kubeconfig` for kubectl beside it;
//! Ctrl-C (or SIGTERM) stops gpudash and the whole plane.
//!
//! Usage: gpudash-local-cluster GPUDASH_BINARY [SCENARIO.yaml] [-- gpudash serve args…]

use std::path::PathBuf;

use anyhow::{bail, Context};
use gpudash_tests::control_plane::ControlPlane;
use gpudash_tests::demo_shape;
use gpudash_tests::Proc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, serve_args) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..], &[][..]),
    };
    let Some(gpudash) = ours.first().map(PathBuf::from) else {
        bail!("usage: gpudash-local-cluster GPUDASH_BINARY [SCENARIO.yaml] [-- gpudash serve args…]")
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
    eprintln!(
        "==> kubectl: {} --kubeconfig {} get pods -A",
        gpudash_tests::control_plane::kubectl_bin().display(),
        kubeconfig.display()
    );

    let mut serve: Vec<String> = vec!["serve".into(), "--kubeconfig".into(), kubeconfig.display().to_string()];
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
    drop(plane);
    let _ = std::fs::remove_file(&kubeconfig);
    std::process::exit(code)
}
