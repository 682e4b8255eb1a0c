//! The agent as a process: it runs a stand-in for `tegrastats` that prints a recorded AGX Orin
//! line, and serves what it read over HTTP; bad requests and a failing command are said.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(port: u16, method: &str, path: &str) -> String {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return String::new() };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.write_all(format!("{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn start(cmd: &str) -> (Kill, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_or(0, |a| a.port());
    let child = Command::new(env!("CARGO_BIN_EXE_gpudash-agent"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--tegrastats", cmd])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gpudash-agent");
    (Kill(child), port)
}

fn wait_for(port: u16, want: &str) -> String {
    let t = Instant::now();
    loop {
        let r = get(port, "GET", "/v1/report");
        if r.contains(want) || t.elapsed() > Duration::from_secs(10) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_agent_serves_what_tegrastats_printed() {
    let fixture = format!("{}/fixtures/tegrastats/agx-orin-64gb.txt", env!("CARGO_MANIFEST_DIR"));
    // A stand-in that prints the recorded line once a second, as tegrastats does.
    let (_agent, port) = start(&format!("for i in 1 2 3 4 5 6 7 8 9 10; do cat '{fixture}'; sleep 1; done"));
    let r = wait_for(port, "ram_used_bytes");
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let body = r.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["tegrastats"]["value"]["ram_used_bytes"], 4321u64 * 1024 * 1024);
    assert_eq!(v["tegrastats"]["value"]["gpu_busy_percent"], 0);
    assert!(v["tegrastats"]["seen_at"].is_u64());
    assert!(get(port, "GET", "/healthz").starts_with("HTTP/1.1 200"));
    assert!(get(port, "POST", "/v1/report").starts_with("HTTP/1.1 405"), "read-only");
    assert!(get(port, "GET", "/nope").starts_with("HTTP/1.1 404"));
}

#[test]
fn a_tegrastats_that_cannot_run_is_said_not_zeroed() {
    let (_agent, port) = start("exit 3");
    let r = wait_for(port, "ended");
    let body = r.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {r}"));
    assert!(v["tegrastats"]["value"].is_null(), "{v}");
    assert!(v["tegrastats"]["error"].as_str().is_some_and(|e| e.contains("ended")), "{v}");
}

/// Starts the agent with `args` (and no kubelet socket).
fn start_with(args: &[&str]) -> (Kill, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_or(0, |a| a.port());
    let child = Command::new(env!("CARGO_BIN_EXE_gpudash-agent"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--pod-resources", "off", "--interval", "0.2"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gpudash-agent");
    (Kill(child), port)
}

fn report(r: &str) -> serde_json::Value {
    let body = r.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {r}"))
}

#[test]
fn gpu_memory_sources_that_cannot_be_read_say_what_to_mount_and_a_bad_devfreq_is_said() {
    // No debugfs here: the reason per-pod GPU memory is unknown, and the mount to add.
    let (_a, port) = start_with(&["--nvmap", "/nonexistent/sys/kernel/debug/nvmap/iovmm/clients"]);
    let v = report(&wait_for(port, "per-pod GPU memory is unknown"));
    assert!(v["gpu_memory"]["value"].is_null(), "{v}");
    assert!(v["gpu_memory"]["error"].as_str().is_some_and(|e| e.contains("/sys/kernel/debug")), "{v}");
    // No NVIDIA driver here: NVML's library cannot be loaded, and the reading says so.
    let (_b, port) = start_with(&["--nvml", "/nonexistent/libnvidia-ml.so.1", "--devfreq", "/proc/version"]);
    let v = report(&wait_for(port, "cannot load NVML"));
    assert!(v["gpu_memory"]["value"].is_null(), "{v}");
    assert!(v["devfreq_busy"]["error"].as_str().is_some_and(|e| e.contains("not a load")), "{v}");
    // A devfreq load file: tenths of a percent.
    let dir = tempfile::tempdir().unwrap();
    let load = dir.path().join("load");
    std::fs::write(&load, "367\n").unwrap();
    let (_c, port) = start_with(&["--devfreq", &load.display().to_string()]);
    let v = report(&wait_for(port, "36.7"));
    assert_eq!(v["devfreq_busy"]["value"].as_f64().map(|f| (f * 10.0).round()), Some(367.0), "{v}");
    // Both ways to read GPU memory at once is a usage error.
    let both = Command::new(env!("CARGO_BIN_EXE_gpudash-agent"))
        .args(["--listen", "127.0.0.1:0", "--nvmap", "x", "--nvml", "auto"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("give one"));
}
