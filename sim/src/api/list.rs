//! LIST: selectors, pages (`limit`/`continue`), `resourceVersion`, and the collection answer
//! (a list, or a watch when `?watch=1`).
//!
//! As a 1.34+ API server answers: a list at `resourceVersion=0` comes from the watch cache,
//! whole, whatever its `limit` (client-go's informers ask so; seen in the real API server's
//! audit log, docs/benchmarks.md); other lists are paged when asked. The body is written item by
//! item as it is encoded (streaming list encoding, KEP-5116, on by default since 1.33), so a
//! client can read the first items while the last are written.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{json, Value};

use std::time::Duration;

use super::table::{table, Include};
use super::watch::{start_watch, WatchOpts};
use super::{status, truthy};
use crate::resources::ResourceId;
use crate::select::{FieldSelector, LabelSelector};
use crate::Shared;

pub(crate) struct Filter {
    pub(crate) ns: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
}

impl Filter {
    /// Whether it selects every object of the collection.
    pub(crate) fn is_trivial(&self) -> bool {
        self.ns.is_none() && self.labels.is_empty() && self.fields.is_empty()
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
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

pub(crate) fn collection(
    shared: &Arc<Shared>,
    resource: ResourceId,
    ns: Option<String>,
    q: &HashMap<String, String>,
    watch: bool,
    as_table: Option<Include>,
) -> Response {
    let r = &resource.def();
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
            as_table,
        };
        return start_watch(shared.clone(), resource, filter, opts);
    }
    list(shared, resource, &filter, q, as_table)
}

pub(crate) fn list(
    shared: &Shared,
    resource: ResourceId,
    filter: &Filter,
    q: &HashMap<String, String>,
    as_table: Option<Include>,
) -> Response {
    let r = &resource.def();
    let from_cache =
        q.get("resourceVersion").is_some_and(|v| v == "0") && q.get("continue").is_none_or(String::is_empty);
    let limit = q.get("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0 && !from_cache);
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
    if let Some(include) = as_table {
        let rows: Vec<&Value> = items.iter().map(AsRef::as_ref).collect();
        let t = table(resource, &rows, meta, include, shared.minor());
        return ([(header::CONTENT_TYPE, "application/json")], t.to_string()).into_response();
    }
    let head = format!(
        "{{\"kind\":\"{}\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
        r.list_kind(),
        r.api_version(),
        meta
    );
    ([(header::CONTENT_TYPE, "application/json")], Body::from_stream(streamed(head, items))).into_response()
}

/// How many bytes of items are written at a time.
const CHUNK: usize = 64 * 1024;

/// A list's body as it is encoded: `head` (up to the items' `[`), the items about `CHUNK`
/// bytes at a time (each written from the object as stored, not copied into a new tree), then
/// the closing `]}`.
fn streamed(head: String, items: Vec<Arc<Value>>) -> impl futures::Stream<Item = Result<Bytes, Infallible>> {
    let mut items = items.into_iter().peekable();
    let mut first = true;
    let pieces = std::iter::from_fn(move || {
        items.peek()?;
        let mut buf = Vec::with_capacity(CHUNK + 4096);
        while buf.len() < CHUNK {
            let Some(o) = items.next() else { break };
            if !std::mem::take(&mut first) {
                buf.push(b',');
            }
            // A Value always serialises (its keys are strings).
            let _ = serde_json::to_writer(&mut buf, o.as_ref());
        }
        Some(Bytes::from(buf))
    });
    let chunks = std::iter::once(Bytes::from(head)).chain(pieces).chain(std::iter::once(Bytes::from_static(b"]}")));
    futures::stream::iter(chunks.map(Ok))
}

pub(crate) fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> =
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect();
    String::from_utf8(bytes?).ok()
}

/// Continue tokens are opaque to clients; this one carries the list's version and the last key.
pub(crate) fn encode_continue(rv: u64, ns: &str, name: &str) -> String {
    format!("{rv}-{}-{}", hex(ns), hex(name))
}

pub(crate) fn decode_continue(tok: &str) -> Option<(u64, String, String)> {
    let mut parts = tok.splitn(3, '-');
    let rv = parts.next()?.parse().ok()?;
    let ns = unhex(parts.next()?)?;
    let name = unhex(parts.next()?)?;
    Some((rv, ns, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_any_name() {
        let t = encode_continue(42, "ml", "<img src=x onerror=alert(1)>-a-b");
        assert_eq!(decode_continue(&t), Some((42, "ml".into(), "<img src=x onerror=alert(1)>-a-b".into())));
        assert_eq!(decode_continue("garbage"), None);
        assert_eq!(decode_continue("1-zz-00"), None);
    }
}
