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
use kube::api::{ListParams, WatchEvent, WatchParams};
use kube::core::{ObjectList, Status};
use kube::runtime::watcher::{Error, Event};
use kube::{Api, Client, ResourceExt};

use super::pod_wire::{self, PodItems};
use crate::pod::Pod;

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
    Listing { version: String, items: Items },
    Listed { version: String },
    Watching { version: String, stream: BoxStream<'static, kube::Result<WatchEvent<Pod>>> },
}

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

async fn step(
    state: State,
    client: &Client,
    api: &Api<Pod>,
    timeout: u32,
) -> (Option<Result<Event<Pod>, Error>>, State) {
    match state {
        State::Empty => match list(client).await {
            Ok((version, items)) => (Some(Ok(Event::Init)), State::Listing { version, items }),
            Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
        },
        State::Listing { version, mut items } => {
            let next = match &mut items {
                Items::Protobuf(it) => it.next().map(|r| r.map_err(decode_error)),
                Items::Json(q) => q.pop_front().map(Ok),
            };
            match next {
                Some(Ok(pod)) => (Some(Ok(Event::InitApply(pod))), State::Listing { version, items }),
                Some(Err(e)) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
                None => (Some(Ok(Event::InitDone)), State::Listed { version }),
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
                    let v = p.resource_version().unwrap_or_default();
                    if v.is_empty() {
                        return (Some(Err(Error::NoResourceVersion)), State::Empty);
                    }
                    (Some(Ok(Event::Apply(p))), State::Watching { version: v, stream })
                }
                Some(Ok(WatchEvent::Deleted(p))) => {
                    let v = p.resource_version().unwrap_or_default();
                    if v.is_empty() {
                        return (Some(Err(Error::NoResourceVersion)), State::Empty);
                    }
                    (Some(Ok(Event::Delete(p))), State::Watching { version: v, stream })
                }
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

/// Every pod as the first list gives it, decoded whole: (resourceVersion, whether the server
/// answered in protobuf, the pods). For tests that hold the protobuf decoding to the JSON one.
#[doc(hidden)]
pub async fn list_all(client: &Client) -> kube::Result<(String, bool, Vec<Pod>)> {
    match list(client).await? {
        (v, Items::Json(q)) => Ok((v, false, q.into())),
        (v, Items::Protobuf(it)) => Ok((v, true, it.collect::<Result<_, _>>().map_err(decode_error)?)),
    }
}

/// One list of every pod from the watch cache, in protobuf where the server speaks it.
async fn list(client: &Client) -> kube::Result<(String, Items)> {
    let lp = ListParams::default().match_any();
    let mut req = kube::core::Request::new("/api/v1/pods").list(&lp).map_err(kube::Error::BuildRequest)?;
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
        let (version, items) = pod_wire::open_list(body).map_err(decode_error)?;
        Ok((version, Items::Protobuf(items)))
    } else {
        let list: ObjectList<Pod> = serde_json::from_slice(&body).map_err(kube::Error::SerdeError)?;
        let version = list.metadata.resource_version.unwrap_or_default();
        Ok((version, Items::Json(list.items.into())))
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
