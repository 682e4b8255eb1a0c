//! Demo mode's node agents: the simulator serves a kubelet pod-resources socket per GPU node,
//! and one real `gpudash-agent` process per GPU node reads it (and, on Jetsons with a recorded
//! board, `tegrastats` played back by `gpudash sim-tegrastats`). Each agent is announced to the
//! simulated cluster as a pod labelled `app.kubernetes.io/name=gpudash-agent` in `gpudash`, so
//! gpudash finds and pulls it exactly as it does in a cluster.

use std::path::PathBuf;
use std::process::Stdio;

use anyhow::Context as _;

/// The agents, their sockets and their directory; dropping it stops them.
pub struct DemoAgents {
    _sockets: gpudash_sim::kubelet::KubeletSockets,
    _nvmap: gpudash_sim::kubelet::nvmap::NvmapTrees,
    children: Vec<tokio::process::Child>,
    dir: PathBuf,
}

impl Drop for DemoAgents {
    /// SIGTERM first, so that each agent stops its tegrastats command's process group; SIGKILL
    /// for any still running a second later.
    fn drop(&mut self) {
        for c in &self.children {
            if let Some(pid) = c.id().and_then(|p| i32::try_from(p).ok()).and_then(rustix::process::Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while std::time::Instant::now() < deadline
            && self.children.iter_mut().any(|c| c.try_wait().ok().flatten().is_none())
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for c in &mut self.children {
            let _ = c.start_kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The namespace demo agent pods are announced in (gpudash's default agent namespace).
pub const NAMESPACE: &str = "gpudash";

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts the demo's agents, or says why not (then the demo runs without them). With `work`
/// (the built-in demo), the boards' GPUs are busy and idle in turns and the servers' GPUs are
/// read from the simulator's dcgm-exporter page at `sim_url`.
pub fn start(sim: &gpudash_sim::Simulator, sim_url: &str, work: bool) -> anyhow::Result<DemoAgents> {
    let me = std::env::current_exe().context("where gpudash runs from")?;
    let exe = me.with_file_name("gpudash-agent");
    if !exe.is_file() {
        anyhow::bail!("{} not found (build it with `cargo build -p gpudash-agent`)", exe.display());
    }
    let dir = std::env::temp_dir().join(format!("gpudash-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let sockets = gpudash_sim::kubelet::serve(sim, &dir).context("serving the simulated kubelet sockets")?;
    let gpu_nodes = gpudash_sim::kubelet::gpu_nodes(sim);
    // Boards with a recording get a host tree with nvmap's table too (per-pod GPU memory).
    let boards: Vec<String> = gpu_nodes.iter().filter(|(_, b)| b.is_some()).map(|(n, _)| n.clone()).collect();
    let nvmap = gpudash_sim::kubelet::nvmap::serve(sim, &dir, &boards).context("writing the simulated nvmap trees")?;
    let mut agents = DemoAgents { _sockets: sockets, _nvmap: nvmap, children: Vec::new(), dir };
    for (node, board) in gpu_nodes {
        let Some(socket) = agents._sockets.sockets.get(&node) else { continue };
        let port = free_port().context("a port for an agent")?;
        let mut cmd = tokio::process::Command::new(&exe);
        cmd.args(["--listen", &format!("127.0.0.1:{port}"), "--node", &node, "--interval", "1"])
            .arg("--pod-resources")
            .arg(socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // kill_on_drop covers gpudash ending; the agent itself watches for a gpudash
            // killed outright (SIGKILL), which runs no drop.
            .env("GPUDASH_AGENT_EXIT_WITH_PARENT", "1")
            .kill_on_drop(true);
        if let Some(b) = board {
            let quoted = format!("'{}'", me.display().to_string().replace('\'', r"'\''"));
            let work = if work { " --work" } else { "" };
            cmd.args(["--tegrastats", &format!("exec {quoted} sim-tegrastats --board {b}{work}")]);
        } else if work && gpudash_sim::kubelet::has_dcgm_page(sim, &node) {
            cmd.args(["--dcgm", &format!("{}/_sim/dcgm/{node}", sim_url.trim_end_matches('/'))]);
        }
        if let Some((table, proc_dir)) = agents._nvmap.roots.get(&node) {
            cmd.arg("--nvmap").arg(table).arg("--proc").arg(proc_dir);
        }
        let child = cmd.spawn().with_context(|| format!("starting {}", exe.display()))?;
        agents.children.push(child);
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": format!("gpudash-agent-{node}"), "namespace": NAMESPACE,
                "labels": {"app.kubernetes.io/name": "gpudash-agent", "app.kubernetes.io/part-of": "gpudash"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "gpudash-agent",
                                     "uid": "44444444-0000-4000-8000-000000000001", "controller": true}]
            },
            "spec": {
                "nodeName": node,
                "containers": [{"name": "agent", "image": "gpudash-agent:demo",
                                "ports": [{"name": "report", "containerPort": port}],
                                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "32Mi"}}}]
            },
            "status": {"phase": "Running", "podIP": "127.0.0.1", "hostIP": "127.0.0.1"}
        });
        sim.apply(pod).map_err(|e| anyhow::anyhow!("announcing the agent pod: {e}"))?;
        tracing::info!(%node, port, tegrastats = board.unwrap_or("none"), "demo gpudash-agent started");
    }
    Ok(agents)
}
