//! The arm64 (Jetson) build under qemu-user: `gpudash serve --demo` answers `/readyz` and
//! serves the demo's view; `gpudash-agent` reads the simulator's kubelet socket and a recorded
//! Orin Nano tegrastats line and serves them. test.sh cross-compiles both first and sets
//! GPUDASH_ARM64_SMOKE=1; run alone without it, the test says it is skipped.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use gpudash_tests::{free_port, root, site_root, target_dir, Proc};

fn arm64_bin(name: &str) -> PathBuf {
    target_dir().join("aarch64-unknown-linux-gnu/debug").join(name)
}

fn wanted() -> bool {
    if std::env::var_os("GPUDASH_ARM64_SMOKE").is_none() {
        eprintln!("skipped: GPUDASH_ARM64_SMOKE is not set (test.sh builds the arm64 binaries and sets it)");
        return false;
    }
    true
}

/// `qemu-aarch64` running an arm64 binary with Debian's arm64 libraries.
fn qemu(bin: &str, args: &[String]) -> Proc {
    // gpudash sets glibc's malloc tunables by executing itself again when they are unset; under
    // qemu-user that exec would reach the host kernel, which cannot run an arm64 binary (glibc
    // then hands it to /bin/sh). So the emulated process is given them, as an operator may.
    let mut all = vec![
        "GLIBC_TUNABLES=glibc.malloc.arena_max=2".to_string(),
        "/usr/bin/qemu-aarch64".to_string(),
        "-L".to_string(),
        "/usr/aarch64-linux-gnu".to_string(),
        arm64_bin(bin).display().to_string(),
    ];
    all.extend(args.iter().cloned());
    let file =
        Command::new("file").arg(arm64_bin(bin)).output().map(|o| String::from_utf8_lossy(&o.stdout).to_string());
    assert!(file.as_deref().unwrap_or("").contains("aarch64"), "{bin} is an arm64 executable: {file:?}");
    Proc::spawn(std::path::Path::new("/usr/bin/env"), &all).expect("qemu-aarch64")
}

async fn get(url: &str, limit: Duration, want: impl Fn(&str) -> bool) -> String {
    let t = Instant::now();
    loop {
        let body = match reqwest::get(url).await {
            Ok(r) if r.status().is_success() => r.text().await.unwrap_or_default(),
            _ => String::new(),
        };
        if want(&body) || t.elapsed() > limit {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpudash_serves_its_demo_under_qemu_arm64() {
    if !wanted() {
        return;
    }
    let db = tempfile::tempdir().unwrap();
    let port = free_port();
    let args: Vec<String> = [
        "serve",
        "--demo",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--db",
        &db.path().join("h.db").display().to_string(),
        "--site-root",
        &site_root().display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let p = qemu("gpudash", &args);
    let ready = get(&format!("http://127.0.0.1:{port}/readyz"), Duration::from_secs(120), |b| !b.is_empty()).await;
    assert!(!ready.is_empty(), "/readyz under qemu\n{}", p.output());
    let view =
        get(&format!("http://127.0.0.1:{port}/api/v1/cluster"), Duration::from_secs(30), |b| b.contains("orin-agx-01"))
            .await;
    let v: serde_json::Value = serde_json::from_str(&view).unwrap_or_default();
    assert!(v["nodes"].as_array().is_some_and(|n| n.len() >= 5), "the demo's nodes: {view}");
    let page = get(&format!("http://127.0.0.1:{port}/"), Duration::from_secs(30), |b| b.contains("orin-agx-01")).await;
    assert!(page.contains("GPU overview"), "the server-rendered page");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_reads_a_kubelet_socket_and_tegrastats_under_qemu_arm64() {
    if !wanted() {
        return;
    }
    let scenario = std::fs::read_to_string(root().join("tests/scenarios/agent/agents.yaml")).unwrap_or_default();
    let sim = gpudash_sim::Simulator::new(gpudash_sim::Scenario::from_text("agents", &scenario).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let sockets = gpudash_sim::kubelet::serve(&sim, dir.path()).unwrap();
    // The board's host tree: nvmap's table and each model process's cgroup.
    let trees = gpudash_sim::kubelet::nvmap::serve(&sim, dir.path(), &["orin-nano-01".to_string()]).unwrap();
    let (table, proc_dir) = trees.roots["orin-nano-01"].clone();
    let fixture = root().join("agent/fixtures/tegrastats/orin-nano-8gb.txt");
    let port = free_port();
    let args: Vec<String> = vec![
        "--listen".into(),
        format!("127.0.0.1:{port}"),
        "--node".into(),
        "orin-nano-01".into(),
        "--pod-resources".into(),
        sockets.sockets["orin-nano-01"].display().to_string(),
        "--tegrastats".into(),
        format!("while :; do cat '{}'; sleep 1; done", fixture.display()),
        "--nvmap".into(),
        table.display().to_string(),
        "--proc".into(),
        proc_dir.display().to_string(),
    ];
    let p = qemu("gpudash-agent", &args);
    let body = get(&format!("http://127.0.0.1:{port}/v1/report"), Duration::from_secs(60), |b| {
        b.contains("ram_used_bytes") && b.contains("shelf-cam") && b.contains("\"uid\"")
    })
    .await;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}\n{}", p.output()));
    assert_eq!(v["tegrastats"]["value"]["ram_used_bytes"], 2147u64 * 1024 * 1024);
    assert_eq!(v["kubelet"]["value"]["allocatable"][0]["ids"], serde_json::json!(["tegra::0", "tegra::1"]));
    assert_eq!(v["kubelet"]["value"]["pods"].as_array().map(Vec::len), Some(2));
    // GPU memory by pod: the two models' processes mapped to their pods by cgroup path.
    let pods = v["gpu_memory"]["value"]["pods"].as_array().cloned().unwrap_or_default();
    assert!(
        pods.iter().any(|p| p["uid"] == "3f2a9c41-6b7d-4e85-9a10-5c4d3e2f1a0b" && p["bytes"].as_u64() > Some(0)),
        "{body}"
    );
    assert!(v["gpu_memory"]["value"]["outside_bytes"].as_u64() > Some(0), "the desktop's Xorg: {body}");
}
