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
use tokio_stream::wrappers::WatchStream;

use super::AppState;

/// Decrements the stream-client gauge and its language's readers when a stream ends.
struct ClientGuard(Arc<AtomicU64>, crate::publish::Readers, usize);

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
        if let Some(n) = self.1.get(self.2) {
            n.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The handler.
pub async fn stream(State(st): State<AppState>, headers: axum::http::HeaderMap, uri: axum::http::Uri) -> Response {
    let lang = super::answer_lang(st.lang, &headers, uri.query());
    let mut shutdown = st.shutdown.clone();
    st.stream_clients.fetch_add(1, Ordering::Relaxed);
    if let Some(n) = st.readers.get(lang as usize) {
        n.fetch_add(1, Ordering::Relaxed);
    }
    let guard = ClientGuard(st.stream_clients.clone(), st.readers.clone(), lang as usize);
    // The first event is the full view; then the deltas from the revision this client has —
    // one, or several when it was slow and skipped revisions; the full view again only when
    // it fell further behind than the snapshot's recent deltas reach. Every event is built
    // once per revision and shared by all clients.
    let mut sent = 0u64;
    let events = WatchStream::new(st.snapshots.clone()).flat_map(move |snap| {
        let _alive = &guard;
        let frames: Vec<bytes::Bytes> = match snap.catch_up(sent) {
            crate::publish::CatchUp::Nothing => Vec::new(),
            crate::publish::CatchUp::Deltas(ds) => ds.filter_map(|(_, d)| d.frame(lang)).collect(),
            crate::publish::CatchUp::Full => vec![snap.frame(lang)],
        };
        sent = snap.view.revision;
        futures::stream::iter(frames)
    });
    // A comment every 15 s keeps proxies from closing a quiet stream.
    let keep_alive = tokio_stream::wrappers::IntervalStream::new(tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(15),
        Duration::from_secs(15),
    ))
    .map(|_| bytes::Bytes::from_static(b": keep-alive\n\n"));
    let body = futures::stream::select(events, keep_alive)
        .take_until(async move {
            let _ = shutdown.wait_for(|s| *s).await;
        })
        .map(Ok::<_, Infallible>);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::VARY, "Accept-Language"),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}
