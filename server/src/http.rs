//! The HTTP surface: pages (Leptos SSR), the JSON API, the live stream, health, static assets,
//! and the security headers every response carries.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::boot::{Boot, Page};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures::StreamExt;
use leptos::config::LeptosOptions;
use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::auth::Access;
use crate::live::Snapshot;
use crate::watch::WatchState;

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    /// The latest snapshot.
    pub snapshots: watch::Receiver<Arc<Snapshot>>,
    /// Watch health (for /readyz).
    pub watch: Arc<WatchState>,
    /// Base path (`""` or `/gpu`).
    pub base: String,
    /// Leptos settings (where the bundle is).
    pub leptos: LeptosOptions,
    /// Kiosk rotation seconds.
    pub rotate: u32,
    /// Ends long-lived streams on shutdown.
    pub shutdown: watch::Receiver<bool>,
    /// Open stream connections (for /metrics).
    pub stream_clients: Arc<AtomicU64>,
    /// Who may see the dashboard.
    pub access: Arc<Access>,
    /// Recorded history.
    pub history: crate::history_http::History,
    /// The watched state, for the what-if check.
    pub fit: Option<FitSource>,
    /// The CSP every response carries (frame-ancestors from the allow-list, …); pages add
    /// their script nonce to it.
    pub csp_base: Arc<str>,
}

/// What the what-if check reads.
#[derive(Clone)]
pub struct FitSource {
    /// The watchers' stores.
    pub stores: crate::watch::Stores,
    /// Unified-memory settings.
    pub opts: crate::derive::Options,
}

impl FitSource {
    fn run(&self, input: &app::model::FitInput) -> app::model::FitResult {
        let parsed = if input.yaml.trim().is_empty() {
            crate::fit::workload::from_form(input)
        } else {
            crate::fit::workload::from_yaml(&input.yaml)
        };
        match parsed {
            Ok(w) => {
                let inputs = self.stores.inputs();
                let opts = self.opts.clone();
                crate::fit::fit(&inputs, &w, &|n| crate::derive::node::unified_memory(n, opts.matches(n)))
            }
            Err(e) => app::model::FitResult { error: Some(e), ..app::model::FitResult::default() },
        }
    }
}

async fn fit_api(State(st): State<AppState>, body: axum::body::Bytes) -> Response {
    let input: app::model::FitInput = match serde_json::from_slice(&body) {
        Ok(i) => i,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(serde_json::json!({"error": {"field": "body", "message": e.to_string()}})),
            )
                .into_response()
        }
    };
    let Some(src) = &st.fit else { return (StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response() };
    let r = src.run(&input);
    let code = if r.error.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    (code, axum::Json(r)).into_response()
}

async fn fit_form(State(st): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "too large\n").into_response(),
    };
    let mut input = app::model::FitInput::default();
    for pair in String::from_utf8_lossy(&bytes).split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = app::boot::percent_decode(v);
        match k {
            "yaml" => input.yaml = v,
            "gpu_resource" => input.gpu_resource = v,
            "gpu_count" => input.gpu_count = v,
            "cpu_request" => input.cpu_request = v,
            "cpu_limit" => input.cpu_limit = v,
            "memory_request" => input.memory_request = v,
            "memory_limit" => input.memory_limit = v,
            "node_selector" => input.node_selector = v,
            "tolerations" => input.tolerations = v,
            "runtime_class" => input.runtime_class = v,
            "replicas" => input.replicas = v,
            _ => {}
        }
    }
    let result = st.fit.as_ref().map(|s| s.run(&input)).unwrap_or_default();
    let req = Request::from_parts(parts, axum::body::Body::empty());
    render(st, req, Some((input, result))).await
}

impl axum::extract::FromRef<AppState> for crate::history_http::History {
    fn from_ref(st: &AppState) -> Self {
        st.history.clone()
    }
}

/// Decrements the stream-client gauge when a stream ends.
struct ClientGuard(Arc<AtomicU64>);

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(st): State<AppState>) -> Response {
    if st.watch.synced() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "first sync not finished\n").into_response()
    }
}

fn json(body: Arc<str>) -> Response {
    ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body.to_string())
        .into_response()
}

async fn cluster(State(st): State<AppState>) -> Response {
    let snap = st.snapshots.borrow().clone();
    json(snap.json())
}

async fn metrics(State(st): State<AppState>) -> Response {
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
    };
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], crate::metrics::render(&snap.view, h))
        .into_response()
}

async fn stream(State(st): State<AppState>) -> Response {
    let mut shutdown = st.shutdown.clone();
    st.stream_clients.fetch_add(1, Ordering::Relaxed);
    let guard = ClientGuard(st.stream_clients.clone());
    // The first event is the full view; then the deltas from the revision this client has —
    // one, or several when it was slow and skipped revisions; the full view again only when
    // it fell further behind than the snapshot's recent deltas reach. Every event is built
    // once per revision and shared by all clients.
    let mut sent = 0u64;
    let events = WatchStream::new(st.snapshots.clone()).flat_map(move |snap| {
        let _alive = &guard;
        let frames: Vec<bytes::Bytes> = match snap.catch_up(sent) {
            crate::live::CatchUp::Nothing => Vec::new(),
            crate::live::CatchUp::Deltas(ds) => ds.map(|(_, f)| f.clone()).collect(),
            crate::live::CatchUp::Full => vec![snap.frame()],
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
        [(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

async fn page(State(st): State<AppState>, req: Request) -> Response {
    render(st, req, None).await
}

async fn render(st: AppState, req: Request, fit: Option<(app::model::FitInput, app::model::FitResult)>) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let sub = path.strip_prefix(st.base.as_str()).unwrap_or(&path).to_string();
    let view = st.snapshots.borrow().view.clone();
    let mut boot = Boot::from_request(&st.base, &sub, &query, st.rotate, view);
    boot.history_problem = st.history.problem();
    boot.fit = fit;
    let status = if boot.page == Page::NotFound { StatusCode::NOT_FOUND } else { StatusCode::OK };
    let opts = st.leptos.clone();
    // A fresh nonce per page: the only inline script (Leptos' hydration loader) carries it, and
    // the page's CSP allows no other inline script.
    let nonce = leptos::nonce::Nonce::new();
    let csp = format!(
        "{}; default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'",
        st.csp_base
    );
    let n2 = nonce.clone();
    let render = leptos_axum::render_app_to_stream_with_context(
        move || leptos::prelude::provide_context(n2.clone()),
        move || app::views::shell(opts.clone(), boot.clone()),
    );
    let mut resp = render(req).await;
    if let Ok(v) = HeaderValue::from_str(&csp) {
        resp.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// The CSP directives every response carries.
pub fn csp_base(frame_ancestors: &[String]) -> String {
    let ancestors = if frame_ancestors.is_empty() { "'none'".to_string() } else { frame_ancestors.join(" ") };
    format!("frame-ancestors {ancestors}; object-src 'none'; base-uri 'none'; form-action 'self'")
}

/// Largest request body accepted (the fit check's YAML is the biggest legitimate one).
pub const BODY_LIMIT: usize = 256 * 1024;

/// The browser bundle: files sent as `cargo xtask site` compressed them (brotli or gzip, by the
/// request's `Accept-Encoding`), revalidated by `Last-Modified` on each page load, since their
/// names do not change between builds.
fn bundle(
    pkg: std::path::PathBuf,
) -> impl tower::Service<
    Request,
    Response = Response<tower_http::services::fs::ServeFileSystemResponseBody>,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone
       + Send
       + Sync
       + 'static {
    tower::ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::appending(header::VARY, HeaderValue::from_static("accept-encoding")))
        .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .service(ServeDir::new(pkg).append_index_html_on_directories(false).precompressed_br().precompressed_gzip())
}

/// The router, mounted under the base path, with access control, limits and security headers.
pub fn router(st: AppState, frame_ancestors: &[String]) -> Router {
    let pkg = std::path::Path::new(st.leptos.site_root.as_ref()).join(st.leptos.site_pkg_dir.as_ref());
    let access = st.access.clone();
    let st_csp = st.csp_base.clone();
    // Everything but the live stream gets a time limit; the stream is long-lived by design.
    let bounded: Router<AppState> = Router::new()
        .route("/", get(page))
        .route("/pending", get(page))
        .route("/diagnoses", get(page))
        .route("/history", get(page))
        .route("/fit", get(page).post(fit_form))
        .route("/api/v1/fit", axum::routing::post(fit_api))
        .route("/api/v1/history/series", get(crate::history_http::series))
        .route("/api/v1/history/pods", get(crate::history_http::pods))
        .route("/api/v1/history/diagnoses", get(crate::history_http::diagnoses))
        .route("/api/v1/history/status", get(crate::history_http::status))
        .route("/charts/{file}", get(crate::history_http::chart))
        .route("/nodes/{name}", get(page))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/api/v1/cluster", get(cluster))
        .route("/login", get(crate::auth::login_form).post(crate::auth::login_submit).with_state(access.clone()))
        .nest_service("/pkg", bundle(pkg))
        .fallback(page)
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(30),
        ));
    let inner: Router<AppState> = bounded.route("/api/v1/stream", get(stream));
    let base = st.base.clone();
    let app: Router = if base.is_empty() {
        inner.with_state(st)
    } else {
        Router::new().nest(&base, inner).route(&format!("{base}/"), get(page)).with_state(st)
    };
    let csp = st_csp.to_string();
    app.layer(axum::middleware::from_fn_with_state(access, crate::auth::guard))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_str(&csp).unwrap_or_else(|_| HeaderValue::from_static("frame-ancestors 'none'")),
        ))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .layer(SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static(if frame_ancestors.is_empty() { "DENY" } else { "SAMEORIGIN" }),
        ))
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(tower_http::catch_panic::CatchPanicLayer::new())
        .layer(tower_http::trace::TraceLayer::new_for_http())
}
