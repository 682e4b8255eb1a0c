//! `gpudash-agent` (in progress, issue #16): runs `tegrastats`, keeps its latest sample and
//! serves it as JSON, read-only, on one port. Plain std threads and sockets: small enough for an
//! Orin Nano, nothing on the node is changed. Next: the kubelet's pod-resources socket and
//! dcgm-exporter.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gpudash_agent::tegrastats;
use serde::Serialize;

/// What the agent last read from tegrastats.
#[derive(Debug, Default, Clone, Serialize)]
struct Board {
    /// The latest sample.
    sample: Option<tegrastats::Sample>,
    /// When it was read (Unix seconds).
    seen_at: Option<u64>,
    /// Why there is no fresh sample (the command failed, a line could not be read).
    error: Option<String>,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Runs the tegrastats command for ever, restarting it 5 s after it ends.
fn read_tegrastats(cmd: String, board: Arc<Mutex<Board>>) {
    loop {
        let child = Command::new("sh").arg("-c").arg(&cmd).stdout(Stdio::piped()).stderr(Stdio::null()).spawn();
        match child {
            Err(e) => board.lock().unwrap_or_else(|e| e.into_inner()).error = Some(format!("cannot run {cmd:?}: {e}")),
            Ok(mut child) => {
                if let Some(out) = child.stdout.take() {
                    for line in BufReader::new(out).lines().map_while(Result::ok) {
                        let mut b = board.lock().unwrap_or_else(|e| e.into_inner());
                        match tegrastats::parse(&line) {
                            Ok(s) => {
                                b.sample = Some(s);
                                b.seen_at = Some(now());
                                b.error = None;
                            }
                            Err(e) => b.error = Some(e.to_string()),
                        }
                    }
                }
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                board.lock().unwrap_or_else(|e| e.into_inner()).error =
                    Some(format!("{cmd:?} ended ({status}); started again in 5 s"));
            }
        }
        std::thread::sleep(Duration::from_secs(5));
    }
}

fn respond(mut s: TcpStream, status: &str, body: &str) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes()).and_then(|()| s.write_all(body.as_bytes()));
}

fn serve(stream: TcpStream, board: &Mutex<Board>) {
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
            let b = board.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let body = serde_json::json!({"generated_at": now(), "tegrastats": b}).to_string();
            respond(stream, "200 OK", &body)
        }
        _ => respond(stream, "404 Not Found", r#"{"error":"not found: /v1/report, /healthz"}"#),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get =
        |k: &str, d: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned().unwrap_or(d.into());
    let listen = get("--listen", "0.0.0.0:9401");
    let cmd = get("--tegrastats", "tegrastats --interval 1000");
    let listener = match TcpListener::bind(&listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("gpudash-agent: cannot listen on {listen}: {e} — choose another address with --listen");
            std::process::exit(2);
        }
    };
    let board = Arc::new(Mutex::new(Board::default()));
    let b = board.clone();
    std::thread::spawn(move || read_tegrastats(cmd, b));
    eprintln!("gpudash-agent: serving /v1/report on {listen}");
    for stream in listener.incoming().map_while(Result::ok) {
        let b = board.clone();
        std::thread::spawn(move || serve(stream, &b));
    }
}
