//! The pods' list-then-watch: the list asked for in protobuf (JSON where the server only
//! speaks JSON, as the simulator does), the watch that follows as kube-rs' JSON watch. It
//! yields kube-rs' watcher events, so the reflector, the change check and the liveness
//! handling are the same as for every other kind.
//!
//! Why not kube-rs' watcher: it lists in JSON only, and on a real API server writing 30,000
//! pods as JSON took the server 4.3–5.8 s against 1.0–1.4 s in protobuf (docs/benchmarks.md).
//! The states follow kube-rs' watcher (list at `resourceVersion=0`, "not older than", from
//! the watch cache; watch from the list's version; bookmarks move it; 410 Gone lists again;
//! a watch silent past its timeout is reopened).

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http_body_util::BodyExt;
use kube::api::{WatchEvent, WatchParams};
use kube::core::{ObjectList, Status};
use kube::runtime::watcher::{Error, Event};
use kube::{Api, Client, ResourceExt};

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

enum Items {
    Protobuf(PodItems),
    Json(VecDeque<Pod>),
}

enum State {
    Empty,
    /// A page's items being handed on; `next` is the following page's token (empty: the last).
    Listing {
        version: String,
        next: String,
        items: Items,
    },
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
            Ok((version, next, items)) => (Some(Ok(Event::Init)), State::Listing { version, next, items }),
            Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
        },
        State::Listing { version, next, mut items } => {
            let pod = match &mut items {
                Items::Protobuf(it) => it.next().map(|r| r.map_err(decode_error)),
                Items::Json(q) => q.pop_front().map(Ok),
            };
            match pod {
                Some(Ok(pod)) => (Some(Ok(Event::InitApply(pod))), State::Listing { version, next, items }),
                Some(Err(e)) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
                // A list without a version cannot be watched from (the watch would start at
                // "now" and miss what happened since the list): list again, as kube-rs does.
                None if next.is_empty() && version.is_empty() => (Some(Err(Error::NoResourceVersion)), State::Empty),
                None if next.is_empty() => (Some(Ok(Event::InitDone)), State::Listed { version }),
                // The next page (a server that pages: one without a watch cache).
                None => match list(client, &next).await {
                    Ok((version, next, items)) => (None, State::Listing { version, next, items }),
                    Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
                },
            }
        }
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
        let (version, next, items) = list(client, &token).await?;
        match items {
            Items::Json(q) => {
                all.extend(q);
                protobuf = false;
            }
            Items::Protobuf(it) => all.extend(it.collect::<Result<Vec<_>, _>>().map_err(decode_error)?),
        }
        if next.is_empty() {
            return Ok((version, protobuf, all));
        }
        token = next;
    }
    Err(kube::Error::Service("the pods' list did not end".into()))
}

/// One page of the pods' list, in protobuf where the server speaks it: (resourceVersion, the
/// next page's token or empty, the items). The first page (`token` empty) is asked for as
/// client-go's informers ask: `resourceVersion=0` (served whole from the watch cache, which
/// ignores the limit) with a limit of 500 (honoured by a server without a watch cache, which
/// then pages); the following pages by their token alone.
async fn list(client: &Client, token: &str) -> kube::Result<(String, String, Items)> {
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
    let body = resp.into_body().collect().await?.to_bytes();
    if !code.is_success() {
        return Err(kube::Error::Api(Box::new(failure(code.as_u16(), protobuf, body))));
    }
    if protobuf {
        let page = pod_wire::open_list(body).map_err(decode_error)?;
        Ok((page.version, page.next, Items::Protobuf(page.items)))
    } else {
        let list: ObjectList<Pod> = serde_json::from_slice(&body).map_err(kube::Error::SerdeError)?;
        let version = list.metadata.resource_version.unwrap_or_default();
        let next = list.metadata.continue_.unwrap_or_default();
        Ok((version, next, Items::Json(list.items.into())))
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

fn decode_error(e: pod_wire::WireError) -> kube::Error {
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
