//! `GET /api/v1/stream`: the live view as server-sent events — the whole view first, then
//! deltas, every frame built once per revision and shared by all clients.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use gpudash_web::query::Params;
use tokio_stream::wrappers::WatchStream;

use super::AppState;

/// Decrements the stream-client gauge and its form's readers when a stream ends.
struct ClientGuard(Arc<AtomicU64>, crate::publish::Readers, usize);

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
        if let Some(n) = self.1.get(self.2) {
            n.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// `?nodes=cards&wire=postcard&lang=`
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct StreamParams {
    /// `cards`: nodes as the browser's live views read them (the browser asks for it).
    nodes: String,
    /// `postcard`: each event in the browser's wire (`gpudash_model::wire`; nodes as cards),
    /// not JSON — what the bundle reads.
    wire: String,
}

/// The handler.
pub async fn stream(
    State(st): State<AppState>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
    Params(q): Params<StreamParams>,
) -> Response {
    let lang = super::answer_lang(st.lang, &headers, uri.query());
    let browser = q.wire == "postcard";
    let cards = browser || q.nodes == "cards";
    let form = crate::publish::Form { lang, cards, browser };
    let mut shutdown = st.shutdown.clone();
    st.stream_clients.fetch_add(1, Ordering::Relaxed);
    if let Some(n) = st.readers.get(form.index()) {
        n.fetch_add(1, Ordering::Relaxed);
    }
    let guard = ClientGuard(st.stream_clients.clone(), st.readers.clone(), form.index());
    // The first event is the full view; then the deltas from the revision this client has —
    // one, or several when it was slow and skipped revisions; the full view again only when
    // it fell further behind than the snapshot's recent deltas reach. Every event is built
    // (and, for a client that takes gzip, compressed) once per revision and shared by all
    // clients; a full view is made off the async workers (tens of milliseconds at 1,000 nodes).
    let gzip = accepts_gzip(&headers);
    let mut sent = 0u64;
    let events = WatchStream::new(st.snapshots.clone())
        .then(move |snap| {
            let _alive = &guard;
            let need = match snap.catch_up(sent) {
                crate::publish::CatchUp::Nothing => Need::Nothing,
                crate::publish::CatchUp::Deltas(ds) => Need::Deltas(ds.map(|(_, d)| d.clone()).collect()),
                crate::publish::CatchUp::Full => Need::Full,
            };
            sent = snap.view.revision;
            async move {
                match need {
                    Need::Nothing => Vec::new(),
                    Need::Deltas(ds) => {
                        ds.iter().filter_map(|d| if gzip { d.piece(form) } else { d.frame(form) }).collect()
                    }
                    Need::Full => {
                        let full =
                            tokio::task::spawn_blocking(move || if gzip { snap.piece(form) } else { snap.frame(form) });
                        full.await.map(|f| vec![f]).unwrap_or_default()
                    }
                }
            }
        })
        .flat_map(futures::stream::iter);
    // A comment every 15 s keeps proxies from closing a quiet stream.
    let keep_alive = tokio_stream::wrappers::IntervalStream::new(tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(15),
        Duration::from_secs(15),
    ))
    .map(move |_| {
        if gzip {
            crate::publish::keep_alive_piece()
        } else {
            bytes::Bytes::from_static(crate::publish::KEEP_ALIVE)
        }
    });
    let head = futures::stream::iter(gzip.then(|| bytes::Bytes::from_static(&crate::publish::GZIP_HEADER)));
    let body = head
        .chain(futures::stream::select(events, keep_alive))
        .take_until(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .map(Ok::<_, Infallible>);
    let mut res = (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::VARY, "Accept-Language, Accept-Encoding"),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response();
    if gzip {
        res.headers_mut().insert(header::CONTENT_ENCODING, header::HeaderValue::from_static("gzip"));
    }
    res
}

/// What a client needs for one revision.
enum Need {
    Nothing,
    Deltas(Vec<Arc<crate::publish::Delta>>),
    Full,
}

/// Whether the client takes gzip (`Accept-Encoding: gzip`, or `*`, with a weight above zero).
fn accepts_gzip(headers: &axum::http::HeaderMap) -> bool {
    headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |item| {
            let mut parts = item.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let zero =
                parts.any(|p| p.strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)));
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !zero
        },
    )
}
