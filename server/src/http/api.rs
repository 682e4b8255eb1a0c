//! The JSON API: the cluster view, the what-if check, Prometheus metrics and the probes.
//! Thin: read the state, call a plain function, answer or map the error.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{AppState, FitSource};
use crate::error::ApiError;

impl FitSource {
    /// Runs the what-if check on a form or a pasted workload.
    pub fn run(&self, input: &app::model::FitInput) -> app::model::FitResult {
        let parsed = if input.yaml.trim().is_empty() {
            crate::fit::workload::from_form(input)
        } else {
            crate::fit::workload::from_yaml(&input.yaml)
        };
        match parsed {
            Ok(w) => {
                let inputs = (self.inputs)();
                let opts = self.opts.clone();
                crate::fit::fit(&inputs, &w, &|n| crate::derive::node::unified_memory(n, opts.matches(n)))
            }
            Err(e) => app::model::FitResult { error: Some(e), ..app::model::FitResult::default() },
        }
    }
}

/// The what-if checks running at once. Parsing a paste and checking it against every node are
/// CPU work: they run on the blocking pool, two at a time, so the async workers keep serving
/// probes, pages and streams however many checks are sent.
static FIT_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// Runs `f` on the blocking pool when a what-if slot is free.
pub async fn off_the_workers<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    let _slot = FIT_SLOTS.acquire().await.map_err(|_| ApiError::Unavailable("shutting down".into()))?;
    tokio::task::spawn_blocking(f).await.map_err(|_| ApiError::Unavailable("the what-if check failed".into()))
}

/// What `POST /api/v1/fit` accepts: the form as JSON (`{"gpu_count": "1", …}` or
/// `{"yaml": "<Pod or Deployment>"}`), or the workload itself — YAML (any YAML content type, as
/// `curl --data-binary @pod.yaml -H 'Content-Type: application/yaml'` sends it) or JSON
/// (`kubectl get pod x -o json`).
pub fn fit_input(headers: &HeaderMap, body: &[u8]) -> Result<app::model::FitInput, ApiError> {
    const FORMS: &str = "send the form as JSON ({\"gpu_count\": \"1\", \"memory_request\": \"2Gi\", …} or {\"yaml\": \"<Pod or Deployment>\"}), or a \
        Pod or Deployment as YAML (Content-Type: application/yaml) or JSON";
    let text =
        std::str::from_utf8(body).map_err(|_| ApiError::bad("body", format!("the body is not UTF-8 text: {FORMS}")))?;
    if text.trim().is_empty() {
        return Err(ApiError::bad("body", format!("the body is empty: {FORMS}")));
    }
    let depth = crate::fit::workload::nesting_depth(text);
    if depth > crate::fit::workload::MAX_DEPTH {
        return Err(ApiError::bad(
            "body",
            format!("nested {depth} deep: more than the {} levels a workload needs", crate::fit::workload::MAX_DEPTH),
        ));
    }
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    if ct.contains("yaml") {
        return Ok(app::model::FitInput { yaml: text.to_string(), ..app::model::FitInput::default() });
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        // A Kubernetes object sent as JSON is also YAML.
        Ok(v) if v.get("kind").is_some() || v.get("apiVersion").is_some() => {
            Ok(app::model::FitInput { yaml: text.to_string(), ..app::model::FitInput::default() })
        }
        Ok(v) => serde_json::from_value(v).map_err(|e| ApiError::bad("body", format!("{e}: {FORMS}"))),
        // Not JSON, and no content type said YAML: try it as YAML all the same.
        Err(e) if !ct.contains("json") => match serde_yaml::from_str::<serde_yaml::Value>(text) {
            Ok(y) if y.get("kind").is_some() => {
                Ok(app::model::FitInput { yaml: text.to_string(), ..app::model::FitInput::default() })
            }
            _ => Err(ApiError::bad("body", format!("neither JSON ({e}) nor a Kubernetes object in YAML: {FORMS}"))),
        },
        Err(e) => Err(ApiError::bad("body", format!("not JSON ({e}): {FORMS}"))),
    }
}

/// `POST /api/v1/fit`: 200 with the verdicts, 422 with the input error (`error.field`), 400
/// for a body that is none of the accepted forms.
pub async fn fit(
    State(st): State<AppState>,
    headers: HeaderMap,
    uri: axum::http::Uri,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let lang = super::answer_lang(st.lang, &headers, uri.query());
    let src = st.fit.clone().ok_or_else(|| ApiError::Unavailable("the what-if check is not available".into()))?;
    let r = off_the_workers(move || fit_input(&headers, &body).map(|input| src.run(&input))).await??;
    let code = if r.error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let body = app::i18n::to_json(lang, &r).unwrap_or_else(|_| "{}".into());
    Ok((code, [(header::CONTENT_TYPE, "application/json"), (header::VARY, "Accept-Language")], body).into_response())
}

/// `GET /healthz`.
pub async fn healthz() -> &'static str {
    "ok\n"
}

/// `GET /readyz`: ready once the watchers have synced *and* the published view is derived from
/// that sync — between the two, a page would still say "Connecting" (the derivation of the
/// first synced state can take a moment on a busy machine).
pub async fn readyz(State(st): State<AppState>) -> Response {
    if st.watch.synced() && st.snapshots.borrow().view.source.synced {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        let mut r = (StatusCode::SERVICE_UNAVAILABLE, "first sync not finished\n").into_response();
        r.extensions_mut().insert(super::NotReadyYet);
        r
    }
}

/// A snapshot's JSON as a body without copying it (a view with 10,000 Pending pods is 25 MB).
struct Shared(Arc<str>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

fn json(body: Arc<str>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
            (header::VARY, "Accept-Language"),
        ],
        axum::body::Body::from(bytes::Bytes::from_owner(Shared(body))),
    )
        .into_response()
}

/// `GET /api/v1/cluster`: codes and numbers are the same in every language; the sentences
/// (diagnosis messages, normalised reasons) follow `?lang=` or `Accept-Language`.
#[tracing::instrument(skip_all)]
pub async fn cluster(State(st): State<AppState>, headers: HeaderMap, uri: axum::http::Uri) -> Response {
    let lang = super::answer_lang(st.lang, &headers, uri.query());
    let snap = st.snapshots.borrow().clone();
    // Written once per revision and language, on the blocking pool (megabytes on a long list).
    match tokio::task::spawn_blocking(move || snap.json(crate::publish::Form::whole(lang))).await {
        Ok(body) => json(body),
        Err(_) => ApiError::Unavailable("the view could not be written".into()).into_response(),
    }
}

/// `GET /metrics`.
pub async fn metrics(State(st): State<AppState>) -> Response {
    let snap = st.snapshots.borrow().clone();
    let stale_seconds = snap
        .view
        .source
        .stale_since
        .as_deref()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| (jiff::Timestamp::now().as_millisecond() - t.as_millisecond()) as f64 / 1000.0)
        .unwrap_or(0.0);
    let h = crate::metrics::Health {
        stream_clients: st.stream_clients.load(Ordering::Relaxed),
        rss_bytes: crate::metrics::rss_bytes(),
        stale_seconds,
        now: jiff::Timestamp::now().as_second(),
    };
    let Ok(text) = tokio::task::spawn_blocking(move || crate::metrics::render(&snap.view, h)).await else {
        return ApiError::Unavailable("the metrics could not be written".into()).into_response();
    };
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], text)
        .into_response()
}
