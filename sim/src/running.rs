//! A simulator serving on a socket, and the kubeconfig that points clients at it.

use std::net::SocketAddr;

use crate::{Simulator, TimelineMode};

/// A simulator serving on a socket.
#[derive(Debug)]
pub struct RunningSim {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The handle.
    pub sim: Simulator,
    server: tokio::task::JoinHandle<()>,
    timeline: Option<tokio::task::JoinHandle<()>>,
}

impl RunningSim {
    /// `http://addr`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig for this simulator.
    pub fn kubeconfig(&self) -> String {
        kubeconfig(&self.url())
    }

    /// Stops serving (also done on drop).
    pub fn stop(&self) {
        self.server.abort();
        if let Some(t) = &self.timeline {
            t.abort();
        }
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts serving `sim` on `addr` (use `127.0.0.1:0` for an ephemeral port).
pub async fn start(sim: Simulator, addr: SocketAddr, mode: TimelineMode) -> std::io::Result<RunningSim> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let router = sim.router();
    let server = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!(error = %e, "simulator server ended");
        }
    });
    let timeline = (mode == TimelineMode::Auto).then(|| sim.spawn_timeline());
    Ok(RunningSim { addr, sim, server, timeline })
}

/// A kubeconfig that points kubectl, kube-rs and the Python client at `server`.
pub fn kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: gpudash-sim\n  cluster:\n    server: {server}\ncontexts:\n- name: gpudash-sim\n  \
            context:\n    cluster: gpudash-sim\n    user: gpudash-sim\n    namespace: default\ncurrent-context: gpudash-sim\nusers:\n- name: \
            gpudash-sim\n  user:\n    token: gpudash-sim-read-only\npreferences: {{}}\n"
    )
}
