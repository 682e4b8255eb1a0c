//! The peer, kubectl-view-allocations, on the same cluster as gpudash: its wall time, peak RSS
//! and whether it agrees with gpudash on the allocated GPUs per node and resource.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::proc::{root, status_kib};

/// Allocated units per node and GPU resource in a view, to compare with the peer.
pub(crate) fn per_resource(view: &serde_json::Value) -> Vec<(String, String, u64)> {
    view["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| {
            let node = n["name"].as_str().unwrap_or("").to_string();
            n["gpu_resources"].as_array().into_iter().flatten().map(move |g| {
                (node.clone(), g["resource"].as_str().unwrap_or("").to_string(), g["allocated"].as_u64().unwrap_or(0))
            })
        })
        .collect()
}

/// kubectl-view-allocations, when installed (./bench.sh --peer installs it).
pub(crate) fn peer_bin() -> Option<std::path::PathBuf> {
    Some(root().join("target/peer/bin/kubectl-view-allocations")).filter(|p| p.exists())
}

/// One run of the peer on `kc`: its wall time, peak RSS in KiB and output (CSV); `None` when it
/// cannot start.
pub(crate) fn time_peer(bin: &Path, kc: &Path) -> Option<(f64, u64, String)> {
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(["-r", "gpu", "-o", "csv"])
        .env("KUBECONFIG", kc)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let pid = child.id();
    // Read its output while it runs: at 1000 nodes the CSV outgrows the pipe, and a child
    // blocked on a full pipe never exits.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut text);
            }
            text
        })
    };
    let out_reader = drain(child.stdout.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>));
    let err_reader = drain(child.stderr.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>));
    let mut peak = 0;
    while child.try_wait().ok().flatten().is_none() {
        peak = peak.max(status_kib(pid, "VmHWM:"));
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = t.elapsed().as_secs_f64();
    let out = out_reader.join().unwrap_or_default();
    let _ = err_reader.join();
    Some((wall, peak, out))
}

/// kubectl-view-allocations, when installed (./bench.sh --peer installs it), on the same cluster.
pub(crate) fn peer(kc: &Path, ours: &[(String, String, u64)], size: &str, our_sync: f64) {
    let Some((wall, peak, out)) = peer_bin().and_then(|bin| time_peer(&bin, kc)) else {
        return;
    };
    // CSV columns: Date,Kind,resource,node,pod,Requested,...; `-r gpu` keeps resources whose
    // name contains "gpu" (so not MIG profiles such as nvidia.com/mig-1g.5gb).
    let mut theirs: HashMap<(String, String), f64> = HashMap::new();
    for line in out.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() > 5 && f[1] == "node" {
            if let Ok(v) = f[5].parse::<f64>() {
                *theirs.entry((f[3].to_string(), f[2].to_string())).or_default() += v;
            }
        }
    }
    // Both directions: every (node, resource) the peer counts, and every one of ours it would count.
    let mut disagree: Vec<String> = Vec::new();
    for ((node, res), t) in &theirs {
        let a = ours.iter().find(|(n, r, _)| n == node && r == res).map_or(0, |x| x.2);
        if (t - a as f64).abs() >= 0.5 {
            disagree.push(format!("{node} {res}: peer {t}, gpudash {a}"));
        }
    }
    for (node, res, a) in ours.iter().filter(|(_, r, a)| r.contains("gpu") && *a > 0) {
        if !theirs.contains_key(&(node.clone(), res.clone())) {
            disagree.push(format!("{node} {res}: peer none, gpudash {a}"));
        }
    }
    let verdict = if disagree.is_empty() {
        format!("agree on allocated GPUs per node and resource ({} pairs)", theirs.len())
    } else {
        format!("DISAGREE on {}: {}", disagree.len(), disagree.iter().take(3).cloned().collect::<Vec<_>>().join("; "))
    };
    println!("| {size} | kubectl-view-allocations | {wall:.2} s | {:.1} MiB peak | gpudash first view {our_sync:.2} s | {verdict} |", peak as f64 / 1024.0);
}
