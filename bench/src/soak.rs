//! `gpudash-bench --demo-soak SECONDS [--speed N]`: the demo served with its timeline played N
//! times faster (default 150: a factory day in under ten minutes), its agents running and one
//! browser stream open; gpudash's RSS (and its agents') sampled every 2 s. Prints the first
//! simulated hour's RSS, the end's, the highest, and the simulated time covered, and fails when
//! the end is more than 10 % above the first hour (issue 34: the demo must not grow for weeks).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::proc::{root, rss_kib, Killer};

/// Every live descendant's pid (demo agents and their tegrastats commands).
fn descendants(pid: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            Some((p, ppid))
        })
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for (c, _) in all.iter().filter(|x| x.1 == p) {
            out.push(*c);
            frontier.push(*c);
        }
    }
    out
}

pub async fn run(secs: u64, speed: f64) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let bin = root().join("target/release/gpudash");
    let child = Command::new(&bin)
        .args(["serve", "--demo", "--demo-speed", &speed.to_string(), "--listen", &format!("127.0.0.1:{port}"), "--db"])
        .arg(dir.path().join("h.db"))
        .arg("--site-root")
        .arg(root().join("target/site"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| {
            format!("{} (build it with cargo build --release -p gpudash -p gpudash-agent)", bin.display())
        })?;
    let pid = child.id();
    let _kill = Killer(child);
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let t = Instant::now();
    while !http.get(format!("{url}/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
        anyhow::ensure!(t.elapsed() < Duration::from_secs(30), "gpudash did not get ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // One browser's stream, read and dropped as it arrives.
    let stream = http.get(format!("{url}/api/v1/stream")).send().await?;
    let reader = tokio::spawn(async move {
        use futures::StreamExt;
        let mut s = stream.bytes_stream();
        let mut bytes = 0u64;
        while let Some(Ok(c)) = s.next().await {
            bytes += c.len() as u64;
        }
        bytes
    });
    let start = Instant::now();
    let mut samples: Vec<(f64, f64, f64)> = Vec::new(); // (simulated hours, gpudash MiB, agents MiB)
    while start.elapsed() < Duration::from_secs(secs) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let hours = start.elapsed().as_secs_f64() * speed / 3600.0;
        let own = rss_kib(pid) as f64 / 1024.0;
        let agents: f64 = descendants(pid).into_iter().map(|p| rss_kib(p) as f64 / 1024.0).sum();
        samples.push((hours, own, agents));
        if samples.len().is_multiple_of(15) {
            eprintln!(
                "soak: {:.0} s, {hours:.1} simulated h: gpudash {own:.1} MiB, agents {agents:.1} MiB",
                start.elapsed().as_secs_f64()
            );
        }
    }
    reader.abort();
    let max_of = |it: &mut dyn Iterator<Item = f64>| it.fold(0.0, f64::max);
    let first_hour = max_of(&mut samples.iter().filter(|s| s.0 <= 1.0).map(|s| s.1));
    let tail = samples.len().div_ceil(10).max(1);
    let end = max_of(&mut samples[samples.len().saturating_sub(tail)..].iter().map(|s| s.1));
    let highest = max_of(&mut samples.iter().map(|s| s.1));
    let agents_first = max_of(&mut samples.iter().filter(|s| s.0 <= 1.0).map(|s| s.2));
    let agents_end = max_of(&mut samples[samples.len().saturating_sub(tail)..].iter().map(|s| s.2));
    let covered = samples.last().map_or(0.0, |s| s.0);
    let growth = if first_hour > 0.0 { (end / first_hour - 1.0) * 100.0 } else { f64::NAN };
    println!("| demo speed | real time | simulated | gpudash RSS, first simulated hour | at the end | highest | growth | agents' RSS, first hour → end |");
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {speed}× | {secs} s | {covered:.1} h | {first_hour:.1} MiB | {end:.1} MiB | {highest:.1} MiB | {growth:+.1} % | {agents_first:.1} → \
            {agents_end:.1} MiB |"
    );
    anyhow::ensure!(growth <= 10.0, "gpudash grew {growth:.1} % over a soak of {covered:.1} simulated hours");
    Ok(())
}
