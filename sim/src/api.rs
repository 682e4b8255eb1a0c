//! The Kubernetes REST surface: discovery, GET, LIST, WATCH, and 405 for every write.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::resources::{self, RESOURCES};
use crate::select::{FieldSelector, LabelSelector};
use crate::store::{Change, ChangeType};
use crate::Shared;

/// A `Status` error response as the API server writes it.
pub fn status(code: StatusCode, reason: &str, message: impl Into<String>) -> Response {
    let body = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message.into(),
        "reason": reason,
        "code": code.as_u16(),
    });
    (code, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn json_response(v: &Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

/// What a Kubernetes path names.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    Discovery(Value),
    Collection { resource: usize, ns: Option<String> },
    Object { resource: usize, ns: String, name: String },
    NotFound(String),
}

fn parse_path(path: &str, server_address: &str) -> Target {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Target::Discovery(resources::version()),
        ["api"] => return Target::Discovery(resources::api_versions(server_address)),
        ["apis"] => return Target::Discovery(resources::api_group_list()),
        ["apis", g] => {
            return resources::api_group(g)
                .map(Target::Discovery)
                .unwrap_or_else(|| Target::NotFound(format!("the server could not find the requested resource ({g})")))
        }
        ["api", v] => {
            return resources::api_resource_list("", v)
                .map(Target::Discovery)
                .unwrap_or_else(|| Target::NotFound("the server could not find the requested resource".into()))
        }
        ["apis", g, v] => {
            return resources::api_resource_list(g, v)
                .map(Target::Discovery)
                .unwrap_or_else(|| Target::NotFound("the server could not find the requested resource".into()))
        }
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Target::NotFound("the server could not find the requested resource".into()),
    };
    let find = |plural: &str| resources::by_path(group, version, plural);
    let nf = || Target::NotFound("the server could not find the requested resource".into());
    match rest {
        ["namespaces", ns, plural] if *plural != "status" && *plural != "finalize" => match find(plural) {
            Some(r) if RESOURCES[r].namespaced => Target::Collection { resource: r, ns: Some(ns.to_string()) },
            _ => nf(),
        },
        ["namespaces", ns, plural, name] => match find(plural) {
            Some(r) if RESOURCES[r].namespaced => {
                Target::Object { resource: r, ns: ns.to_string(), name: name.to_string() }
            }
            _ => nf(),
        },
        [plural] => match find(plural) {
            Some(r) => Target::Collection { resource: r, ns: None },
            None => nf(),
        },
        [plural, name] => match find(plural) {
            Some(r) if !RESOURCES[r].namespaced => {
                Target::Object { resource: r, ns: String::new(), name: name.to_string() }
            }
            _ => nf(),
        },
        _ => nf(),
    }
}

fn verb(method: &Method, target: &Target, watch: bool) -> &'static str {
    match (method.as_str(), target) {
        ("GET", Target::Collection { .. }) if watch => "watch",
        ("GET", Target::Collection { .. }) => "list",
        ("GET", _) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", Target::Collection { .. }) => "deletecollection",
        ("DELETE", _) => "delete",
        _ => "other",
    }
}

fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|s| s.eq_ignore_ascii_case("true") || s == "1")
}

/// The one handler for every Kubernetes path.
pub async fn k8s(State(shared): State<Arc<Shared>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let q: HashMap<String, String> = Query::try_from_uri(&uri).map(|Query(q)| q).unwrap_or_default();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
    let target = parse_path(uri.path(), host);
    let watch = truthy(q.get("watch"));
    let verb = verb(&method, &target, watch);
    let delay = shared.faults.delay();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    // A hung server answers nothing else either while a stall lasts (watches are accepted and
    // then hang; see `run_watch`). The wait ends when the client gives up.
    if !watch {
        hold_while_stalled(&shared).await;
    }
    let resp = if method != Method::GET && method != Method::HEAD {
        status(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource (gpudash-sim is read-only)",
        )
    } else if shared.faults.unavailable() {
        status(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            "the server is currently unable to handle the request (restarting)",
        )
    } else {
        match target {
            Target::Discovery(v) => json_response(&v),
            Target::NotFound(m) => status(StatusCode::NOT_FOUND, "NotFound", m),
            Target::Object { resource, ns, name } => {
                let obj = shared.store().get(resource, &ns, &name);
                match obj {
                    Some(o) => json_response(&o),
                    None => status(
                        StatusCode::NOT_FOUND,
                        "NotFound",
                        format!("{} \"{}\" not found", RESOURCES[resource].plural, name),
                    ),
                }
            }
            Target::Collection { resource, ns } => collection(&shared, resource, ns, &q, watch),
        }
    };
    // An answer computed while the stall began (it may hold a change made after) is held back
    // with the rest until the stall ends.
    if !watch {
        hold_while_stalled(&shared).await;
    }
    shared.log_request(method.as_str(), verb, &uri, resp.status().as_u16());
    resp
}

/// Waits while the simulator is stalled.
async fn hold_while_stalled(shared: &Shared) {
    while shared.faults.stalled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

struct Filter {
    ns: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    /// Whether it selects every object of the collection.
    fn is_trivial(&self) -> bool {
        self.ns.is_none() && self.labels.is_empty() && self.fields.is_empty()
    }

    fn matches(&self, obj: &Value) -> bool {
        if self.is_trivial() {
            return true;
        }
        if let Some(ns) = &self.ns {
            if obj.pointer("/metadata/namespace").and_then(Value::as_str) != Some(ns.as_str()) {
                return false;
            }
        }
        self.labels.matches(obj) && self.fields.matches(obj)
    }
}

fn collection(
    shared: &Arc<Shared>,
    resource: usize,
    ns: Option<String>,
    q: &HashMap<String, String>,
    watch: bool,
) -> Response {
    let r = &RESOURCES[resource];
    let labels = match LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str)) {
        Ok(l) => l,
        Err(e) => return status(StatusCode::BAD_REQUEST, "BadRequest", e.to_string()),
    };
    let fields = match FieldSelector::parse(q.get("fieldSelector").map_or("", String::as_str), r.kind) {
        Ok(f) => f,
        Err(e) => return status(StatusCode::BAD_REQUEST, "BadRequest", e.to_string()),
    };
    let filter = Filter { ns, labels, fields };
    let rv = match q.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => None,
        Some(s) => match s.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => return status(StatusCode::BAD_REQUEST, "BadRequest", format!("invalid resource version: {s:?}")),
        },
    };
    if watch {
        if !r.watchable {
            return status(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            );
        }
        let timeout = q.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok()).unwrap_or(1800);
        let opts = WatchOpts {
            since: rv,
            bookmarks: truthy(q.get("allowWatchBookmarks")),
            initial_events: truthy(q.get("sendInitialEvents")),
            timeout: Duration::from_secs(timeout),
        };
        return start_watch(shared.clone(), resource, filter, opts);
    }
    list(shared, resource, &filter, q)
}

fn list(shared: &Shared, resource: usize, filter: &Filter, q: &HashMap<String, String>) -> Response {
    let r = &RESOURCES[resource];
    let limit = q.get("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0);
    let store = shared.store();
    let (list_rv, after): (u64, Option<(String, String)>) = match q.get("continue").filter(|c| !c.is_empty()) {
        None => (store.rv(), None),
        Some(tok) => match decode_continue(tok) {
            Some((rv, ns, name)) => (rv, Some((ns, name))),
            None => return status(StatusCode::BAD_REQUEST, "BadRequest", "continue key is not valid"),
        },
    };
    let objects = store.objects(resource);
    type Entries<'a> = Box<dyn Iterator<Item = (&'a (String, String), &'a Arc<Value>)> + 'a>;
    let iter: Entries<'_> = match &after {
        Some(k) => Box::new(
            objects.range::<(String, String), _>((std::ops::Bound::Excluded(k.clone()), std::ops::Bound::Unbounded)),
        ),
        None => Box::new(objects.iter()),
    };
    let mut items = Vec::new();
    let mut last = None;
    let mut iter = iter.filter(|(_, o)| filter.matches(o));
    for (k, o) in iter.by_ref() {
        items.push(o.clone());
        last = Some(k.clone());
        if limit.is_some_and(|l| items.len() >= l) {
            break;
        }
    }
    // Whether a page follows, and — as the API server does — how many items remain only when
    // the list has no selectors (with selectors it does not know without filtering them all).
    let more = match limit {
        Some(_) if iter.next().is_some() => Some(if filter.is_trivial() { 1 + iter.by_ref().count() } else { 0 }),
        _ => None,
    };
    drop(iter);
    drop(store);
    let mut meta = json!({"resourceVersion": list_rv.to_string()});
    if let (Some(remaining), Some((ns, name))) = (more, last) {
        meta["continue"] = json!(encode_continue(list_rv, &ns, &name));
        if remaining > 0 {
            meta["remainingItemCount"] = json!(remaining);
        }
    }
    // Serialise by hand to avoid cloning every object into a new Value tree.
    let mut body = format!(
        "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
        r.list_kind(),
        r.api_version(),
        meta
    );
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&o.to_string());
    }
    body.push_str("]}");
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> =
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect();
    String::from_utf8(bytes?).ok()
}

/// Continue tokens are opaque to clients; this one carries the list's version and the last key.
fn encode_continue(rv: u64, ns: &str, name: &str) -> String {
    format!("{rv}-{}-{}", hex(ns), hex(name))
}

fn decode_continue(tok: &str) -> Option<(u64, String, String)> {
    let mut parts = tok.splitn(3, '-');
    let rv = parts.next()?.parse().ok()?;
    let ns = unhex(parts.next()?)?;
    let name = unhex(parts.next()?)?;
    Some((rv, ns, name))
}

struct WatchOpts {
    since: Option<u64>,
    bookmarks: bool,
    initial_events: bool,
    timeout: Duration,
}

fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut s = format!("{{\"type\":\"{kind}\",\"object\":");
    s.push_str(&object.to_string());
    s.push_str("}\n");
    Bytes::from(s)
}

fn bookmark(resource: usize, rv: u64, initial_end: bool) -> Bytes {
    let r = &RESOURCES[resource];
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    event_line("BOOKMARK", &json!({"kind": r.kind, "apiVersion": r.api_version(), "metadata": meta}))
}

/// The event a selector-filtered watch sees for one change, if any.
fn filtered(change: &Change, filter: &Filter) -> Option<(&'static str, Arc<Value>)> {
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

fn start_watch(shared: Arc<Shared>, resource: usize, filter: Filter, opts: WatchOpts) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(256);
    tokio::spawn(run_watch(shared, resource, filter, opts, tx));
    let body = Body::from_stream(tokio_stream_from(rx));
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .header("Transfer-Encoding", "chunked")
        .body(body)
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "response"))
}

fn tokio_stream_from(
    rx: mpsc::Receiver<Result<Bytes, Infallible>>,
) -> impl futures::Stream<Item = Result<Bytes, Infallible>> {
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|x| (x, rx)) })
}

async fn run_watch(
    shared: Arc<Shared>,
    resource: usize,
    filter: Filter,
    opts: WatchOpts,
    tx: mpsc::Sender<Result<Bytes, Infallible>>,
) {
    let mut closed = shared.faults.close_signal();
    let deadline = tokio::time::sleep(opts.timeout);
    tokio::pin!(deadline);
    // A hung server: the watch is accepted and nothing is sent, not even its end at the
    // timeout, until the stall ends (then it carries on, changes made meanwhile included) or
    // the watch is closed.
    while shared.faults.stalled() {
        tokio::select! {
            _ = closed.changed() => return,
            _ = tx.closed() => return,
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
    }
    let start = {
        let store = shared.store();
        match opts.since {
            Some(rv) if rv < store.floor() => Err(json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": format!("too old resource version: {rv} ({})", store.floor()),
                "reason": "Expired", "code": 410,
            })),
            since => {
                let replay: Vec<Bytes> = match since {
                    Some(rv) if rv <= store.rv() => store
                        .changes_since(rv, resource)
                        .iter()
                        .filter_map(|c| filtered(c, &filter).map(|(k, o)| event_line(k, &o)))
                        .collect(),
                    Some(_) => Vec::new(),
                    None => store
                        .objects(resource)
                        .values()
                        .filter(|o| filter.matches(o))
                        .map(|o| event_line("ADDED", o))
                        .collect(),
                };
                Ok((replay, store.subscribe(), store.rv()))
            }
        }
    };
    let (replay, mut sub, mut last_rv) = match start {
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
    for line in replay {
        if tx.send(Ok(line)).await.is_err() {
            return;
        }
    }
    if opts.since.is_none()
        && opts.initial_events
        && opts.bookmarks
        && tx.send(Ok(bookmark(resource, last_rv, true))).await.is_err()
    {
        return;
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
                    if change.resource != resource {
                        continue;
                    }
                    if let Some((k, o)) = filtered(&change, &filter) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_to_collections_objects_and_discovery() {
        let pods = resources::by_path("", "v1", "pods");
        assert!(
            matches!(parse_path("/api/v1/pods", "h"), Target::Collection { resource, ns: None } if Some(resource) == pods)
        );
        assert!(
            matches!(parse_path("/api/v1/namespaces/ml/pods", "h"), Target::Collection { ns: Some(ref n), .. } if n == "ml")
        );
        assert!(
            matches!(parse_path("/api/v1/namespaces/ml/pods/a", "h"), Target::Object { ref name, .. } if name == "a")
        );
        assert!(matches!(parse_path("/api/v1/namespaces/ml", "h"), Target::Object { ref name, .. } if name == "ml"));
        assert!(matches!(parse_path("/api/v1/nodes/n1", "h"), Target::Object { ref name, .. } if name == "n1"));
        assert!(matches!(parse_path("/apis/metrics.k8s.io/v1beta1/nodes", "h"), Target::Collection { .. }));
        assert!(matches!(parse_path("/apis", "h"), Target::Discovery(_)));
        assert!(matches!(parse_path("/api/v1/namespaces/ml/nodes", "h"), Target::NotFound(_)));
        assert!(matches!(parse_path("/api/v1/secrets", "h"), Target::NotFound(_)));
        assert!(matches!(parse_path("/apis/batch/v1", "h"), Target::NotFound(_)));
    }

    #[test]
    fn continue_tokens_round_trip_any_name() {
        let t = encode_continue(42, "ml", "<img src=x onerror=alert(1)>-a-b");
        assert_eq!(decode_continue(&t), Some((42, "ml".into(), "<img src=x onerror=alert(1)>-a-b".into())));
        assert_eq!(decode_continue("garbage"), None);
        assert_eq!(decode_continue("1-zz-00"), None);
    }
}
