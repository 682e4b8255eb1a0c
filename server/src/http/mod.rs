//! The HTTP surface: the router with its access control, limits and security headers, and the
//! state every handler shares. Handlers live in rooms: [`api`] (JSON API, metrics, probes),
//! [`stream`] (server-sent events), [`pages`] (server-rendered pages, `public/`, 404).

pub mod api;
pub mod pages;
pub mod stream;
#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use leptos::config::LeptosOptions;
use tokio::sync::watch;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::publish::Snapshot;
use crate::watchers::WatchState;
use gpudash_web::auth::Access;

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
    /// The language when neither `?lang=` nor `Accept-Language` names one of ours (`--lang`).
    pub lang: app::i18n::Lang,
    /// The site's time zone (`--timezone`, else `TZ`, else UTC): times are shown in the
    /// reader's when their browser has said it.
    pub zone: Arc<str>,
    /// Ends long-lived streams on shutdown.
    pub shutdown: watch::Receiver<bool>,
    /// Open stream connections (for /metrics).
    pub stream_clients: Arc<AtomicU64>,
    /// Open stream clients per language (the derivation serialises deltas for those).
    pub readers: crate::publish::Readers,
    /// Who may see the dashboard.
    pub access: Arc<Access>,
    /// Recorded history.
    pub history: crate::history::http::History,
    /// The watched state, for the what-if check.
    pub fit: Option<FitSource>,
    /// The CSP every response carries (frame-ancestors from the allow-list, …); pages add
    /// their script nonce to it.
    pub csp_base: Arc<str>,
}

/// What the what-if check reads: the cluster's objects now (the watchers' stores, or fixed
/// inputs in tests) and the unified-memory settings.
#[derive(Clone)]
pub struct FitSource {
    /// A snapshot of the watched objects.
    pub inputs: Arc<dyn Fn() -> crate::derive::Inputs + Send + Sync>,
    /// Unified-memory settings.
    pub opts: crate::derive::Options,
}

impl axum::extract::FromRef<AppState> for crate::history::http::History {
    fn from_ref(st: &AppState) -> Self {
        st.history.clone()
    }
}

/// The CSP directives every response carries.
pub fn csp_base(frame_ancestors: &[String]) -> String {
    let ancestors = if frame_ancestors.is_empty() { "'none'".to_string() } else { frame_ancestors.join(" ") };
    format!("frame-ancestors {ancestors}; object-src 'none'; base-uri 'none'; form-action 'self'")
}

pub use gpudash_web::{answer_lang, serve, zone};

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
    let site = std::path::PathBuf::from(st.leptos.site_root.as_ref());
    let pkg = site.join(st.leptos.site_pkg_dir.as_ref());
    let access = st.access.clone();
    let st_csp = st.csp_base.clone();
    // What `POST /mcp`'s tools read: this process's own API routes, reached without the network
    // (the MCP request itself has passed the sign-in).
    let api: Router = Router::new()
        .route("/api/v1/cluster", get(api::cluster))
        .route("/api/v1/fit", axum::routing::post(api::fit))
        .route("/api/v1/reports", get(crate::history::http::reports))
        .route("/api/v1/history/series", get(crate::history::http::series))
        .with_state(st.clone());
    let lang = st.lang;
    let mcp = move |headers: axum::http::HeaderMap, body: bytes::Bytes| {
        let api = api.clone();
        async move { crate::mcp::http(api, lang, headers, body).await }
    };
    let none = || async { StatusCode::METHOD_NOT_ALLOWED };
    // Everything but the live stream gets a time limit; the stream is long-lived by design.
    let bounded: Router<AppState> = Router::new()
        .route("/mcp", axum::routing::post(mcp).get(none).delete(none))
        .route("/", get(pages::page))
        .route("/pending", get(pages::page))
        .route("/diagnoses", get(pages::page))
        .route("/history", get(pages::page))
        .route("/quotas", get(pages::page))
        .route("/reports", get(pages::page))
        .route("/fit", get(pages::page).post(pages::fit_form))
        .route("/api/v1/fit", axum::routing::post(api::fit))
        .route("/api/v1/history/series", get(crate::history::http::series))
        .route("/api/v1/history/pods", get(crate::history::http::pods))
        .route("/api/v1/history/diagnoses", get(crate::history::http::diagnoses))
        .route("/api/v1/history/status", get(crate::history::http::status))
        .route("/api/v1/reports", get(crate::history::http::reports))
        .route("/charts/{file}", get(crate::history::http::chart))
        .route("/nodes/{name}", get(pages::page))
        .route("/healthz", get(api::healthz))
        .route("/readyz", get(api::readyz))
        .route("/metrics", get(api::metrics))
        .route("/api/v1/cluster", get(api::cluster))
        .route("/login", get(crate::auth::login_form).post(crate::auth::login_submit).with_state(access.clone()))
        .route("/login/oidc", get(crate::auth::oidc_start).with_state(access.clone()))
        .route("/login/oidc/callback", get(crate::auth::oidc_callback).with_state(access.clone()))
        .route("/logout", get(crate::auth::logout_form).post(crate::auth::logout).with_state(access.clone()))
        .nest_service("/pkg", bundle(pkg))
        // `public/` (copied into the site root by `cargo xtask site`): favicon, robots.txt.
        // Anything else is a small 404.
        .fallback_service(
            ServeDir::new(site)
                .append_index_html_on_directories(false)
                .fallback(axum::handler::HandlerWithoutStateExt::into_service(not_found_stateless(st.base.clone()))),
        )
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(30),
        ));
    let inner: Router<AppState> = bounded.route("/api/v1/stream", get(stream::stream));
    let base = st.base.clone();
    let app: Router = if base.is_empty() {
        inner.with_state(st)
    } else {
        Router::new().nest(&base, inner).route(&format!("{base}/"), get(pages::page)).with_state(st)
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
        .layer(tower_http::trace::TraceLayer::new_for_http().on_response(log_server_error).on_failure(log_stream_error))
}

/// A 503 that is the answer asked for, not a failure: `/readyz` before the first sync (probes
/// poll it every few seconds; a cluster that does not answer kept gpudash logging an ERROR per
/// probe). Set on the response by its handler.
#[derive(Debug, Clone, Copy)]
pub struct NotReadyYet;

/// Logs each response as tower-http's trace layer does by default (DEBUG), and one with a
/// server error status (5xx) at ERROR, as its default failure log did — except `/readyz`'s
/// "not yet" ([`NotReadyYet`]).
fn log_server_error(res: &Response, latency: Duration, span: &tracing::Span) {
    use tower_http::trace::OnResponse;
    tower_http::trace::DefaultOnResponse::default().on_response(res, latency, span);
    if res.status().is_server_error() && res.extensions().get::<NotReadyYet>().is_none() {
        tracing::error!(status = %res.status(), latency_ms = latency.as_millis(), "response failed");
    }
}

/// Logs a response whose body failed while it was sent (a stream cut by an error); statuses
/// are logged by [`log_server_error`].
fn log_stream_error(class: tower_http::classify::ServerErrorsFailureClass, latency: Duration, _: &tracing::Span) {
    if let tower_http::classify::ServerErrorsFailureClass::Error(e) = class {
        tracing::error!(error = %e, latency_ms = latency.as_millis(), "response failed");
    }
}

/// The 404 handler for the static-file fallback (which has no access to the state).
fn not_found_stateless(
    base: String,
) -> impl Fn(Request) -> std::future::Ready<Response> + Clone + Send + Sync + 'static {
    move |req: Request| {
        let path = req.uri().path().to_string();
        let sub = path.strip_prefix(base.as_str()).unwrap_or(&path).to_string();
        let lang = answer_lang(app::i18n::Lang::En, req.headers(), req.uri().query());
        std::future::ready(pages::not_found_for(&base, &sub, lang))
    }
}
