//! One site's live view: `GET {url}/api/v1/stream` with its bearer token, TLS verified; the
//! whole view first, then deltas applied to it. Anything the site sends (events, keep-alives)
//! counts as contact; a dropped or silent stream is reconnected with backoff, and the last view
//! is kept (shown stale, never zeroed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::model::{ClusterView, ViewDelta};
use futures::StreamExt;

use crate::sites::Site;
use crate::view::Known;

/// Every site's state, in the sites file's order.
pub type Shared = Arc<Mutex<Vec<(String, String, Known)>>>;

/// A stream silent this long (the site sends a keep-alive every 15 s) is dropped and opened again.
const SILENCE: Duration = Duration::from_secs(40);

fn update(shared: &Shared, i: usize, f: impl FnOnce(&mut Known)) {
    if let Some(s) = shared.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
        f(&mut s.2);
    }
}

/// One server-sent event: its type and data.
fn event(block: &str) -> Option<(String, String)> {
    let mut kind = "message".to_string();
    let mut data: Vec<&str> = Vec::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            kind = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    (!data.is_empty()).then(|| (kind, data.join("\n")))
}

/// Splits a byte stream into server-sent events (blocks ending in a blank line), looking at
/// each byte once: a view of many MiB arrives in thousands of chunks, and scanning the whole
/// buffer again on each one (as this did) took 25–28 s of a core for a 24 MiB event.
#[derive(Debug, Default)]
struct Framer {
    buf: Vec<u8>,
    /// Where the next event starts.
    start: usize,
    /// How far the buffer has been searched for the blank line.
    scanned: usize,
}

impl Framer {
    /// Adds a chunk (first dropping the events already taken, and giving back the room a large
    /// view took: ten 1,000-node sites kept 16 MiB of buffer each for as long as they stayed
    /// connected).
    fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
            if self.buf.capacity() > 1 << 20 && self.buf.len() * 4 < self.buf.capacity() {
                self.buf.shrink_to(self.buf.len().max(64 << 10));
            }
        }
        self.buf.extend_from_slice(chunk);
    }

    /// Bytes of the event not yet complete.
    fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next complete event, without its blank line.
    fn next_event(&mut self) -> Option<Vec<u8>> {
        // A blank line split between two chunks: look one byte back.
        let from = self.scanned.saturating_sub(1).max(self.start);
        match self.buf.get(from..)?.windows(2).position(|w| w == b"\n\n") {
            Some(p) => {
                let end = from + p;
                let event = self.buf.get(self.start..end).map(<[u8]>::to_vec);
                self.start = end + 2;
                self.scanned = self.start;
                event
            }
            None => {
                self.scanned = self.buf.len();
                None
            }
        }
    }
}

/// A view's JSON is decoded on a blocking thread when it is this large, so that a 1,000-node
/// site's view does not hold up the other sites on the same async worker.
const DECODE_APART: usize = 256 << 10;

/// The largest event taken from a site (a 1,000-node view is a few MiB); a larger one ends the
/// connection with that said in the site's error and the log.
const MAX_EVENT: usize = 64 << 20;

async fn decode_view(data: String) -> Result<ClusterView, String> {
    if data.len() < DECODE_APART {
        return serde_json::from_str(&data).map_err(|e| e.to_string());
    }
    tokio::task::spawn_blocking(move || serde_json::from_str::<ClusterView>(&data).map_err(|e| e.to_string()))
        .await
        .map_err(|e| e.to_string())?
}

/// Drops what the fleet never reads from a site's nodes — each pod's memory, every label, the
/// namespaces (the cards, the fleet's series and its metrics read GPU resources, memory totals,
/// the agent's state and the site's totals) — so that a 1,000-node site costs the fleet its
/// numbers, not its pods. Deltas replace nodes whole, so a node is slimmed once on arrival.
fn slim(v: &mut ClusterView) {
    for node in &mut v.nodes {
        if !(node.pods.is_empty() && node.labels.is_empty() && node.namespaces.is_empty()) {
            let n = Arc::make_mut(node);
            n.pods = Vec::new();
            n.labels = Vec::new();
            n.namespaces = Vec::new();
        }
    }
}

/// An error with its causes (reqwest's own text says only "error sending request").
fn chain(e: &reqwest::Error) -> String {
    // The URL is the site's own (in the sites file): the causes are what is new.
    let mut out = if e.is_connect() {
        "connection failed".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}

/// Opens the site's stream: compressed, and nodes as cards (the fleet drops a node's pods
/// anyway): a 1,000-node site's first view is ~0.4 MB on the wire instead of 7 MB. A site too
/// old for either sends what it sends; both are read. Errs with why it could not.
async fn connect(client: &reqwest::Client, site: &Site) -> Result<reqwest::Response, String> {
    let mut req = client
        .get(format!("{}/api/v1/stream?nodes=cards", site.url))
        .header("Accept", "text/event-stream")
        .header("Accept-Encoding", "gzip");
    if let Some(t) = &site.token {
        req = req.bearer_auth(t);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return Err(format!("cannot connect: {}", chain(&e))),
    };
    if !resp.status().is_success() {
        let hint = if resp.status() == reqwest::StatusCode::UNAUTHORIZED { " (check its token_file)" } else { "" };
        return Err(format!("{}/api/v1/stream answered {}{hint}", site.url, resp.status()));
    }
    Ok(resp)
}

/// Applies one event to the site's view: a whole view replaces it, a delta changes it. Ok(false)
/// for an event that is neither; Err with why the stream must be opened again.
async fn apply(kind: &str, data: String, view: &mut Option<ClusterView>) -> Result<bool, String> {
    match kind {
        "message" => match decode_view(data).await {
            Ok(v) => *view = Some(v),
            Err(e) => return Err(format!("not a gpudash view: {e}")),
        },
        "delta" => {
            let Some(v) = view.as_mut() else { return Err("a delta before the view".into()) };
            match serde_json::from_str::<ViewDelta>(&data).map(|d| d.apply(v)) {
                Ok(true) => {}
                // A delta from another base: open the stream again for the whole view.
                Ok(false) => return Err("a delta from another revision: catching up".into()),
                Err(e) => return Err(format!("not a gpudash delta: {e}")),
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Why a connection ended.
async fn follow(
    client: &reqwest::Client,
    site: &Site,
    i: usize,
    shared: &Shared,
    changed: &tokio::sync::Notify,
) -> String {
    let resp = match connect(client, site).await {
        Ok(r) => r,
        Err(why) => return why,
    };
    // Why the last connection failed stays said until the site sends a view again: a site that
    // connects and then says nothing keeps its reason on the card between attempts.
    update(shared, i, |k| k.connected = true);
    let mut inflate = resp
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"))
        .then(gpudash_web::wire::Inflate::default);
    let mut body = resp.bytes_stream();
    // Bytes, not text: a character split between two chunks is decoded once its event is whole.
    let mut frames = Framer::default();
    let mut inflated = Vec::new();
    let mut view: Option<ClusterView> = None;
    loop {
        let chunk = match tokio::time::timeout(SILENCE, body.next()).await {
            Err(_) => return format!("silent for {} s", SILENCE.as_secs()),
            Ok(None) => return "the stream ended".into(),
            Ok(Some(Err(e))) => return format!("the stream broke: {}", chain(&e)),
            Ok(Some(Ok(c))) => c,
        };
        let now = jiff::Timestamp::now();
        update(shared, i, |k| k.last_contact = Some(now));
        match inflate.as_mut() {
            Some(inf) => {
                inflated.clear();
                // No chunk may inflate past the event cap (a bomb is a broken site, not memory).
                if let Err(e) = inf.push(&chunk, &mut inflated, MAX_EVENT) {
                    return format!("a compressed stream that cannot be read: {e}");
                }
                frames.push(&inflated);
                if inflated.capacity() > 1 << 20 {
                    inflated = Vec::new();
                }
            }
            None => frames.push(&chunk),
        }
        while let Some(raw) = frames.next_event() {
            let Ok(block) = String::from_utf8(raw) else { return "an event that is not UTF-8".into() };
            let Some((kind, data)) = event(&block) else { continue };
            match apply(&kind, data, &mut view).await {
                Ok(true) => {}
                Ok(false) => continue,
                Err(why) => return why,
            }
            if let Some(v) = view.as_mut() {
                slim(v);
            }
            let snapshot = view.clone().map(Arc::new);
            update(shared, i, |k| {
                k.view = snapshot;
                k.down_since = None;
                k.error = None;
            });
            changed.notify_one();
        }
        if frames.pending() > MAX_EVENT {
            return format!("an event larger than {} MiB", MAX_EVENT >> 20);
        }
    }
}

/// Follows a site for as long as the task lives.
pub async fn run(site: Site, i: usize, client: reqwest::Client, shared: Shared, changed: Arc<tokio::sync::Notify>) {
    let mut pause = Duration::from_millis(500);
    loop {
        let began = std::time::Instant::now();
        let why = follow(&client, &site, i, &shared, &changed).await;
        let now = jiff::Timestamp::now();
        update(&shared, i, |k| {
            if k.connected || k.error.as_deref() != Some(why.as_str()) {
                tracing::warn!(site = %site.name, url = %site.url, "{why}; trying again");
            }
            k.connected = false;
            k.error = Some(why);
            k.down_since.get_or_insert(now);
        });
        changed.notify_one();
        // A connection that held for a while starts the backoff over.
        if began.elapsed() > Duration::from_secs(30) {
            pause = Duration::from_millis(500);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(30));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_as_browsers_read_them() {
        assert_eq!(event("id: 3\nevent: delta\ndata: {\"a\":1}\n\n"), Some(("delta".into(), "{\"a\":1}".into())));
        assert_eq!(event("data: x\ndata: y\n\n"), Some(("message".into(), "x\ny".into())));
        assert_eq!(event(": keep-alive\n\n"), None);
    }

    /// Every way two events can be cut into chunks (a blank line split between two chunks
    /// included) frames the same two events.
    #[test]
    fn events_split_anywhere_are_framed_the_same() {
        let stream = b"event: delta\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: x\n\n";
        for cut in 0..stream.len() {
            for cut2 in cut..stream.len() {
                let mut f = Framer::default();
                let mut got = Vec::new();
                for part in [&stream[..cut], &stream[cut..cut2], &stream[cut2..]] {
                    f.push(part);
                    while let Some(e) = f.next_event() {
                        got.push(String::from_utf8(e).unwrap_or_default());
                    }
                }
                assert_eq!(got, ["event: delta\ndata: {\"a\":1}", ": keep-alive", "data: x"], "cut at {cut}, {cut2}");
                assert_eq!(f.pending(), 0);
            }
        }
    }

    /// A 24 MiB event in 16 KiB chunks (a 1,000-node view as it arrives): each byte looked at
    /// once. Scanning the whole buffer on every chunk took 25–28 s for this in a release build.
    #[test]
    fn a_24_mib_event_is_framed_in_linear_time() {
        let body = vec![b'x'; 24 << 20];
        let t = std::time::Instant::now();
        let mut f = Framer::default();
        f.push(b"data: ");
        let mut events = 0;
        for chunk in body.chunks(16 << 10) {
            f.push(chunk);
            while f.next_event().is_some() {
                events += 1;
            }
        }
        assert_eq!((events, f.pending()), (0, 6 + (24 << 20)));
        f.push(b"\n\n");
        let e = f.next_event().unwrap_or_default();
        assert_eq!(e.len(), 6 + (24 << 20));
        // Debug build, a shared 2-core machine: linear is well under a second; quadratic was
        // about 1,500 chunks × 12 MiB.
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "{:?}", t.elapsed());
    }
}
