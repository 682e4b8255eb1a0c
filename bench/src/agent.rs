//! `gpudash-bench --agent SECONDS`: the node agent's footprint at 1 s sampling — the release
//! `gpudash-agent` reading the simulator's kubelet socket (a two-GPU time-sliced node with four
//! GPU pods), a recorded Orin Nano tegrastats line once a second, and a recorded dcgm-exporter
//! page served on loopback, its report pulled once a second as gpudash would. RSS from
//! `/proc/PID/status`, CPU from `/proc/PID/stat` (the tegrastats stand-in is a separate
//! process and not counted); binary sizes per architecture.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use crate::proc::{cpu_ticks, root, status_kib};

fn size_kib(p: &Path) -> Option<f64> {
    std::fs::metadata(p).ok().map(|m| m.len() as f64 / 1024.0)
}

/// Serves one recorded dcgm-exporter page on loopback for as long as the task lives.
async fn dcgm_exporter(text: String) -> anyhow::Result<(u16, tokio::task::JoinHandle<()>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = l.local_addr()?.port();
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let body = text.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let head =
                    format!("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n", body.len());
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body.as_bytes()).await;
            });
        }
    });
    Ok((port, task))
}

/// Runs the agent (`cmd`: the binary, or qemu with the arm64 binary) against every source at
/// 1 s, pulls its report once a second for `seconds`, and prints one row.
async fn measure(label: &str, cmd: &[String], seconds: u64) -> anyhow::Result<()> {
    let r = root();
    let scenario = std::fs::read_to_string(r.join("tests/scenarios/agent/agents.yaml"))?;
    let sim = gpudash_sim::Simulator::new(gpudash_sim::Scenario::from_text("agents", &scenario)?);
    let dir = tempfile::tempdir()?;
    let sockets = gpudash_sim::kubelet::serve(&sim, dir.path())?;
    // The Orin Nano's host tree: nvmap's table with its models' processes, their cgroups.
    let trees = gpudash_sim::kubelet::nvmap::serve(&sim, dir.path(), &["orin-nano-01".to_string()])?;
    let (table, proc_dir) = trees.roots["orin-nano-01"].clone();
    let (dcgm_port, _dcgm) =
        dcgm_exporter(std::fs::read_to_string(r.join("agent/fixtures/dcgm/rtx-a5000.prom"))?).await?;
    let listen = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let line = r.join("agent/fixtures/tegrastats/orin-nano-8gb.txt");
    let mut child = tokio::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .args(["--listen", &format!("127.0.0.1:{listen}"), "--node", "orin-nano-01", "--interval", "1"])
        .arg("--pod-resources")
        .arg(&sockets.sockets["orin-nano-01"])
        .args(["--tegrastats", &format!("while :; do cat '{}'; sleep 1; done", line.display())])
        .args(["--dcgm", &format!("http://127.0.0.1:{dcgm_port}/metrics")])
        .arg("--nvmap")
        .arg(&table)
        .arg("--proc")
        .arg(&proc_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting gpudash-agent")?;
    let pid = child.id().unwrap_or(0);
    let url = format!("http://127.0.0.1:{listen}/v1/report");
    let client = reqwest::Client::new();
    // Warm up until every source has answered.
    let t = Instant::now();
    loop {
        let body = client.get(&url).send().await.ok().map(|r| r.text());
        let body = match body {
            Some(f) => f.await.unwrap_or_default(),
            None => String::new(),
        };
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let pods = v["gpu_memory"]["value"]["pods"].as_array().map_or(0, Vec::len);
        if v["kubelet"]["value"].is_object()
            && v["tegrastats"]["value"].is_object()
            && v["dcgm"]["value"].is_array()
            && pods > 0
        {
            break;
        }
        if t.elapsed() > Duration::from_secs(60) {
            bail!("{label}: the agent did not read every source within 60 s: {body}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (c0, t0) = (cpu_ticks(pid), Instant::now());
    let mut pulls = 0u32;
    let mut bytes = 0usize;
    while t0.elapsed() < Duration::from_secs(seconds) {
        if let Ok(r) = client.get(&url).send().await {
            bytes = r.text().await.map(|b| b.len()).unwrap_or(0);
            pulls += 1;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let (ticks, wall) = (cpu_ticks(pid) - c0, t0.elapsed().as_secs_f64());
    let (rss, hwm) = (status_kib(pid, "VmRSS:"), status_kib(pid, "VmHWM:"));
    let _ = child.kill().await;
    // Clock ticks are 10 ms on Linux (USER_HZ 100).
    let cpu_pct = ticks as f64 * 0.01 / wall * 100.0;
    let (rss, hwm) = (rss as f64 / 1024.0, hwm as f64 / 1024.0);
    println!(
        "| {label} (1 s: kubelet, tegrastats, dcgm-exporter, nvmap + cgroups) | RSS {rss:.1} MiB (peak {hwm:.1} MiB) \
         | CPU {ticks} ticks in {wall:.1} s = {cpu_pct:.2} % of one core | {pulls} reports of {bytes} B |"
    );
    Ok(())
}

/// Runs the measurement and prints one table: the release agent natively, then the arm64
/// release agent under qemu-user where it is built (the emulator's own memory and its
/// translation's CPU are in those figures: an upper bound of what a board sees).
pub async fn run(seconds: u64) -> anyhow::Result<()> {
    let r = root();
    let exe = r.join("target/release/gpudash-agent");
    if !exe.is_file() {
        bail!("{} missing: run ./bench.sh (it builds the release agent)", exe.display());
    }
    measure("agent, amd64", &[exe.display().to_string()], seconds).await?;
    let arm = r.join("target/aarch64-unknown-linux-gnu/release/gpudash-agent");
    let qemu = std::process::Command::new("qemu-aarch64").arg("--version").output().is_ok_and(|o| o.status.success());
    if arm.is_file() && qemu {
        let cmd = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
            .map(String::from)
            .into_iter()
            .chain([arm.display().to_string()]);
        let cmd: Vec<String> = cmd.collect();
        measure("agent, arm64 under qemu-user", &cmd, seconds).await?;
        // The emulator's own share: the same binary with no source, serving only.
        let listen = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut idle = tokio::process::Command::new(&cmd[0])
            .args(&cmd[1..])
            .args(["--listen", &format!("127.0.0.1:{listen}"), "--pod-resources", "off"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("starting the idle arm64 agent")?;
        let client = reqwest::Client::new();
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let _ = client.get(format!("http://127.0.0.1:{listen}/v1/report")).send().await;
        }
        let pid = idle.id().unwrap_or(0);
        let rss = status_kib(pid, "VmRSS:") as f64 / 1024.0;
        let _ = idle.kill().await;
        println!("| agent, arm64 under qemu-user, no source (the emulator's baseline) | RSS {rss:.1} MiB | | |");
    } else {
        println!(
            "| agent, arm64 under qemu-user | not run: {} | | |",
            if qemu { "no arm64 release build" } else { "no qemu-aarch64" }
        );
    }
    for (arch, p) in [
        ("amd64", r.join("target/release/gpudash-agent")),
        ("arm64", r.join("target/aarch64-unknown-linux-gnu/release/gpudash-agent")),
        ("amd64", r.join("target/release/gpudash")),
        ("arm64", r.join("target/aarch64-unknown-linux-gnu/release/gpudash")),
    ] {
        match size_kib(&p) {
            Some(k) => println!(
                "| binary {} ({arch}, release) | {:.0} KiB ({:.1} MiB) |",
                p.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default(),
                k,
                k / 1024.0
            ),
            None => println!("| binary {} ({arch}) | not built |", p.display()),
        }
    }
    Ok(())
}
