//! Pages: the Leptos views rendered on the server (hydrated in the browser), the what-if form's
//! post, the files of `public/` at the site root, and a small 404 for everything else.

use app::boot::{Boot, Page};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{AppState, BODY_LIMIT};

/// `POST /fit`: the form, answered on the same page.
pub async fn fit_form(State(st): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "too large\n").into_response(),
    };
    // Fields not sent stay empty; a body that is not the form's is an empty form.
    let input: app::model::FitInput = gpudash_web::query::form(&bytes).unwrap_or_default();
    let result = match st.fit.clone() {
        Some(src) => {
            let i = input.clone();
            match super::api::off_the_workers(move || src.run(&i)).await {
                Ok(r) => r,
                Err(e) => return e.into_response(),
            }
        }
        None => app::model::FitResult::default(),
    };
    let req = Request::from_parts(parts, axum::body::Body::empty());
    render(st, req, Some((input, result))).await
}

/// A page.
pub async fn page(State(st): State<AppState>, req: Request) -> Response {
    render(st, req, None).await
}

async fn render(st: AppState, req: Request, fit: Option<(app::model::FitInput, app::model::FitResult)>) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let sub = path.strip_prefix(st.base.as_str()).unwrap_or(&path).to_string();
    let view = st.snapshots.borrow().view.clone();
    if Page::from_path(&sub) == Page::NotFound {
        return not_found_page(&st.base, super::answer_lang(st.lang, req.headers(), Some(&query)));
    }
    // `?lang=` is read again by `from_request` (it pins the language on links).
    let lang = super::answer_lang(st.lang, req.headers(), None);
    let mut boot = Boot::from_request(&st.base, &sub, &query, st.rotate, lang, view);
    let (zone, tz) = super::zone::of_request(req.headers(), &st.zone);
    boot.zone = super::zone::page_zone(&zone, &tz, jiff::Timestamp::now());
    boot.history_problem = st.history.problem();
    boot.fit = fit;
    // A site larger than the live overview can show gets the paged one.
    if boot.page == Page::Overview && boot.view.nodes.len() > gpudash_core::overview::LIVE_MAX_NODES {
        page_the_overview(&mut boot);
    }
    if boot.page == Page::Reports {
        // Days and months in the reader's zone unless the query names another offset.
        if !boot.report_query.iter().any(|(k, _)| k == "tz") {
            let minutes = boot.zone.at(jiff::Timestamp::now().as_second()).0 / 60;
            boot.report_query.push(("tz".into(), minutes.to_string()));
        }
        let report = match gpudash_web::query::from_pairs(&boot.report_query) {
            Ok(q) => crate::history::http::load_report(&st.history, &q).await,
            Err(e) => Err(e),
        };
        let zone = &boot.zone;
        boot.report = Some(
            report
                .map(|r| {
                    let sheet = gpudash_core::reports::sheet(&r, zone);
                    (r, sheet)
                })
                .map_err(|e| e.to_string()),
        );
    }
    let status = StatusCode::OK;
    let opts = st.leptos.clone();
    // A fresh nonce per page: the only inline script (Leptos' hydration loader) carries it, and
    // the page's CSP allows no other inline script.
    let nonce = leptos::nonce::Nonce::new();
    let csp = format!(
        "{}; default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
            connect-src 'self'",
        st.csp_base
    );
    let (parts, _) = req.into_parts();
    let mut resp = draw(&parts, opts.clone(), nonce.clone(), boot.clone()).await;
    // The live overview while its first load (the page and the bundle, gzip) stays within
    // budget; past it, the paged one.
    if boot.page == Page::Overview && boot.hydrates() {
        let (head, body) = resp.into_parts();
        let bytes = axum::body::to_bytes(body, 64 << 20).await.unwrap_or_default();
        if bundle_gzip(&opts) + gzip_len(&bytes) > FIRST_LOAD_BUDGET {
            page_the_overview(&mut boot);
            resp = draw(&parts, opts, nonce, boot).await;
        } else {
            resp = Response::from_parts(head, axum::body::Body::from(bytes));
        }
    }
    if let Ok(v) = HeaderValue::from_str(&csp) {
        resp.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept-Language, Cookie"));
    resp
}

/// A page's first load may weigh this much, gzip (the page, its stylesheet and the bundle),
/// less a margin for the compressor's level.
const FIRST_LOAD_BUDGET: u64 = 200 * 1024 - 256;

/// Renders the document for `boot`.
async fn draw(
    parts: &axum::http::request::Parts,
    opts: leptos::config::LeptosOptions,
    nonce: leptos::nonce::Nonce,
    boot: Boot,
) -> Response {
    let render = leptos_axum::render_app_to_stream_with_context(
        move || leptos::prelude::provide_context(nonce.clone()),
        move || app::views::shell(opts.clone(), boot.clone()),
    );
    render(Request::from_parts(parts.clone(), axum::body::Body::empty())).await
}

/// Turns the overview into its paged form.
fn page_the_overview(boot: &mut Boot) {
    let (ns, label, group) = (boot.ns.as_deref(), boot.label.as_deref(), boot.group.as_deref());
    boot.sheet = Some(gpudash_core::overview::sheet(&boot.view, ns, label, group, boot.page_no));
}

/// The bundle a live page loads (its stylesheet, script and WASM), gzip as served: the
/// precompressed files' sizes, read once.
fn bundle_gzip(opts: &leptos::config::LeptosOptions) -> u64 {
    static SIZE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        let pkg = std::path::Path::new(opts.site_root.as_ref()).join(opts.site_pkg_dir.as_ref());
        ["gpudash.css.gz", "gpudash.js.gz", "gpudash_bg.wasm.gz"]
            .iter()
            .filter_map(|f| std::fs::metadata(pkg.join(f)).ok())
            .map(|m| m.len())
            .sum()
    })
}

/// `bytes`' size gzip-compressed as the server compresses pages (the default level).
fn gzip_len(bytes: &[u8]) -> u64 {
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = gz.write_all(bytes);
    gz.finish().map(|v| v.len() as u64).unwrap_or(u64::MAX)
}

/// What every unknown path and missing file gets: a few hundred bytes that embed no cluster
/// state (the hydrating page would carry the whole view — megabytes on a large cluster — for
/// a browser's `/favicon.ico` or a mistyped link). API paths get the JSON error.
pub fn not_found_for(base: &str, sub: &str, lang: app::i18n::Lang) -> Response {
    if sub.starts_with("/api/") {
        return crate::error::ApiError::NotFound(format!("no such API path: {sub}")).into_response();
    }
    not_found_page(base, lang)
}

fn not_found_page(base: &str, lang: app::i18n::Lang) -> Response {
    let html = app::views::plain::page(base, lang, app::views::plain::Plain::NotFound);
    let mut r = (StatusCode::NOT_FOUND, html).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}
