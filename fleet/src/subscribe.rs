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

/// A site has this long to answer the stream's request with its headers.
const HEADERS: Duration = Duration::from_secs(15);

/// An event begun must end within this (a 1,000-node site's first view takes about a second):
/// a site that trickles bytes, each within [`SILENCE`], would otherwise hold its follower and
/// a growing buffer for ever.
const EVENT_TIME: Duration = Duration::from_secs(120);

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

/// Nodes kept of one site's view; past this, the rest are cut and the card says so (the site's
/// totals stay whole). A 1,000-node site is the largest measured.
pub const MAX_SITE_NODES: usize = 5000;

/// Drops what the fleet never reads from a site's view — its lists (pending pods, diagnoses,
/// blocked workloads, quotas: a site may send tens of MB of them; one sending a valid 60 MB view
/// every 3 s once took the fleet 72 -> 608 MiB) and from its nodes each pod's memory, every
/// label, the namespaces (the cards, the fleet's series and its metrics read GPU resources,
/// memory totals, the agent's state and the site's totals) — and cuts nodes past
/// [`MAX_SITE_NODES`], so that a site costs the fleet its numbers, not its pods. Deltas replace
/// nodes whole, so a node is slimmed once on arrival. What was cut, in words, if anything.
fn slim(v: &mut ClusterView) -> Option<String> {
    v.pending = Vec::new();
    v.diagnoses = Vec::new();
    v.blocked = Vec::new();
    v.quotas = Vec::new();
    let all = v.nodes.len();
    v.nodes.truncate(MAX_SITE_NODES);
    for node in &mut v.nodes {
        if !(node.pods.is_empty() && node.labels.is_empty() && node.namespaces.is_empty()) {
            let n = Arc::make_mut(node);
            n.pods = Vec::new();
            n.labels = Vec::new();
            n.namespaces = Vec::new();
        }
    }
    (all > MAX_SITE_NODES)
        .then(|| format!("{all} nodes sent: the fleet keeps the first {MAX_SITE_NODES} (the totals count every node)"))
}

/// Applies a delta to a view the fleet keeps without lists ([`slim`]): the delta's list pieces,
/// which refer to items the fleet did not keep, are dropped, and the rest applies (nodes,
/// totals, revision). False when the view is not the delta's base.
fn apply_lean(mut d: ViewDelta, v: &mut ClusterView) -> bool {
    d.pending = Vec::new();
    d.diagnoses = Vec::new();
    d.blocked = Vec::new();
    d.quotas = Vec::new();
    d.apply(v)
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
async fn connect(client: &reqwest::Client, site: &Site, headers: Duration) -> Result<reqwest::Response, String> {
    let mut req = client
        .get(format!("{}/api/v1/stream?nodes=cards", site.url))
        .header("Accept", "text/event-stream")
        .header("Accept-Encoding", "gzip");
    if let Some(t) = &site.token {
        req = req.bearer_auth(t);
    }
    // A site that accepts the connection and never answers held its follower for good.
    let resp = match tokio::time::timeout(headers, req.send()).await {
        Err(_) => return Err(format!("no answer within {} s", headers.as_secs_f64())),
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(format!("cannot connect: {}", chain(&e))),
    };
    if !resp.status().is_success() {
        let hint = if resp.status() == reqwest::StatusCode::UNAUTHORIZED {
            " (check its token_file)"
        } else if resp.status().is_redirection() {
            // The client follows none: a redirect could send the fleet into its own network.
            " (the fleet follows no redirects: give the site's own address)"
        } else {
            ""
        };
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
            match serde_json::from_str::<ViewDelta>(&data).map(|d| apply_lean(d, v)) {
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
    let resp = match connect(client, site, HEADERS).await {
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
    let mut cut: Option<String> = None;
    // Since when an event has been arriving (bytes of one not yet whole).
    let mut begun: Option<std::time::Instant> = None;
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
            if kind == "message" {
                cut = view.as_mut().and_then(slim);
            } else if let Some(v) = view.as_mut() {
                // A delta's changed nodes arrive whole, and may add nodes past the cap.
                if let Some(c) = slim(v) {
                    cut = Some(c);
                }
            }
            let snapshot = view.clone().map(Arc::new);
            let note = cut.clone();
            update(shared, i, |k| {
                k.view = snapshot;
                k.down_since = None;
                k.error = None;
                k.cut = note;
            });
            changed.notify_one();
        }
        if frames.pending() > MAX_EVENT {
            return format!("an event larger than {} MiB", MAX_EVENT >> 20);
        }
        begun = (frames.pending() > 0).then(|| begun.unwrap_or_else(std::time::Instant::now));
        if begun.is_some_and(|b| b.elapsed() > EVENT_TIME) {
            return format!("an event not finished within {} s", EVENT_TIME.as_secs());
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

    fn site(url: String) -> Site {
        Site { name: "probe".into(), url, token: None, ca_file: None }
    }

    /// A site that accepts the connection and never answers: the follower gives up after the
    /// header timeout with that said (it hung for good, the card saying `unreachable` and no
    /// reason). A redirect is not followed, and the card says why.
    #[tokio::test]
    async fn a_silent_site_times_out_and_a_redirect_is_not_followed() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = silent.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((c, _)) = silent.accept().await {
                open.push(c);
            }
        });
        let s = site(format!("http://{addr}"));
        let client = crate::client(&s).unwrap();
        let t = std::time::Instant::now();
        let why = connect(&client, &s, Duration::from_millis(300)).await.err().unwrap_or_default();
        assert!(why.contains("no answer within 0.3 s"), "{why}");
        assert!(t.elapsed() < Duration::from_secs(5));
        held.abort();
        // A site that answers with a redirect into the fleet's network.
        let redirecting = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = redirecting.local_addr().unwrap();
        let app =
            axum::Router::new().fallback(|| async { axum::response::Redirect::temporary("http://10.0.0.1/internal") });
        let server = tokio::spawn(async move { axum::serve(redirecting, app).await });
        let s = site(format!("http://{addr}"));
        let why = connect(&client, &s, Duration::from_secs(5)).await.err().unwrap_or_default();
        assert!(why.contains("307") && why.contains("follows no redirects"), "{why}");
        server.abort();
    }

    /// The fleet keeps no list of a site's and at most [`MAX_SITE_NODES`] nodes; it says what
    /// it cut. Deltas still apply (to the nodes and totals).
    #[test]
    fn a_site_view_keeps_its_numbers_not_its_lists_and_at_most_the_node_cap() {
        use app::model::{Diagnosis, NodeView, PendingPod};
        let mut v = ClusterView {
            revision: 4,
            nodes: (0..MAX_SITE_NODES + 3)
                .map(|i| Arc::new(NodeView { name: format!("n{i:05}"), ..NodeView::default() }))
                .collect(),
            pending: vec![PendingPod::default(); 1000],
            diagnoses: (0..1000).map(|_| Arc::new(Diagnosis::default())).collect(),
            ..ClusterView::default()
        };
        v.totals.nodes = u32::try_from(MAX_SITE_NODES + 3).unwrap_or(0);
        let cut = slim(&mut v);
        assert_eq!((v.nodes.len(), v.pending.len(), v.diagnoses.len()), (MAX_SITE_NODES, 0, 0));
        assert!(cut.is_some_and(|c| c.contains("5003 nodes sent")));
        // A delta whose pending pieces refer to a list the fleet did not keep applies all the same.
        let mut next = v.clone();
        next.revision = 5;
        next.totals.pending = 7;
        let d = ViewDelta { base: 4, revision: 5, totals: next.totals.clone(), ..ViewDelta::default() };
        assert!(apply_lean(d, &mut v));
        assert_eq!((v.revision, v.totals.pending), (5, 7));
        let mut small = ClusterView { nodes: vec![Arc::new(NodeView::default())], ..ClusterView::default() };
        assert_eq!(slim(&mut small), None);
    }

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
