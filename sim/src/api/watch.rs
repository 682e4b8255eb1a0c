//! WATCH: replay from a resourceVersion or initial events, bookmarks, selector-aware
//! ADDED/MODIFIED/DELETED, 410 Gone, faults (closed, stalled, restarted), timeouts.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use super::list::Filter;
use super::status;
use super::table::{table_event, Include};
use crate::resources::ResourceId;
use crate::store::{Change, ChangeType};
use crate::Shared;

pub(crate) struct WatchOpts {
    pub(crate) since: Option<u64>,
    pub(crate) bookmarks: bool,
    pub(crate) initial_events: bool,
    pub(crate) timeout: Duration,
    /// Objects in the `Table` form (kubectl get -w).
    pub(crate) as_table: Option<Include>,
}

pub(crate) fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut s = format!("{{\"type\":\"{kind}\",\"object\":");
    s.push_str(&object.to_string());
    s.push_str("}\n");
    Bytes::from(s)
}

pub(crate) fn bookmark(resource: ResourceId, rv: u64, initial_end: bool) -> Bytes {
    let r = &resource.def();
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    event_line("BOOKMARK", &json!({"kind": r.kind, "apiVersion": r.api_version(), "metadata": meta}))
}

/// The event a selector-filtered watch sees for one change, if any.
pub(crate) fn filtered(change: &Change, filter: &Filter) -> Option<(&'static str, Arc<Value>)> {
    let now = filter.matches(&change.object);
    let before = change.old.as_ref().is_some_and(|o| filter.matches(o));
    match change.kind {
        ChangeType::Added if now => Some(("ADDED", change.object.clone())),
        ChangeType::Modified if now && before => Some(("MODIFIED", change.object.clone())),
        ChangeType::Modified if now => Some(("ADDED", change.object.clone())),
        ChangeType::Modified if before => Some(("DELETED", change.object.clone())),
        ChangeType::Deleted if before => Some(("DELETED", change.object.clone())),
        _ => None,
    }
}

pub(crate) fn start_watch(shared: Arc<Shared>, resource: ResourceId, filter: Filter, opts: WatchOpts) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(256);
    tokio::spawn(run_watch(shared, resource, filter, opts, tx));
    let body = Body::from_stream(tokio_stream_from(rx));
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .header("Transfer-Encoding", "chunked")
        .body(body)
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "response"))
}

pub(crate) fn tokio_stream_from(
    rx: mpsc::Receiver<Result<Bytes, Infallible>>,
) -> impl futures::Stream<Item = Result<Bytes, Infallible>> {
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|x| (x, rx)) })
}

/// What a watch sends first: the changes since `since` (or every object, as ADDED, when it
/// names no version), with the subscription that carries on from there and the version it
/// starts at; a version older than the store keeps is `410 Expired`, as the API server says.
type Opening = (Vec<Bytes>, broadcast::Receiver<Arc<Change>>, u64);

fn opening(
    shared: &Shared,
    resource: ResourceId,
    filter: &Filter,
    since: Option<u64>,
    line: &dyn Fn(&str, &Value) -> Bytes,
) -> Result<Opening, Value> {
    let store = shared.store();
    if let Some(rv) = since.filter(|rv| *rv < store.floor()) {
        return Err(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("too old resource version: {rv} ({})", store.floor()),
            "reason": "Expired", "code": 410,
        }));
    }
    let replay: Vec<Bytes> = match since {
        Some(rv) if rv <= store.rv() => store
            .changes_since(rv, resource)
            .iter()
            .filter_map(|c| filtered(c, filter).map(|(k, o)| line(k, &o)))
            .collect(),
        Some(_) => Vec::new(),
        None => store.objects(resource).values().filter(|o| filter.matches(o)).map(|o| line("ADDED", o)).collect(),
    };
    Ok((replay, store.subscribe(), store.rv()))
}

/// Waits while the server is hung; false when the watch was closed meanwhile.
async fn outlast_stall(
    shared: &Shared,
    closed: &mut tokio::sync::watch::Receiver<u64>,
    tx: &mpsc::Sender<Result<Bytes, Infallible>>,
) -> bool {
    while shared.faults.stalled() {
        tokio::select! {
            _ = closed.changed() => return false,
            _ = tx.closed() => return false,
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
    }
    true
}

pub(crate) async fn run_watch(
    shared: Arc<Shared>,
    resource: ResourceId,
    filter: Filter,
    opts: WatchOpts,
    tx: mpsc::Sender<Result<Bytes, Infallible>>,
) {
    let as_table = opts.as_table;
    let minor = shared.minor();
    let event_line = move |kind: &str, o: &Value| match as_table {
        Some(include) if kind != "ERROR" => event_line(kind, &table_event(resource, o, include, minor)),
        _ => event_line(kind, o),
    };
    let mut closed = shared.faults.close_signal();
    let deadline = tokio::time::sleep(opts.timeout);
    tokio::pin!(deadline);
    // A hung server: the watch is accepted and nothing is sent, not even its end at the
    // timeout, until the stall ends (then it carries on, changes made meanwhile included) or
    // the watch is closed.
    if !outlast_stall(&shared, &mut closed, &tx).await {
        return;
    }
    let (replay, mut sub, mut last_rv) = match opening(&shared, resource, &filter, opts.since, &event_line) {
        Ok(s) => s,
        Err(gone) => {
            let _ = tx.send(Ok(event_line("ERROR", &gone))).await;
            return;
        }
    };
    // A stall that began while the replay was being gathered: end the stream unsent (the client
    // re-watches, and that watch hangs like the rest).
    if shared.faults.stalled() {
        return;
    }
    // The initial events end with a bookmark where the client asked for them (and bookmarks).
    let end =
        (opts.since.is_none() && opts.initial_events && opts.bookmarks).then(|| bookmark(resource, last_rv, true));
    for line in replay.into_iter().chain(end) {
        if tx.send(Ok(line)).await.is_err() {
            return;
        }
    }
    let mut tick = tokio::time::interval(shared.bookmark_interval);
    tick.tick().await;
    loop {
        tokio::select! {
            // The close signal first: a stall (or any close) that began before a change was
            // made must end the stream before the change can be sent.
            biased;
            _ = closed.changed() => return,
            msg = sub.recv() => match msg {
                Ok(change) => {
                    // The stall flag is set before watches are told to close, so a change that
                    // wins the race against the close signal is still never sent.
                    if shared.faults.stalled() {
                        return;
                    }
                    last_rv = change.rv;
                    let line = (change.resource == resource).then(|| filtered(&change, &filter)).flatten();
                    if let Some((k, o)) = line {
                        if tx.send(Ok(event_line(k, &o))).await.is_err() {
                            return;
                        }
                    }
                }
                // Too far behind, or the store went away: end the stream; the client re-watches
                // from its last version, which the history still holds.
                Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = tick.tick(), if opts.bookmarks => {
                if shared.faults.stalled() || tx.send(Ok(bookmark(resource, last_rv, false))).await.is_err() {
                    return;
                }
            }
            _ = &mut deadline => return,
            _ = tx.closed() => return,
        }
    }
}
