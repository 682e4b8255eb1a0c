//! The processes the benchmark starts and measures: gpudash itself, and what `/proc` says of
//! any process's memory and CPU.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context;

/// Kills and reaps its child when dropped.
pub(crate) struct Killer(pub(crate) Child);
impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A `kB` line of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), 0 when it cannot be read.
pub(crate) fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

pub(crate) fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// utime + stime in clock ticks.
pub(crate) fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = s.rsplit_once(") ").map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
}

/// CPU use in percent of one core over `d`, and the RSS at the end, in MiB.
pub(crate) async fn cpu_and_rss(pid: u32, d: Duration) -> (f64, f64) {
    let t0 = cpu_ticks(pid);
    tokio::time::sleep(d).await;
    let t1 = cpu_ticks(pid);
    ((t1 - t0) as f64 / 100.0 / d.as_secs_f64() * 100.0, rss_kib(pid) as f64 / 1024.0)
}

/// `target/release/gpudash serve` on `kubeconfig`, listening on `port`, its database in `dir`:
/// its pid, and the guard that kills it.
pub(crate) fn spawn_gpudash(
    kubeconfig: &std::path::Path,
    port: u16,
    dir: &std::path::Path,
) -> anyhow::Result<(u32, Killer)> {
    // GPUDASH_BENCH_BIN: another build (a debug one, for a first look).
    let bin = std::env::var_os("GPUDASH_BENCH_BIN").map_or_else(|| root().join("target/release/gpudash"), Into::into);
    let child = Command::new(&bin)
        .args(["serve", "--kubeconfig"])
        .arg(kubeconfig)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--db"])
        .arg(dir.join("h.db"))
        .arg("--site-root")
        .arg(root().join("target/site"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("{} (build it with cargo build --release -p gpudash)", bin.display()))?;
    Ok((child.id(), Killer(child)))
}
