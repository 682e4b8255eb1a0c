//! The Kubernetes REST surface: discovery, GET, LIST, WATCH, and 405 for every write. Rooms:
//! [`path`] (what a path names), [`list`] (selectors, pages, the collection answer), [`watch`]
//! (the watch stream).

mod list;
mod path;
mod table;
mod watch;

use list::collection;
use path::{parse_path, Target};

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

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

/// The real API server's 404 for a missing object: the resource named with its group
/// (`deployments.apps "x" not found`) and `details` naming it.
fn not_found(r: &crate::resources::Resource, name: &str) -> Response {
    let qualified = if r.group.is_empty() { r.plural.to_string() } else { format!("{}.{}", r.plural, r.group) };
    let mut details = json!({"name": name, "kind": r.plural});
    if !r.group.is_empty() {
        details["group"] = json!(r.group);
    }
    let body = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("{qualified} \"{name}\" not found"),
        "reason": "NotFound",
        "details": details,
        "code": 404,
    });
    (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn json_response(v: &Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

pub(crate) fn verb(method: &Method, target: &Target, watch: bool) -> &'static str {
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

pub(crate) fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|s| s.eq_ignore_ascii_case("true") || s == "1")
}

/// The one handler for every Kubernetes path.
pub async fn k8s(State(shared): State<Arc<Shared>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let q: HashMap<String, String> = Query::try_from_uri(&uri).map(|Query(q)| q).unwrap_or_default();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
    let target = parse_path(uri.path(), host, shared.minor());
    let as_table = table::wants_table(headers.get(header::ACCEPT).and_then(|a| a.to_str().ok()))
        .then(|| table::Include::parse(q.get("includeObject").map(String::as_str)));
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
                    Some(o) if as_table.is_some() => json_response(&table::table(
                        resource,
                        &[o.as_ref()],
                        serde_json::json!({"resourceVersion": o.pointer("/metadata/resourceVersion").cloned().unwrap_or_default()}),
                        as_table.unwrap_or(table::Include::Metadata),
                        shared.minor(),
                    )),
                    Some(o) => json_response(&o),
                    None => not_found(resource.def(), &name),
                }
            }
            Target::Collection { resource, ns } => collection(&shared, resource, ns, &q, watch, as_table),
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
pub(crate) async fn hold_while_stalled(shared: &Shared) {
    while shared.faults.stalled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
