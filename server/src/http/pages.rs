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
    if Page::from_path(&sub) == Page::NotFound {
        return not_found_page(&st.base, super::answer_lang(st.lang, req.headers(), Some(&query)));
    }
    let snap = st.snapshots.borrow().clone();
    let whole = &snap.view;
    // `?lang=` is read again by `from_request` (it pins the language on links).
    let lang = super::answer_lang(st.lang, req.headers(), None);
    let mut boot = Boot::from_request(&st.base, &sub, &query, st.rotate, lang, app::model::ClusterView::default());
    let (zone, tz) = super::zone::of_request(req.headers(), &st.zone);
    boot.zone = super::zone::page_zone(&zone, &tz, jiff::Timestamp::now());
    boot.history_problem = st.history.problem();
    boot.fit = fit;
    // The page copies only the lists it shows; a list longer than a live page carries (any
    // tenant can make 10,000 Pending pods) is paged without being copied, as is the overview
    // of a site larger than the live one shows (or a kiosk's, whose pending list would be).
    let long = |page: &Page| {
        use gpudash_core::lists::{pending_count, LIVE_MAX_ITEMS};
        match page {
            Page::Pending => pending_count(whole) > LIVE_MAX_ITEMS,
            Page::Diagnoses => whole.diagnoses.len() > LIVE_MAX_ITEMS,
            Page::Overview => boot.kiosk && pending_count(whole) > LIVE_MAX_ITEMS,
            _ => false,
        }
    };
    let long = long(&boot.page);
    if boot.page == Page::Overview && (whole.nodes.len() > gpudash_core::overview::LIVE_MAX_NODES || long) {
        boot.view = whole.lean((false, false, false));
        page_the_overview(&mut boot);
    } else if long || boot.wants_list() {
        // Sorting 10,000 items is work for the blocking pool too, within the render slots (40
        // readers sorting at once held 10 MiB of sort keys).
        let snap = std::sync::Arc::clone(&snap);
        let Ok(slot) = render_slots().acquire().await else {
            return crate::error::ApiError::Unavailable("the page could not be rendered".into()).into_response();
        };
        boot = match tokio::task::spawn_blocking(move || {
            page_the_list(&mut boot, &snap.view);
            drop(slot);
            boot
        })
        .await
        {
            Ok(b) => b,
            Err(_) => {
                return crate::error::ApiError::Unavailable("the page could not be rendered".into()).into_response()
            }
        };
    } else {
        boot.take_view(whole);
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
        let page = boot.page_no;
        boot.report = Some(
            report
                .map(|mut r| {
                    // A long report by pod is paged (a year by pod was 114 MB of HTML); the CSV
                    // and the API keep every row.
                    let rows = gpudash_core::reports::page_rows(&mut r, page);
                    let mut sheet = gpudash_core::reports::sheet(&r, zone);
                    sheet.rows = rows;
                    (r, sheet)
                })
                .map_err(|e| e.to_string()),
        );
    }
    let status = StatusCode::OK;
    let mut opts = st.leptos.clone();
    opts.output_name = bundle_for(&opts, &boot).into();
    // A fresh nonce per page: the only inline script (Leptos' hydration loader) carries it, and
    // the page's CSP allows no other inline script.
    let nonce = leptos::nonce::Nonce::new();
    let csp = format!(
        "{}; default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
            connect-src 'self'",
        st.csp_base
    );
    let (parts, _) = req.into_parts();
    // The live overview, pending and diagnoses pages while their first load (the page and the
    // bundle, gzip) stays within budget; past it, the paged ones.
    let measure = matches!(boot.page, Page::Overview | Page::Pending | Page::Diagnoses) && boot.hydrates();
    let (mut resp, gz) = match draw(&parts, opts.clone(), nonce.clone(), boot.clone(), measure).await {
        Ok(drawn) => drawn,
        Err(e) => return e.into_response(),
    };
    if gz.is_some_and(|gz| bundle_gzip(&opts) + gz > FIRST_LOAD_BUDGET) {
        if boot.page == Page::Overview {
            page_the_overview(&mut boot);
        } else {
            page_the_list(&mut boot, whole);
        }
        resp = match draw(&parts, opts, nonce, boot, false).await {
            Ok((r, _)) => r,
            Err(e) => return e.into_response(),
        };
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

/// Pages rendered at once, each on a thread of the blocking pool: the rest wait their turn
/// (asynchronously, within the request's 30 s), and the async workers stay free for the probes,
/// the API and the live stream. Twenty readers of a 25.7 MB pending page once held every worker
/// for ~28 s (`/healthz` 14.1 s).
fn render_slots() -> &'static tokio::sync::Semaphore {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map(std::num::NonZeroUsize::get).unwrap_or(2);
        tokio::sync::Semaphore::new(cores.clamp(2, 8))
    })
}

/// Renders the document for `boot` on the blocking pool, within [`render_slots`], its body
/// whole; with `measure`, also its size gzip-compressed as the server sends it.
async fn draw(
    parts: &axum::http::request::Parts,
    opts: leptos::config::LeptosOptions,
    nonce: leptos::nonce::Nonce,
    boot: Boot,
    measure: bool,
) -> Result<(Response, Option<u64>), crate::error::ApiError> {
    let busy = || crate::error::ApiError::Unavailable("the page could not be rendered".into());
    let slot = render_slots().acquire().await.map_err(|_| busy())?;
    let render = leptos_axum::render_app_to_stream_with_context(
        move || leptos::prelude::provide_context(nonce.clone()),
        move || app::views::shell(opts.clone(), boot.clone()),
    );
    let req = Request::from_parts(parts.clone(), axum::body::Body::empty());
    let rt = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        rt.block_on(async move {
            let (head, body) = render(req).await.into_parts();
            let bytes = axum::body::to_bytes(body, 64 << 20).await.unwrap_or_default();
            let gz = measure.then(|| gzip_len(&bytes));
            // Held until the page is drawn, even when its reader has gone (the request's timeout).
            drop(slot);
            (Response::from_parts(head, axum::body::Body::from(bytes)), gz)
        })
    })
    .await
    .map_err(|_| busy())
}

/// Turns the pending or diagnoses page into its paged form: a page of `whole`'s list (the most
/// severe and longest waiting first, narrowed by `?ns=` and `?code=`), copying no more of it.
fn page_the_list(boot: &mut Boot, whole: &app::model::ClusterView) {
    use gpudash_core::lists;
    let (ns, code, page) = (boot.ns.as_deref(), boot.code.as_deref(), boot.page_no);
    boot.view = whole.lean((false, false, false));
    let list = if boot.page == Page::Diagnoses {
        let (list, items) = lists::diagnoses_page(whole, ns, code, page);
        boot.view.diagnoses = items;
        list
    } else {
        let (list, items) = lists::pending_page(whole, ns, code, page);
        boot.view.pending = items;
        list
    };
    boot.list = Some(list);
}

/// Turns the overview into its paged form.
fn page_the_overview(boot: &mut Boot) {
    let (ns, label, group) = (boot.ns.as_deref(), boot.label.as_deref(), boot.group.as_deref());
    boot.sheet = Some(gpudash_core::overview::sheet(&boot.view, ns, label, group, boot.page_no));
}

/// The bundle `boot`'s page hydrates with: its own (`cargo xtask site` builds one with the
/// overview's views only and one with the pending and diagnoses pages') when the site has it,
/// else the whole one (`opts.output_name`) — which the kiosk needs, its overview turning into
/// the pending page in place.
fn bundle_for(opts: &leptos::config::LeptosOptions, boot: &Boot) -> String {
    let own = match boot.page {
        Page::Overview if !boot.kiosk => "-overview",
        Page::Pending | Page::Diagnoses => "-lists",
        _ => return opts.output_name.to_string(),
    };
    let name = format!("{}{own}", opts.output_name);
    if bundle_gzip_of(opts, &name).is_some() {
        name
    } else {
        opts.output_name.to_string()
    }
}

/// The bundle a live page loads (its stylesheet, script and WASM), gzip as served: the
/// precompressed files' sizes, read once per bundle (0 when the site has none).
fn bundle_gzip(opts: &leptos::config::LeptosOptions) -> u64 {
    bundle_gzip_of(opts, &opts.output_name).unwrap_or(0)
}

/// [`bundle_gzip`] of the bundle `name`; None when its WASM is not there.
fn bundle_gzip_of(opts: &leptos::config::LeptosOptions, name: &str) -> Option<u64> {
    type Sizes = std::sync::Mutex<std::collections::HashMap<String, Option<u64>>>;
    static SIZES: std::sync::OnceLock<Sizes> = std::sync::OnceLock::new();
    let mut sizes = SIZES.get_or_init(Sizes::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    *sizes.entry(name.to_string()).or_insert_with(|| {
        let pkg = std::path::Path::new(opts.site_root.as_ref()).join(opts.site_pkg_dir.as_ref());
        let size = |f: String| std::fs::metadata(pkg.join(f)).ok().map(|m| m.len());
        let wasm = size(format!("{name}_bg.wasm.gz"))?;
        Some(wasm + size(format!("{name}.js.gz")).unwrap_or(0) + size("gpudash.css.gz".into()).unwrap_or(0))
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
