//! `gpudash-agent`: reads the kubelet's pod-resources socket, `tegrastats` and dcgm-exporter
//! as asked, keeps the latest of each and serves them as JSON, read-only, on one port
//! (`GET /v1/report`, `GET /healthz`). One thread per source and plain std sockets for HTTP —
//! small enough for an Orin Nano; nothing on the node is changed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpudash_agent::report::{Report, VERSION};
use gpudash_agent::{dcgm, kubelet, podresources, tegrastats};

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
            std::process::exit(0);
        }
    }
}

/// Runs the tegrastats command for ever, restarting it 5 s after it ends.
fn read_tegrastats(cmd: String, report: Shared) {
    let fail = |why: String| {
        if let Some(t) = lock(&report).tegrastats.as_mut() {
            t.fail(why);
        }
    };
    loop {
        let child = Command::new("sh").arg("-c").arg(&cmd).stdout(Stdio::piped()).stderr(Stdio::null()).spawn();
        match child {
            Err(e) => fail(format!("cannot run {cmd:?}: {e}")),
            Ok(mut child) => {
                if let Some(out) = child.stdout.take() {
                    for line in BufReader::new(out).lines().map_while(Result::ok) {
                        let mut r = lock(&report);
                        let Some(t) = r.tegrastats.as_mut() else { continue };
                        match tegrastats::parse(&line) {
                            Ok(s) => t.set(s, now()),
                            Err(e) => t.fail(e),
                        }
                    }
                }
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
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
            match got {
                Ok(a) => k.set(a, now()),
                Err(e) => k.fail(e),
            }
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
            match got {
                Ok(g) => d.set(g, now()),
                Err(e) => d.fail(e),
            }
        }
        std::thread::sleep(every);
    }
}

fn respond(mut s: TcpStream, status: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes()));
}

fn serve(stream: TcpStream, report: &Mutex<Report>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 2048];
    let n = (&stream).read(&mut buf).unwrap_or(0);
    let req = String::from_utf8_lossy(&buf[..n]);
    let mut first = req.lines().next().unwrap_or("").split_whitespace();
    let (method, path) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    if method != "GET" {
        return respond(stream, "405 Method Not Allowed", r#"{"error":"read-only: GET only"}"#);
    }
    match path {
        "/healthz" => respond(stream, "200 OK", r#"{"ok":true}"#),
        "/v1/report" => {
            let mut r = lock(report).clone();
            r.generated_at = now();
            match serde_json::to_string(&r) {
                Ok(body) => respond(stream, "200 OK", &body),
                Err(e) => respond(
                    stream,
                    "500 Internal Server Error",
                    &serde_json::json!({"error": e.to_string()}).to_string(),
                ),
            }
        }
        _ => respond(stream, "404 Not Found", r#"{"error":"not found: /v1/report, /healthz"}"#),
    }
}

const USAGE: &str = "usage: gpudash-agent [--listen ADDR] [--node NAME] [--interval SECONDS]
       [--pod-resources SOCKET|off] [--tegrastats COMMAND] [--dcgm URL]
  --listen         where to serve /v1/report (default 0.0.0.0:9401)
  --node           the node's name (default $NODE_NAME)
  --interval       seconds between reads of the kubelet and dcgm-exporter (default 1)
  --pod-resources  the kubelet's pod-resources socket (default /var/lib/kubelet/pod-resources/kubelet.sock)
  --tegrastats     a command printing tegrastats lines, e.g. 'tegrastats --interval 1000' (Jetson)
  --dcgm           dcgm-exporter's metrics, e.g. http://127.0.0.1:9400/metrics (discrete GPUs)";

fn main() {
    // `--key value` and `--key=value` alike (manifests use the second).
    let args: Vec<String> = std::env::args()
        .skip(1)
        .flat_map(|a| match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => vec![k.to_string(), v.to_string()],
            _ => vec![a],
        })
        .collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let known = ["--listen", "--node", "--interval", "--pod-resources", "--tegrastats", "--dcgm"];
    if let Some(bad) = args.iter().step_by(2).find(|a| !known.contains(&a.as_str())) {
        eprintln!("gpudash-agent: unknown argument {bad:?}\n{USAGE}");
        std::process::exit(2);
    }
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let listen = get("--listen").unwrap_or_else(|| "0.0.0.0:9401".into());
    let every = match get("--interval").map(|s| s.parse::<f64>()) {
        None => Duration::from_secs(1),
        Some(Ok(s)) if (0.1..=3600.0).contains(&s) => Duration::from_secs_f64(s),
        Some(_) => {
            eprintln!("gpudash-agent: --interval takes seconds between 0.1 and 3600");
            std::process::exit(2);
        }
    };
    let listener = match TcpListener::bind(&listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("gpudash-agent: cannot listen on {listen}: {e} — choose another address with --listen");
            std::process::exit(2);
        }
    };
    let socket = get("--pod-resources").unwrap_or_else(|| podresources::DEFAULT_SOCKET.into());
    let tegra = get("--tegrastats");
    let dcgm_url = get("--dcgm");
    let report = Arc::new(Mutex::new(Report {
        version: VERSION,
        node: get("--node").or_else(|| std::env::var("NODE_NAME").ok()).filter(|n| !n.is_empty()),
        kubelet: (socket != "off").then(Default::default),
        tegrastats: tegra.is_some().then(Default::default),
        dcgm: dcgm_url.is_some().then(Default::default),
        ..Report::default()
    }));
    if socket != "off" {
        let r = report.clone();
        std::thread::spawn(move || read_kubelet(socket.into(), every, r));
    }
    if let Some(cmd) = tegra {
        let r = report.clone();
        std::thread::spawn(move || read_tegrastats(cmd, r));
    }
    if let Some(url) = dcgm_url {
        let r = report.clone();
        std::thread::spawn(move || read_dcgm(url, every, r));
    }
    if std::env::var_os("GPUDASH_AGENT_EXIT_WITH_PARENT").is_some() {
        std::thread::spawn(exit_with_parent);
    }
    eprintln!("gpudash-agent: serving /v1/report on {listen}");
    for stream in listener.incoming().map_while(Result::ok) {
        let r = report.clone();
        std::thread::spawn(move || serve(stream, &r));
    }
}
