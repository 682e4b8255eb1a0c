//! The HTTP/1.1 accept loop, with the bounds `axum::serve` does not set: a connection must send
//! its request headers (the first, and each next one on a kept-alive connection) within the
//! header-read timeout, and no more than a fixed number of connections are open at once — fewer
//! than the process may open descriptors, so a flood of silent connections can neither hold the
//! server's sockets for ever nor make `accept` fail with "Too many open files" for the probes.
//! Connections over the cap are accepted and closed at once (the listen queue keeps moving).
//! HTTP/2 is not served: gpudash sits behind proxies that speak HTTP/1.1 to it, and its stream is
//! server-sent events.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

/// The listen queue's length: a burst of connections (kiosks and browsers reconnecting at once,
/// or a flood) waits in the kernel's accept queue instead of being turned into SYN cookies the
/// server never sees. Bound with the platform default (128 here), 600 connections opened at once
/// reached the server as ~180, so a flood was not even seen by the connection cap.
pub const BACKLOG: u32 = 1024;

/// Binds `addr` with [`BACKLOG`] (the kernel caps it at `net.core.somaxconn`).
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// The most a connection's read buffer holds (hyper's default is ~400 KB): a request's head
/// must fit (a browser's headers are a few KB; a larger head gets 431), a body streams through
/// it. 500 connections of one unterminated 384 KB header once took a site 35 -> 237 MiB.
pub const MAX_READ_BUFFER: usize = 32 * 1024;

/// The bounds of the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Time a connection has to send a request's headers.
    pub header_read: Duration,
    /// Connections open at once (lowered to what the descriptor limit allows).
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { header_read: Duration::from_secs(10), max_connections: 4096 }
    }
}

/// The process' soft limit on open descriptors, from `/proc/self/limits`.
fn open_files_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// The connection cap: the configured one, but at most the descriptor limit less 128 (the
/// database, the watches, the agents' pulls and the log need theirs), and at least 16.
pub fn effective_cap(configured: usize, nofile: Option<usize>) -> usize {
    let room = nofile.map_or(usize::MAX, |n| n.saturating_sub(128));
    configured.min(room).max(16)
}

/// Serves `router` on `listener` until `signal` completes; then stops accepting, lets open
/// connections finish their request (at most 10 s) and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    signal: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cap = effective_cap(limits.max_connections, open_files_limit());
    if cap < limits.max_connections {
        tracing::warn!(cap, configured = limits.max_connections, "connection cap lowered to fit the open-files limit");
    }
    let permits = Arc::new(Semaphore::new(cap));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut signal = std::pin::pin!(signal);
    let mut refused: u64 = 0;
    loop {
        let accepted = tokio::select! {
            () = &mut signal => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors or memory for a moment: wait rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(cap, refused, "connection cap reached: closing new connections");
            }
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let svc = router.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                let svc = svc.clone();
                req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                async move { Ok::<_, Infallible>(svc.oneshot(req.map(Body::new)).await.unwrap_or_else(|e| match e {})) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read).max_buf_size(MAX_READ_BUFFER);
            let conn = builder.serve_connection(TokioIo::new(stream), svc).with_upgrades();
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "connection ended");
                    }
                }
                () = async { let _ = stop.wait_for(|s| *s).await; } => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(10), conn).await;
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection gives its permit back when it ends.
    let all = u32::try_from(cap).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(Duration::from_secs(11), permits.acquire_many(all)).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head larger than the read buffer is refused (431) without being held: the connection
    /// costs at most [`MAX_READ_BUFFER`]. Before, hyper buffered ~400 KB per connection.
    #[tokio::test]
    async fn a_head_larger_than_the_read_buffer_is_refused() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let addr = listener.local_addr().unwrap();
        let router = Router::new().route("/", axum::routing::get(|| async { "ok" }));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, router, Limits::default(), async move {
            let _ = stopped.await;
        }));
        let ask = |head: String| async move {
            let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
            // The server may answer and close before the whole head is written.
            let _ = c.write_all(head.as_bytes()).await;
            let mut got = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(10), c.read_to_end(&mut got)).await;
            String::from_utf8_lossy(&got).into_owned()
        };
        let small = ask("GET / HTTP/1.1\r\nHost: a\r\nCookie: x=".to_string()
            + &"a".repeat(8 * 1024)
            + "\r\nConnection: close\r\n\r\n")
        .await;
        assert!(small.starts_with("HTTP/1.1 200"), "{small}");
        let big =
            ask("GET / HTTP/1.1\r\nHost: a\r\nCookie: x=".to_string() + &"a".repeat(384 * 1024) + "\r\n\r\n").await;
        assert!(big.starts_with("HTTP/1.1 431"), "{big}");
        let _ = stop.send(());
        let _ = server.await;
    }

    #[test]
    fn the_cap_leaves_room_under_the_descriptor_limit() {
        assert_eq!(effective_cap(4096, Some(1024)), 896);
        assert_eq!(effective_cap(4096, Some(1_048_576)), 4096);
        assert_eq!(effective_cap(4096, None), 4096);
        assert_eq!(effective_cap(4096, Some(64)), 16);
        assert!(open_files_limit().is_some_and(|n| n > 0), "read from /proc/self/limits");
    }
}
