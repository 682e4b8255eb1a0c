//! `gpudash-agent`: reads the kubelet's pod-resources socket, `tegrastats` and dcgm-exporter
//! as asked, keeps the latest of each and serves them as JSON, read-only, on one port
//! (`GET /v1/report`, `GET /healthz`). One thread per source and one for HTTP (a bounded number
//! of connections, each with a few seconds to ask) — small enough for an Orin Nano; nothing on
//! the node is changed.

mod http;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpudash_agent::report::{Report, VERSION};
use gpudash_agent::{dcgm, gpumem, kubelet, nvml, podresources, tegrastats};
use http::run_http;

type Shared = Arc<Mutex<Report>>;

fn lock(r: &Mutex<Report>) -> MutexGuard<'_, Report> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Ends the agent when the process that started it is gone (re-parented), however it ended:
/// demo mode's gpudash sets `GPUDASH_AGENT_EXIT_WITH_PARENT`, so a gpudash killed with SIGKILL
/// leaves no agents behind. (A parent-death signal needs `prctl`, which is unsafe code; the
/// workspace forbids it.) The tegrastats child then ends on its next write to the closed pipe.
fn exit_with_parent() {
    let parent = std::os::unix::process::parent_id();
    loop {
        std::thread::sleep(Duration::from_millis(250));
        if std::os::unix::process::parent_id() != parent {
            stop_children();
            std::process::exit(0);
        }
    }
}

/// Longest tegrastats line read (a real one is about 400 bytes); longer ones are dropped and
/// counted, and never held whole.
const MAX_LINE: usize = 4096;

/// The next line of `r`, at most `MAX_LINE` bytes kept: `Ok(None)` at the end, `Ok(Some(Err(n)))`
/// for a line of `n` bytes that was too long (read through and dropped).
fn next_line(r: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<Result<(), usize>>> {
    line.clear();
    let mut seen = 0usize;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((seen > 0).then_some(if seen > MAX_LINE { Err(seen) } else { Ok(()) }));
        }
        let (take, end) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if seen + take <= MAX_LINE {
            line.extend_from_slice(&buf[..take]);
        } else {
            line.clear();
        }
        seen += take;
        r.consume(take + usize::from(end));
        if end {
            return Ok(Some(if seen > MAX_LINE { Err(seen) } else { Ok(()) }));
        }
    }
}

/// Process groups of the commands this agent runs, stopped when it is.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Stops every command's process group (the shell and what it started).
fn stop_children() {
    let groups: Vec<u32> = CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
    for g in groups {
        if let Some(pid) = i32::try_from(g).ok().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        }
    }
}

/// Runs the tegrastats command for ever, restarting it 5 s after it ends. The command runs in a
/// process group of its own, stopped with the agent; lines are read at most one per `gap` (a
/// command that prints faster is held back by its pipe), and a line longer than `MAX_LINE` is
/// dropped.
fn read_tegrastats(cmd: String, gap: Duration, report: Shared) {
    use std::os::unix::process::CommandExt;
    let fail = |why: String| {
        if let Some(t) = lock(&report).tegrastats.as_mut() {
            t.fail(why);
        }
    };
    loop {
        let child = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match child {
            Err(e) => fail(format!("cannot run {cmd:?}: {e}")),
            Ok(mut child) => {
                CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).push(child.id());
                if let Some(out) = child.stdout.take() {
                    let mut reader = BufReader::with_capacity(8192, out);
                    let mut line = Vec::with_capacity(MAX_LINE);
                    let mut dropped = 0u64;
                    while let Ok(Some(got)) = next_line(&mut reader, &mut line) {
                        let started = std::time::Instant::now();
                        {
                            let mut r = lock(&report);
                            let Some(t) = r.tegrastats.as_mut() else { continue };
                            match got {
                                Ok(()) => match tegrastats::parse(&String::from_utf8_lossy(&line)) {
                                    Ok(s) => t.set(s, now()),
                                    Err(e) => t.fail(e),
                                },
                                Err(n) => {
                                    dropped += 1;
                                    t.fail(format!(
                                        "a line of {n} bytes is not tegrastats' (at most {MAX_LINE}); {dropped} dropped"
                                    ));
                                }
                            }
                        }
                        std::thread::sleep(gap.saturating_sub(started.elapsed()));
                    }
                }
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                CHILDREN.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| *p != child.id());
                fail(format!("{cmd:?} ended ({status}); started again in 5 s"));
            }
        }
        std::thread::sleep(Duration::from_secs(5));
    }
}

/// Asks the kubelet every `every`, on a single-threaded runtime of its own.
fn read_kubelet(socket: PathBuf, every: Duration, report: Shared) {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            if let Some(k) = lock(&report).kubelet.as_mut() {
                k.fail(format!("cannot start the gRPC client: {e}"));
            }
            return;
        }
    };
    let timeout = every.clamp(Duration::from_secs(1), Duration::from_secs(5));
    loop {
        let got = rt.block_on(kubelet::read(&socket, timeout));
        if let Some(k) = lock(&report).kubelet.as_mut() {
            k.record(got, now());
        }
        std::thread::sleep(every);
    }
}

/// Scrapes dcgm-exporter every `every`.
fn read_dcgm(url: String, every: Duration, report: Shared) {
    let timeout = every.clamp(Duration::from_secs(1), Duration::from_secs(5));
    loop {
        let got = dcgm::scrape(&url, timeout);
        if let Some(d) = lock(&report).dcgm.as_mut() {
            d.record(got, now());
        }
        std::thread::sleep(every);
    }
}

/// Where GPU memory by process is read.
enum GpuMemorySource {
    /// nvmap's table (Jetson, nvgpu stack).
    Nvmap(gpumem::Sources),
    /// NVML (`auto` or a library path), processes mapped under the host's `/proc`.
    Nvml(String, PathBuf),
}

/// Reads GPU memory by process and pod (nvmap or NVML) and devfreq's load every `every`. A
/// failure is kept in the report (and printed once while it lasts), the last good reading with
/// it; NVML that cannot be loaded is tried again every 30 s.
fn read_gpu_memory(src: Option<GpuMemorySource>, devfreq: Option<PathBuf>, every: Duration, report: Shared) {
    let mut said: Option<String> = None;
    let mut loaded: Option<nvml::Nvml> = None;
    let mut why_not = String::new();
    let mut tried: Option<std::time::Instant> = None;
    loop {
        if let Some(src) = &src {
            let got = match src {
                GpuMemorySource::Nvmap(s) => gpumem::read(s),
                GpuMemorySource::Nvml(lib, proc_dir) => {
                    if loaded.is_none() && tried.is_none_or(|t| t.elapsed() >= Duration::from_secs(30)) {
                        tried = Some(std::time::Instant::now());
                        match nvml::open(lib) {
                            Ok(n) => loaded = Some(n),
                            Err(e) => why_not = e,
                        }
                    }
                    match &loaded {
                        Some(n) => nvml::read(n, proc_dir),
                        None => Err(why_not.clone()),
                    }
                }
            };
            if let Err(e) = &got {
                if said.as_ref() != Some(e) {
                    eprintln!("gpudash-agent: {e}");
                    said = Some(e.clone());
                }
            } else {
                said = None;
            }
            if let Some(g) = lock(&report).gpu_memory.as_mut() {
                g.record(got, now());
            }
        }
        if let Some(path) = &devfreq {
            let got = gpumem::read_capped(path, 64)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
                .and_then(|t| {
                    gpumem::devfreq_load(&t)
                        .ok_or_else(|| format!("{}: not a load in tenths of a percent: {:?}", path.display(), t.trim()))
                });
            if let Some(d) = lock(&report).devfreq_busy.as_mut() {
                d.record(got, now());
            }
        }
        std::thread::sleep(every);
    }
}

const USAGE: &str = "usage: gpudash-agent [--listen ADDR] [--node NAME] [--interval SECONDS]
       [--pod-resources SOCKET|off] [--tegrastats COMMAND] [--dcgm URL]
       [--nvmap FILE] [--nvml auto|LIB] [--proc DIR] [--devfreq FILE]
  --listen         where to serve /v1/report (default 0.0.0.0:9401)
  --node           the node's name (default $NODE_NAME)
  --interval       seconds between reads of the kubelet and dcgm-exporter (default 1)
  --pod-resources  the kubelet's pod-resources socket (default /var/lib/kubelet/pod-resources/kubelet.sock)
  --tegrastats     a command printing tegrastats lines, e.g. 'tegrastats --interval 1000' (Jetson)
  --dcgm           dcgm-exporter's metrics, e.g. http://127.0.0.1:9400/metrics (discrete GPUs)
  --nvmap          nvmap's client table, for GPU memory per pod on Jetson (root; debugfs), e.g.
                   /host/sys/kernel/debug/nvmap/iovmm/clients (the host's, mounted read-only)
  --nvml           GPU memory per process from NVML instead (Jetson Thor, discrete GPUs): auto
                   loads libnvidia-ml.so, or give the library's path
  --proc           the host's /proc, to map each process to its pod (default /proc; in a
                   container mount the host's, e.g. /host/proc)
  --devfreq        the GPU's devfreq load (tenths of a percent), e.g.
                   /sys/class/devfreq/17000000.gpu/device/load (Orin) — Thor: gpu-gpc-0";

/// Says why the agent cannot start with what it was given, and exits with status 2.
fn refuse(why: &str) -> ! {
    eprintln!("gpudash-agent: {why}");
    std::process::exit(2);
}

/// The command line as `--key value` pairs (`--key=value` alike: manifests use the second);
/// prints the usage and exits on `--help`, refuses a key it does not know.
fn arguments() -> Vec<String> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .flat_map(|a| match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => vec![k.to_string(), v.to_string()],
            _ => vec![a],
        })
        .collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        std::process::exit(0);
    }
    let known = [
        "--listen",
        "--node",
        "--interval",
        "--pod-resources",
        "--tegrastats",
        "--dcgm",
        "--nvmap",
        "--nvml",
        "--proc",
        "--devfreq",
    ];
    if let Some(bad) = args.iter().step_by(2).find(|a| !known.contains(&a.as_str())) {
        refuse(&format!("unknown argument {bad:?}\n{USAGE}"));
    }
    args
}

fn main() {
    let args = arguments();
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let listen = get("--listen").unwrap_or_else(|| "0.0.0.0:9401".into());
    let every = match get("--interval").map(|s| s.parse::<f64>()) {
        None => Duration::from_secs(1),
        Some(Ok(s)) if (0.1..=3600.0).contains(&s) => Duration::from_secs_f64(s),
        Some(_) => refuse("--interval takes seconds between 0.1 and 3600"),
    };
    let listener = TcpListener::bind(&listen)
        .unwrap_or_else(|e| refuse(&format!("cannot listen on {listen}: {e} — choose another address with --listen")));
    let socket = get("--pod-resources").unwrap_or_else(|| podresources::DEFAULT_SOCKET.into());
    let tegra = get("--tegrastats");
    let dcgm_url = get("--dcgm");
    let proc_dir: PathBuf = get("--proc").unwrap_or_else(|| "/proc".into()).into();
    let gpu_memory = match (get("--nvml"), get("--nvmap")) {
        (Some(_), Some(_)) => refuse("--nvml and --nvmap are two ways to read the same thing: give one"),
        (Some(lib), None) => Some(GpuMemorySource::Nvml(lib, proc_dir)),
        (None, Some(n)) => Some(GpuMemorySource::Nvmap(gpumem::Sources { nvmap: n.into(), proc: proc_dir })),
        (None, None) => None,
    };
    let devfreq: Option<PathBuf> = get("--devfreq").map(Into::into);
    let report = Arc::new(Mutex::new(Report {
        version: VERSION,
        node: get("--node").or_else(|| std::env::var("NODE_NAME").ok()).filter(|n| !n.is_empty()),
        kubelet: (socket != "off").then(Default::default),
        tegrastats: tegra.is_some().then(Default::default),
        dcgm: dcgm_url.is_some().then(Default::default),
        gpu_memory: gpu_memory.is_some().then(Default::default),
        devfreq_busy: devfreq.is_some().then(Default::default),
        ..Report::default()
    }));
    if socket != "off" {
        let r = report.clone();
        std::thread::spawn(move || read_kubelet(socket.into(), every, r));
    }
    if let Some(cmd) = tegra {
        let r = report.clone();
        let gap = (every / 2).max(Duration::from_millis(50));
        std::thread::spawn(move || read_tegrastats(cmd, gap, r));
    }
    if let Some(url) = dcgm_url {
        let r = report.clone();
        std::thread::spawn(move || read_dcgm(url, every, r));
    }
    if gpu_memory.is_some() || devfreq.is_some() {
        let r = report.clone();
        std::thread::spawn(move || read_gpu_memory(gpu_memory, devfreq, every, r));
    }
    if std::env::var_os("GPUDASH_AGENT_EXIT_WITH_PARENT").is_some() {
        // SIGTERM when the parent dies (handled below: the commands are stopped too), and a
        // watch for re-parenting besides, as the signal follows the parent's thread.
        let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM));
        std::thread::spawn(exit_with_parent);
    }
    eprintln!("gpudash-agent: serving /v1/report on {listen}");
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gpudash-agent: cannot start: {e}");
            stop_children();
            std::process::exit(1);
        }
    };
    rt.block_on(run_http(listener, report));
}
