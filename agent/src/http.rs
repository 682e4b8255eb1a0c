//! The agent's HTTP answer: `/v1/report` and `/healthz`, read-only, on one thread, with a cap
//! on connections and on the time each has.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpudash_agent::report::Report;

use crate::{lock, now, stop_children, Shared};

/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 256;
/// Connections served at once from one address: gpudash pulls with one at a time, so a peer
/// holding many (300 trickling connections once kept every slot and gpudash read the node's
/// agent as stale) takes only its own share.
const MAX_PER_PEER: usize = 16;

/// Open connections per peer address.
#[derive(Debug, Default, Clone)]
struct PeerSlots(Arc<Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>);

/// A connection's place in [`PeerSlots`], given back when dropped.
struct PeerSlot(PeerSlots, std::net::IpAddr);

impl PeerSlots {
    /// A slot for `peer`, or `None` while it holds [`MAX_PER_PEER`].
    fn take(&self, peer: std::net::IpAddr) -> Option<PeerSlot> {
        let mut m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = m.entry(peer).or_default();
        if *n >= MAX_PER_PEER {
            return None;
        }
        *n += 1;
        Some(PeerSlot(self.clone(), peer))
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut m = (self.0).0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}
/// Time a connection has to send its request and take the answer.
const REQUEST_TIME: Duration = Duration::from_secs(3);
/// Largest request head read.
const MAX_HEAD: usize = 8192;

fn response(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The answer to a request head (its first line: method, target, version).
fn answer(head: &str, report: &Mutex<Report>) -> String {
    let mut first = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    // The query string is ignored, as a file server ignores it.
    let path = target.split(['?', '#']).next().unwrap_or("");
    if method != "GET" && method != "HEAD" {
        return response("405 Method Not Allowed", r#"{"error":"read-only: GET only"}"#);
    }
    match path {
        "/healthz" => response("200 OK", r#"{"ok":true}"#),
        "/v1/report" => {
            let mut r = lock(report).clone();
            r.generated_at = now();
            match serde_json::to_string(&r) {
                Ok(body) => response("200 OK", &body),
                Err(e) => {
                    response("500 Internal Server Error", &serde_json::json!({"error": e.to_string()}).to_string())
                }
            }
        }
        _ => response("404 Not Found", r#"{"error":"not found: /v1/report, /healthz"}"#),
    }
}

/// Reads a request head (until the blank line, however many packets it comes in) and answers.
async fn serve(mut s: tokio::net::TcpStream, report: Shared) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    loop {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&chunk[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            break;
        }
        if head.len() > MAX_HEAD {
            let r = response("431 Request Header Fields Too Large", r#"{"error":"request head too large"}"#);
            return s.write_all(r.as_bytes()).await;
        }
    }
    let r = answer(&String::from_utf8_lossy(&head), &report);
    s.write_all(r.as_bytes()).await?;
    s.shutdown().await
}

/// Serves HTTP on one thread: each connection a task with `REQUEST_TIME` to finish, at most
/// `MAX_CONNECTIONS` at once. Ends (stopping the commands) on SIGTERM or SIGINT.
pub(crate) async fn run_http(listener: std::net::TcpListener, report: Shared) {
    use tokio::signal::unix::{signal, SignalKind};
    let listener = match listener.set_nonblocking(true).and_then(|()| tokio::net::TcpListener::from_std(listener)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("gpudash-agent: cannot serve: {e}");
            stop_children();
            std::process::exit(1);
        }
    };
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        eprintln!("gpudash-agent: cannot handle signals");
        stop_children();
        std::process::exit(1);
    };
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let peers = PeerSlots::default();
    let mut refused = 0u64;
    loop {
        let accepted = tokio::select! {
            _ = term.recv() => break,
            _ = int.recv() => break,
            a = listener.accept() => a,
        };
        let Ok((stream, peer)) = accepted else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let Some(mine) = peers.take(peer.ip()) else {
            refused += 1;
            if refused.is_power_of_two() {
                eprintln!("gpudash-agent: {refused} connections closed ({} holds {MAX_PER_PEER})", peer.ip());
            }
            continue;
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            refused += 1;
            if refused.is_power_of_two() {
                eprintln!("gpudash-agent: {refused} connections closed at the cap of {MAX_CONNECTIONS}");
            }
            continue;
        };
        let r = report.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(REQUEST_TIME, serve(stream, r)).await;
            drop(permit);
            drop(mine);
        });
    }
    stop_children();
    std::process::exit(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_peer_holds_at_most_its_share_of_the_slots() {
        let slots = PeerSlots::default();
        let (a, b): (std::net::IpAddr, std::net::IpAddr) = ([192, 0, 2, 1].into(), [10, 42, 0, 9].into());
        let held: Vec<PeerSlot> = (0..MAX_PER_PEER).filter_map(|_| slots.take(a)).collect();
        assert_eq!(held.len(), MAX_PER_PEER);
        assert!(slots.take(a).is_none(), "the peer's share is full");
        assert!(slots.take(b).is_some(), "gpudash's own address still gets in");
        drop(held);
        let again = slots.take(a);
        assert!(again.is_some(), "given back when the connections end");
        assert!(slots.0.lock().unwrap().get(&a).is_some_and(|n| *n == 1));
        drop(again);
        assert!(slots.0.lock().unwrap().is_empty(), "no entry kept for a peer with none open");
    }
}
