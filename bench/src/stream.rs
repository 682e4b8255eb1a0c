//! Browser stream clients: each reads `/api/v1/stream` and notes when each probe sequence number
//! (the probe node's `gpudash.dev/seq` label) first reaches it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;

/// `n` stream clients, stopped when dropped.
pub struct Clients {
    /// `(probe seq, when it first arrived)` per client, in arrival order.
    arrivals: Arc<Mutex<Vec<(u64, Instant)>>>,
    /// Client 0's `(bytes, events with data)` since the last reset.
    bytes0: Arc<Mutex<(u64, u64)>>,
    /// Clients that received their first (whole) view.
    ready: Arc<AtomicUsize>,
    /// When the last client so far received its first view.
    last_ready: Arc<Mutex<Option<Instant>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Clients {
    pub fn spawn(url: &str, n: usize) -> Self {
        let arrivals: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::default();
        let bytes0: Arc<Mutex<(u64, u64)>> = Arc::default();
        let ready = Arc::new(AtomicUsize::new(0));
        let last_ready: Arc<Mutex<Option<Instant>>> = Arc::default();
        let mut tasks = Vec::new();
        for c in 0..n {
            let (arrivals, bytes0, ready, url) = (arrivals.clone(), bytes0.clone(), ready.clone(), url.to_string());
            let last_ready = last_ready.clone();
            tasks.push(tokio::spawn(async move {
                // As the browser asks: nodes as cards, gzip (inflated here as it arrives).
                let http = reqwest::Client::new();
                let req = http.get(format!("{url}/api/v1/stream?nodes=cards")).header("accept-encoding", "gzip");
                let Ok(r) = req.send().await else { return };
                let mut inflate = (r.headers().get("content-encoding").is_some_and(|v| v == "gzip"))
                    .then(gpudash::publish::Inflate::default);
                let mut s = r.bytes_stream();
                let mut buf: Vec<u8> = Vec::new();
                let mut last_seq = 0u64;
                let mut first = true;
                // Where the search for the end of the current event resumes (a whole view is
                // megabytes at 1000 nodes: scanning it again for every chunk would be the
                // bottleneck).
                let mut scanned = 0usize;
                while let Some(Ok(chunk)) = s.next().await {
                    if c == 0 {
                        bytes0.lock().unwrap_or_else(|e| e.into_inner()).0 += chunk.len() as u64;
                    }
                    match inflate.as_mut() {
                        Some(i) => {
                            if i.push(&chunk, &mut buf, 256 << 20).is_err() {
                                return;
                            }
                        }
                        None => buf.extend_from_slice(&chunk),
                    }
                    loop {
                        let Some(end) = memchr::memmem::find(&buf[scanned..], b"\n\n").map(|e| e + scanned) else {
                            scanned = buf.len().saturating_sub(1);
                            break;
                        };
                        scanned = 0;
                        let ev: Vec<u8> = buf.drain(..end + 2).collect();
                        if first {
                            first = false;
                            // The time first, then the count: whoever sees all counted sees
                            // the last time.
                            *last_ready.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                            ready.fetch_add(1, Ordering::Relaxed);
                        }
                        if c == 0 && memchr::memmem::find(&ev, b"data:").is_some() {
                            bytes0.lock().unwrap_or_else(|e| e.into_inner()).1 += 1;
                        }
                        // Searched as bytes: a whole view is megabytes (no UTF-8 check of it).
                        let key = b"\"gpudash.dev/seq\",\"";
                        if let Some(i) = memchr::memmem::find(&ev, key) {
                            let rest = &ev[i + key.len()..];
                            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                            let seq: u64 =
                                std::str::from_utf8(&rest[..digits]).ok().and_then(|s| s.parse().ok()).unwrap_or(0);
                            if seq > last_seq {
                                last_seq = seq;
                                arrivals.lock().unwrap_or_else(|e| e.into_inner()).push((seq, Instant::now()));
                            }
                        }
                    }
                }
            }));
        }
        Self { arrivals, bytes0, ready, last_ready, tasks }
    }

    /// Waits until every client has its first view (at most `limit`); the seconds from the
    /// call to the moment the last of them had it (until the twenty-second round this was
    /// when a look every 100 ms found them all: each figure rounded up to the next look).
    pub async fn wait_ready(&self, limit: Duration) -> f64 {
        let t = Instant::now();
        while self.ready.load(Ordering::Relaxed) < self.tasks.len() && t.elapsed() < limit {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let last = *self.last_ready.lock().unwrap_or_else(|e| e.into_inner());
        match last {
            Some(at) if self.ready.load(Ordering::Relaxed) >= self.tasks.len() => {
                at.saturating_duration_since(t).as_secs_f64()
            }
            _ => t.elapsed().as_secs_f64(),
        }
    }

    /// Starts counting client 0's bytes and pushes afresh.
    pub fn reset_bytes(&self) {
        *self.bytes0.lock().unwrap_or_else(|e| e.into_inner()) = (0, 0);
    }

    /// Client 0's `(bytes, pushes)` since the last reset.
    pub fn bytes(&self) -> (u64, u64) {
        *self.bytes0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Milliseconds from each probe's `since` instant to its arrival at each client.
    pub fn latencies(&self, since: &HashMap<u64, Instant>) -> Vec<f64> {
        self.arrivals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(|(seq, at)| since.get(seq).map(|t| at.saturating_duration_since(*t).as_secs_f64() * 1000.0))
            .collect()
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}
