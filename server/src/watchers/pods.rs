//! The pods' list-then-watch: the list asked for in protobuf (JSON where the server only
//! speaks JSON, as the simulator does: read as it arrives, each pod handed on once its bytes
//! are in — `json_list`), the watch that follows as kube-rs' JSON watch. It
//! yields kube-rs' watcher events, so the store, the change check and the liveness handling
//! are the same as for every other kind.
//!
//! Why not kube-rs' watcher: it lists in JSON only, and on a real API server writing 30,000
//! pods as JSON took the server 4.3–5.8 s against 1.0–1.4 s in protobuf (docs/benchmarks.md).
//! The states follow kube-rs' watcher (list at `resourceVersion=0`, "not older than", from
//! the watch cache; watch from the list's version; bookmarks move it; 410 Gone lists again;
//! a watch silent past its timeout is reopened).

use std::ops::Range;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http_body_util::BodyExt;
use kube::api::{WatchEvent, WatchParams};
use kube::core::Status;
use kube::runtime::watcher::{Error, Event};
use kube::{Api, Client, ResourceExt};

use super::json_list::Splitter;
use super::pod_wire::{self, PodItems};
use crate::pod::Pod;

/// The page size asked for (kube-rs' and client-go's).
const PAGE: u32 = 500;
/// What the list request accepts: protobuf first, JSON from servers without it.
const ACCEPT: &str = "application/vnd.kubernetes.protobuf, application/json;q=0.9";
/// Kubernetes' protobuf media type.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// Past the watch's own timeout, how long a silent watch is waited for (as kube-rs does).
const IDLE_MARGIN: Duration = Duration::from_secs(5);

/// One page of the list being handed on.
enum Page {
    /// Protobuf, read whole (its version and next token known from the start).
    Protobuf { version: String, next: String, items: PodItems },
    /// JSON, read as it arrives: its version and next token are known at its end.
    Json(Box<JsonPage>),
}

/// A JSON page: its pods as a thread decodes them from the body while it arrives
/// ([`decode_json`]), a batch at a time.
struct JsonPage {
    rx: tokio::sync::mpsc::Receiver<Batch>,
    batch: std::vec::IntoIter<Pod>,
    /// The page's (resourceVersion, next token), once the decoder reached its end.
    end: Option<(String, String)>,
}

/// What the decoding thread hands on.
enum Batch {
    /// The pods of one read of the body.
    Pods(Vec<Pod>),
    /// The page's end: its (resourceVersion, next token), or why it is no list.
    End(kube::Result<(String, String)>),
}

/// How many batches may wait between the decoding thread and the watcher (a batch is one read
/// of the body, ~70 pods of the simulator's 64 KiB writes): the decoder waits past that, so
/// memory stays bounded whatever the list's size.
const BATCHES: usize = 16;

impl Page {
    /// The next pod; None at the page's end.
    async fn next(&mut self) -> Option<kube::Result<Pod>> {
        match self {
            Self::Protobuf { items, .. } => items.next().map(|r| r.map_err(decode_error)),
            Self::Json(page) => page.next().await,
        }
    }

    /// At the page's end: (its resourceVersion, the next page's token or empty).
    fn end(self) -> kube::Result<(String, String)> {
        match self {
            Self::Protobuf { version, next, .. } => Ok((version, next)),
            Self::Json(page) => page.end.ok_or_else(|| kube::Error::Service("the pods' list ended unread".into())),
        }
    }
}

impl JsonPage {
    /// Starts reading `body` ahead on the runtime and decoding it on a blocking thread.
    fn start(body: kube::client::Body) -> Self {
        let (tx, rx) = tokio::sync::mpsc::channel(BATCHES);
        let frames = read_ahead(body);
        tokio::task::spawn_blocking(move || {
            let end = decode_json(frames, &tx);
            // Gone: the watcher stopped reading (it was dropped, or it failed).
            let _ = tx.blocking_send(Batch::End(end));
        });
        Self { rx, batch: Vec::new().into_iter(), end: None }
    }

    async fn next(&mut self) -> Option<kube::Result<Pod>> {
        loop {
            if let Some(p) = self.batch.next() {
                return Some(Ok(p));
            }
            if self.end.is_some() {
                return None;
            }
            match self.rx.recv().await {
                Some(Batch::Pods(pods)) => self.batch = pods.into_iter(),
                Some(Batch::End(Ok(end))) => self.end = Some(end),
                Some(Batch::End(Err(e))) => return Some(Err(e)),
                None => return Some(Err(kube::Error::Service("the pods' list decoder stopped".into()))),
            }
        }
    }
}

/// How many of the body's reads may wait for the decoder (each at most hyper's read buffer,
/// 400 KiB; the simulator's are 64 KiB): the reader waits past that, so memory stays bounded.
const FRAMES: usize = 32;

/// How many waiting reads one batch of pods is decoded from at most.
const DRAIN: usize = 4;

/// Reads `body` on the runtime as fast as it comes, ahead of its decoding. Why: a body is read
/// on demand (hyper's connection reads the socket again only once the last read was taken), so
/// read from the decoding thread each read waited for two thread hand-overs while neither the
/// decoder nor the server worked (a tenth to a quarter of both cores idle during the list,
/// docs/benchmarks.md). Ends at the body's end, after its error, or when the decoder is gone.
fn read_ahead(mut body: kube::client::Body) -> tokio::sync::mpsc::Receiver<kube::Result<Bytes>> {
    let (tx, rx) = tokio::sync::mpsc::channel(FRAMES);
    tokio::spawn(async move {
        loop {
            let read = match body.frame().await {
                None => return,
                Some(Err(e)) => Err(e),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => Ok(data),
                    Err(_) => continue,
                },
            };
            let failed = read.is_err();
            if tx.send(read).await.is_err() || failed {
                return;
            }
        }
    });
    rx
}

/// Items of a list to decode elsewhere: their bytes, one after the other as the list had
/// them, and where each is in `bytes`.
struct Items {
    bytes: Vec<u8>,
    at: Vec<Range<usize>>,
}

/// Decodes a JSON list's body, read ahead as it arrives ([`read_ahead`]), on this (blocking)
/// thread and a helper it starts, handing its pods on a read at a time, beside the watcher
/// that stores them. Returns the list's (resourceVersion, next token) once every pod is handed
/// on. Why a helper: at 30,000 pods decoding takes a core 0.2 s, more than the server takes
/// to write the list, and was what the list waited for (docs/benchmarks.md); while the helper
/// is busy this thread decodes what comes itself, so a helper that cannot start or keep up
/// costs nothing.
fn decode_json(
    frames: tokio::sync::mpsc::Receiver<kube::Result<Bytes>>,
    tx: &tokio::sync::mpsc::Sender<Batch>,
) -> kube::Result<(String, String)> {
    std::thread::scope(|s| {
        let (work, todo) = std::sync::mpsc::sync_channel::<Items>(1);
        let helper = std::thread::Builder::new()
            .name("gpudash-decode".into())
            .spawn_scoped(s, move || {
                for items in todo {
                    let pods =
                        items.at.iter().map(|r| decode_pod(&items.bytes[r.clone()])).collect::<kube::Result<_>>()?;
                    hand_on(tx, pods)?;
                }
                Ok(())
            })
            .ok();
        let end = split_json(frames, tx, helper.is_some().then_some(&work));
        drop(work);
        let helped = match helper {
            Some(h) => h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => Ok(()),
        };
        let end = end?;
        helped.map(|()| end)
    })
}

/// A listed pod, as the store keeps it, its facts found here on a decoding thread (two share a
/// list) rather than on the watcher's task, which shares the async workers with the socket the
/// list is read from. The watcher strips it again and asks for its facts again: nothing left to
/// drop, and the facts are kept.
fn decode_pod(bytes: &[u8]) -> kube::Result<Pod> {
    let pod = Pod::from_json_stripped(bytes).map_err(kube::Error::SerdeError)?;
    let _ = pod.facts();
    Ok(pod)
}

/// Hands a batch of pods on to the watcher.
fn hand_on(tx: &tokio::sync::mpsc::Sender<Batch>, pods: Vec<Pod>) -> kube::Result<()> {
    if !pods.is_empty() && tx.blocking_send(Batch::Pods(pods)).is_err() {
        return Err(kube::Error::Service("the pods' list was no longer read".into()));
    }
    Ok(())
}

/// [`decode_json`]'s own part: splits the body into its items as it arrives, gives the second
/// half of each read's items to the helper (`work`) when it has nothing waiting, and decodes
/// the rest. Returns the list's (resourceVersion, next token).
fn split_json(
    mut frames: tokio::sync::mpsc::Receiver<kube::Result<Bytes>>,
    tx: &tokio::sync::mpsc::Sender<Batch>,
    work: Option<&std::sync::mpsc::SyncSender<Items>>,
) -> kube::Result<(String, String)> {
    let mut split = Splitter::default();
    let mut at = Vec::new();
    while let Some(data) = frames.blocking_recv() {
        split.push(&data?);
        // What came while the last batch was decoded joins this one (fewer, larger batches
        // when the decoder is behind; a few reads at most, so the store is not kept waiting).
        for _ in 1..DRAIN {
            match frames.try_recv() {
                Ok(more) => split.push(&more?),
                Err(_) => break,
            }
        }
        at.clear();
        while let Some(r) = split.next_item().map_err(decode_error)? {
            at.push(r);
        }
        let mut mine = &at[..];
        if let (Some(work), [_, _, ..]) = (work, &at[..]) {
            let (first, second) = at.split_at(at.len() / 2);
            let (start, end) = (second[0].start, second[second.len() - 1].end);
            let items = Items {
                bytes: split.item(start..end).to_vec(),
                at: second.iter().map(|r| r.start - start..r.end - start).collect(),
            };
            // Busy (a batch already waits) or gone (it failed: said when it is joined): here.
            if work.try_send(items).is_ok() {
                mine = first;
            }
        }
        let pods = mine.iter().map(|r| decode_pod(split.item(r.clone()))).collect::<kube::Result<_>>()?;
        hand_on(tx, pods)?;
    }
    let meta: kube::core::ListMeta = match split.finish().map_err(decode_error)? {
        Some(m) => serde_json::from_slice(&m).map_err(kube::Error::SerdeError)?,
        None => kube::core::ListMeta::default(),
    };
    Ok((meta.resource_version.unwrap_or_default(), meta.continue_.unwrap_or_default()))
}

enum State {
    Empty,
    /// A page's items being handed on.
    Listing(Page),
    Listed {
        version: String,
    },
    Watching {
        version: String,
        stream: WatchEvents,
    },
}

/// The pods' watch, as kube-rs decodes it.
type WatchEvents = BoxStream<'static, kube::Result<WatchEvent<Pod>>>;

/// One step: the event to hand on, if any, and the state after it.
type Step = (Option<Result<Event<Pod>, Error>>, State);

/// Every pod, listed then watched; `timeout` is each watch request's server-side timeout.
pub fn watch(client: Client, timeout: u32) -> impl Stream<Item = Result<Event<Pod>, Error>> + Send {
    let api = Api::<Pod>::all(client.clone());
    futures::stream::unfold((State::Empty, client, api), move |(mut state, client, api)| async move {
        loop {
            let (event, next) = step(state, &client, &api, timeout).await;
            state = next;
            if let Some(ev) = event {
                return Some((ev, (state, client, api)));
            }
        }
    })
}

async fn step(state: State, client: &Client, api: &Api<Pod>, timeout: u32) -> Step {
    match state {
        State::Empty => match list(client, "").await {
            Ok(page) => (Some(Ok(Event::Init)), State::Listing(page)),
            Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
        },
        State::Listing(mut page) => match page.next().await {
            Some(Ok(pod)) => (Some(Ok(Event::InitApply(pod))), State::Listing(page)),
            Some(Err(e)) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
            None => match page.end() {
                Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
                // A list without a version cannot be watched from (the watch would start at
                // "now" and miss what happened since the list): list again, as kube-rs does.
                Ok((version, next)) if next.is_empty() && version.is_empty() => {
                    (Some(Err(Error::NoResourceVersion)), State::Empty)
                }
                Ok((version, next)) if next.is_empty() => (Some(Ok(Event::InitDone)), State::Listed { version }),
                // The next page (a server that pages: one without a watch cache).
                Ok((_, next)) => match list(client, &next).await {
                    Ok(page) => (None, State::Listing(page)),
                    Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
                },
            },
        },
        State::Listed { version } => {
            let wp = WatchParams::default().timeout(timeout);
            match api.watch(&wp, &version).await {
                Ok(stream) => (None, State::Watching { version, stream: stream.boxed() }),
                Err(e) => (Some(Err(Error::WatchStartFailed(e))), State::Listed { version }),
            }
        }
        State::Watching { version, mut stream } => {
            let idle = Duration::from_secs(u64::from(timeout)) + IDLE_MARGIN;
            let ev = tokio::time::timeout(idle, stream.next()).await.ok().flatten();
            match ev {
                Some(Ok(WatchEvent::Added(p) | WatchEvent::Modified(p))) => {
                    moved(p.resource_version(), Event::Apply(p), stream)
                }
                Some(Ok(WatchEvent::Deleted(p))) => moved(p.resource_version(), Event::Delete(p), stream),
                Some(Ok(WatchEvent::Bookmark(b))) => {
                    (None, State::Watching { version: b.metadata.resource_version, stream })
                }
                Some(Ok(WatchEvent::Error(e))) => {
                    // 410 Gone: the version is too old to watch from; list again.
                    let next = if e.code == 410 { State::Empty } else { State::Watching { version, stream } };
                    (Some(Err(Error::WatchError(e))), next)
                }
                Some(Err(e)) => (Some(Err(Error::WatchFailed(e))), State::Watching { version, stream }),
                // Ended at its timeout, or silent past it (a half-open connection): reopen.
                None => (None, State::Listed { version }),
            }
        }
    }
}

/// An object's event moves the watch on to the object's version; one without a version cannot
/// be followed (list again).
fn moved(version: Option<String>, event: Event<Pod>, stream: WatchEvents) -> Step {
    match version.filter(|v| !v.is_empty()) {
        Some(version) => (Some(Ok(event)), State::Watching { version, stream }),
        None => (Some(Err(Error::NoResourceVersion)), State::Empty),
    }
}

/// Every pod as the first list gives it, decoded whole: (resourceVersion, whether the server
/// answered in protobuf, the pods). For tests that hold the protobuf decoding to the JSON one.
#[doc(hidden)]
pub async fn list_all(client: &Client) -> kube::Result<(String, bool, Vec<Pod>)> {
    let (mut all, mut protobuf, mut token) = (Vec::new(), true, String::new());
    for _ in 0..100_000 {
        let mut page = list(client, &token).await?;
        protobuf &= matches!(page, Page::Protobuf { .. });
        while let Some(pod) = page.next().await {
            all.push(pod?);
        }
        let (version, next) = page.end()?;
        if next.is_empty() {
            return Ok((version, protobuf, all));
        }
        token = next;
    }
    Err(kube::Error::Service("the pods' list did not end".into()))
}

/// One page of the pods' list, in protobuf where the server speaks it (read whole), else JSON
/// (read as it arrives). The first page (`token` empty) is asked for as client-go's informers
/// ask: `resourceVersion=0` (served whole from the watch cache, which ignores the limit) with a
/// limit of 500 (honoured by a server without a watch cache, which then pages); the following
/// pages by their token alone.
async fn list(client: &Client, token: &str) -> kube::Result<Page> {
    let query = if token.is_empty() {
        format!("limit={PAGE}&resourceVersion=0&resourceVersionMatch=NotOlderThan")
    } else {
        format!("limit={PAGE}&continue={}", app::boot::percent_encode(token))
    };
    let mut req =
        http::Request::get(format!("/api/v1/pods?{query}")).body(Vec::new()).map_err(kube::Error::HttpError)?;
    req.headers_mut().insert(http::header::ACCEPT, http::HeaderValue::from_static(ACCEPT));
    let resp = client.send(req.map(kube::client::Body::from)).await?;
    let code = resp.status();
    let protobuf = resp
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with(PROTOBUF));
    if !code.is_success() {
        let body = resp.into_body().collect().await?.to_bytes();
        return Err(kube::Error::Api(Box::new(failure(code.as_u16(), protobuf, body))));
    }
    if protobuf {
        let body = resp.into_body().collect().await?.to_bytes();
        let page = pod_wire::open_list(body).map_err(decode_error)?;
        Ok(Page::Protobuf { version: page.version, next: page.next, items: page.items })
    } else {
        Ok(Page::Json(Box::new(JsonPage::start(resp.into_body()))))
    }
}

/// The API server's refusal as a `Status`, whichever encoding it came in.
fn failure(code: u16, protobuf: bool, body: Bytes) -> Status {
    if protobuf {
        if let Ok((c, reason, message)) = pod_wire::status(body.clone()) {
            return Status::failure(&message, &reason).with_code(c);
        }
    }
    serde_json::from_slice::<Status>(&body).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(&body);
        Status::failure(text.trim(), "Failed to parse error data").with_code(code)
    })
}

/// A list that cannot be read (protobuf or JSON), as the client's error.
fn decode_error(e: impl std::error::Error + Send + Sync + 'static) -> kube::Error {
    kube::Error::Service(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client whose "API server" answers every request with `body` as JSON, and records the
    /// paths asked for.
    fn answering(body: String, asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> Client {
        let body = Bytes::from(body);
        let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let (asked, body) = (asked.clone(), body.clone());
            async move {
                asked.lock().unwrap_or_else(|e| e.into_inner()).push(req.uri().to_string());
                let resp = http::Response::builder()
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(kube::client::Body::from(body.to_vec()));
                resp.map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
            }
        });
        Client::new(svc, "default")
    }

    const POD: &str = r#"{"metadata": {"name": "yolo-0", "namespace": "vision", "resourceVersion": "7"}}"#;

    #[tokio::test]
    async fn a_json_list_is_handed_on_and_asked_as_informers_ask() {
        let asked = std::sync::Arc::default();
        let body = format!(r#"{{"kind": "PodList", "metadata": {{"resourceVersion": "9"}}, "items": [{POD}]}}"#);
        let client = answering(body, std::sync::Arc::clone(&asked));
        let mut events = std::pin::pin!(watch(client, 30));
        assert!(matches!(events.next().await, Some(Ok(Event::Init))));
        assert!(
            matches!(events.next().await, Some(Ok(Event::InitApply(p))) if p.metadata.name.as_deref() == Some("yolo-0"))
        );
        assert!(matches!(events.next().await, Some(Ok(Event::InitDone))));
        let first = asked.lock().unwrap_or_else(|e| e.into_inner()).first().cloned().unwrap_or_default();
        assert!(first.contains("limit=500") && first.contains("resourceVersion=0"), "{first}");
    }

    /// A list of `n` pods, the `bad`th (if any) not a pod.
    fn many(n: usize, bad: Option<usize>) -> String {
        let items: Vec<String> = (0..n)
            .map(|i| match bad {
                Some(b) if b == i => r#"{"metadata": {"name": 7}}"#.to_string(),
                _ => format!(r#"{{"metadata": {{"name": "p-{i}", "namespace": "vision", "resourceVersion": "{i}"}}}}"#),
            })
            .collect();
        format!(r#"{{"kind": "PodList", "metadata": {{"resourceVersion": "9"}}, "items": [{}]}}"#, items.join(","))
    }

    /// Decoded on two threads (half of each read to the helper): every pod once, then the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_list_decoded_on_two_threads_hands_on_every_pod_once_before_its_end() {
        let client = answering(many(3000, None), std::sync::Arc::default());
        let (version, protobuf, pods) = list_all(&client).await.unwrap();
        assert_eq!((version.as_str(), protobuf), ("9", false));
        let mut names: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
        names.sort_by_key(|n| n[2..].parse::<usize>().unwrap_or(usize::MAX));
        assert_eq!(names, (0..3000).map(|i| format!("p-{i}")).collect::<Vec<_>>());
    }

    /// A pod that is no pod, in either thread's half: the list fails, nothing hangs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_list_with_a_malformed_pod_fails_whichever_thread_decodes_it() {
        for bad in [0, 1499, 2999] {
            let client = answering(many(3000, Some(bad)), std::sync::Arc::default());
            let listed = tokio::time::timeout(Duration::from_secs(20), list_all(&client)).await;
            assert!(matches!(listed, Ok(Err(_))), "pod {bad}: {:?}", listed.map(|r| r.map(|l| l.2.len())));
        }
    }

    #[tokio::test]
    async fn a_list_without_a_version_is_not_watched_from() {
        let asked = std::sync::Arc::default();
        let body = format!(r#"{{"kind": "PodList", "metadata": {{}}, "items": [{POD}]}}"#);
        let client = answering(body, asked);
        let mut events = std::pin::pin!(watch(client, 30));
        assert!(matches!(events.next().await, Some(Ok(Event::Init))));
        assert!(matches!(events.next().await, Some(Ok(Event::InitApply(_)))));
        assert!(matches!(events.next().await, Some(Err(Error::NoResourceVersion))));
        // And it lists again.
        assert!(matches!(events.next().await, Some(Ok(Event::Init))));
    }
}
