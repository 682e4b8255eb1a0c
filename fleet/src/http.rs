//! The fleet service's HTTP: the page, `GET /api/v1/fleet`, its live stream, history as JSON and
//! SVG charts from PostgreSQL, `/metrics`, probes. Read-only: anything but GET is 405.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;

use app::model::Range;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures::StreamExt;
use tokio_stream::wrappers::WatchStream;

use crate::page;
use crate::view::{FleetView, SiteState};
use gpudash_web::charts::{self, Unit};
use gpudash_web::error::ApiError;
use gpudash_web::query::Params;
use serde::Deserialize;

/// What the handlers read.
#[derive(Clone)]
pub struct FleetState {
    /// The latest fleet view.
    pub view: tokio::sync::watch::Receiver<Arc<FleetView>>,
    /// The history.
    pub pool: sqlx::PgPool,
    /// The base path (`/fleet`), or empty.
    pub base: String,
    /// Longest a value holds before it is drawn as unknown (the recorder's heartbeat and more).
    pub max_step: i64,
    /// The fleet's time zone (`TZ`, else UTC): a reader's own, from the cookie, wins.
    pub zone: Arc<str>,
}

/// The fleet page's and its stream's `?kiosk=1&embed=1&range=`: read leniently (a page never
/// refuses its own link: an unknown range is the default).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PageParams {
    kiosk: String,
    embed: String,
    range: String,
}

impl PageParams {
    fn flag(v: &str) -> bool {
        v == "1" || v == "true"
    }
}

/// `?site=&node=&metric=&resource=&range=&theme=`
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HistoryParams {
    site: String,
    node: String,
    metric: Option<String>,
    resource: String,
    range: Range,
    theme: Option<String>,
}

/// The page's language, by the site's rules: `?lang=`, else Accept-Language, else English.
fn lang(headers: &axum::http::HeaderMap, uri: &axum::http::Uri) -> app::i18n::Lang {
    gpudash_web::answer_lang(app::i18n::Lang::En, headers, uri.query())
}

async fn page_handler(
    State(st): State<FleetState>,
    Params(q): Params<PageParams>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let v = st.view.borrow().clone();
    let range = Range::parse(&q.range).unwrap_or_default();
    let zone = reader_zone(&st, &headers);
    let (kiosk, embed) = (PageParams::flag(&q.kiosk), PageParams::flag(&q.embed));
    let shown =
        page::Shown { base: st.base.clone(), kiosk, embed, range: range.name(), lang: lang(&headers, &uri), zone };
    let html = page::page(&v, &shown);
    ([(header::VARY, "Accept-Language, Cookie")], Html(html)).into_response()
}

/// The reader's zone (the cookie the fleet page's script sets, as the site's pages do), else
/// the fleet's, with its offsets around now.
fn reader_zone(st: &FleetState, headers: &axum::http::HeaderMap) -> app::time::Zone {
    let (name, tz) = gpudash_web::zone::of_request(headers, &st.zone);
    gpudash_web::zone::page_zone(&name, &tz, jiff::Timestamp::now())
}

async fn fleet_json(State(st): State<FleetState>) -> Json<FleetView> {
    Json(st.view.borrow().as_ref().clone())
}

/// An SSE event whose data may span lines.
fn sse(event: &str, data: &str) -> bytes::Bytes {
    let mut out = format!("event: {event}\n");
    for line in data.lines() {
        let _ = writeln!(out, "data: {line}");
    }
    out.push('\n');
    bytes::Bytes::from(out)
}

/// The cards one client was last sent: (site, card HTML), in order.
type Sent = Option<Vec<(String, String)>>;

/// What one client's stream sends for a new fleet view, given what it was last sent: every card
/// at first (and if the set of sites were to change), then only the cards that changed and,
/// when the sites' order changed, the order (`fleet.js` moves the cards it has) — at 100 sites
/// a change was ~80 KB of cards before, one card now — and the status line.
fn updates(sent: &mut Sent, v: &FleetView, kiosk: bool, lang: app::i18n::Lang, zone: &app::time::Zone) -> Vec<u8> {
    let cards: Vec<(String, String)> =
        v.sites.iter().map(|s| (s.name.clone(), page::card(s, kiosk, lang, zone))).collect();
    let mut b = Vec::new();
    let names = |c: &[(String, String)]| c.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    match sent.as_deref() {
        Some(prev)
            if {
                let (mut a, mut z) = (names(prev), names(&cards));
                a.sort();
                z.sort();
                a == z
            } =>
        {
            let before: HashMap<&str, &str> = prev.iter().map(|(n, h)| (n.as_str(), h.as_str())).collect();
            for (name, html) in &cards {
                if before.get(name.as_str()) != Some(&html.as_str()) {
                    b.extend_from_slice(&sse("card", html));
                }
            }
            if names(prev) != names(&cards) {
                b.extend_from_slice(&sse("order", &serde_json::to_string(&names(&cards)).unwrap_or_default()));
            }
        }
        _ => b.extend_from_slice(&sse("cards", &cards.iter().map(|c| c.1.as_str()).collect::<String>())),
    }
    b.extend_from_slice(&sse("status", &page::status_line(v, lang, zone)));
    *sent = Some(cards);
    b
}

async fn stream(
    State(st): State<FleetState>,
    Params(q): Params<PageParams>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let kiosk = PageParams::flag(&q.kiosk);
    let lang = lang(&headers, &uri);
    let zone = reader_zone(&st, &headers);
    let mut sent: Sent = None;
    let events = WatchStream::new(st.view.clone())
        .map(move |v| Ok::<_, Infallible>(bytes::Bytes::from(updates(&mut sent, &v, kiosk, lang, &zone))));
    let keep_alive = tokio_stream::wrappers::IntervalStream::new(tokio::time::interval_at(
        tokio::time::Instant::now() + std::time::Duration::from_secs(15),
        std::time::Duration::from_secs(15),
    ))
    .map(|_| Ok(bytes::Bytes::from_static(b": keep-alive\n\n")));
    (
        [(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")],
        axum::body::Body::from_stream(futures::stream::select(events, keep_alive)),
    )
        .into_response()
}

async fn history(State(st): State<FleetState>, Params(q): Params<HistoryParams>) -> Result<Response, ApiError> {
    let (from, to) = gpudash_web::series::window(q.range);
    let site = q.site;
    if site.is_empty() {
        return Err(ApiError::bad("site", "site= is required"));
    }
    let metric = q.metric.unwrap_or_else(|| "site_gpu_allocated".into());
    let fail = |e| ApiError::internal("fleet history", e);
    let points = crate::store::points(&st.pool, &site, &q.node, &metric, &q.resource, from, to).await.map_err(fail)?;
    let gaps = crate::store::gaps(&st.pool, &site, from, to).await.map_err(fail)?;
    let points: Vec<serde_json::Value> =
        points.iter().map(|p| serde_json::json!({"ts": p.ts, "value": p.value, "min": p.min, "max": p.max})).collect();
    Ok(Json(
        serde_json::json!({"site": site, "metric": metric, "from": from, "to": to, "points": points, "gaps": gaps}),
    )
    .into_response())
}

async fn site_chart(
    State(st): State<FleetState>,
    Params(q): Params<HistoryParams>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Result<Response, ApiError> {
    let lang = lang(&headers, &uri);
    let s = lang.s();
    let (from, to) = gpudash_web::series::window(q.range);
    let site = q.site;
    let fail = |e| ApiError::internal("fleet chart", e);
    let gaps = crate::store::gaps(&st.pool, &site, from, to).await.map_err(fail)?;
    let mut lines = Vec::new();
    for (i, (metric, label)) in [
        ("site_gpu_allocated", s.chart_site_held),
        ("site_gpu_capacity", s.chart_site_units),
        ("site_pending", s.chart_site_pending),
    ]
    .iter()
    .enumerate()
    {
        let points = crate::store::points(&st.pool, &site, "", metric, "", from, to).await.map_err(fail)?;
        let segs = gpudash_web::series::segments(&points, &gaps, st.max_step, to);
        lines.push(charts::Line { label: (*label).to_string(), color: i, segments: segs });
    }
    let (_, tz) = gpudash_web::zone::of_request(&headers, &st.zone);
    let look = charts::Look { dark: q.theme.as_deref() == Some("dark"), lang, tz };
    let svg = charts::line_chart(&site, Unit::Count, &lines, &gaps, from, to, look, (900, 320))
        .map_err(|e| ApiError::internal("fleet chart", e))?;
    Ok(([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response())
}

async fn metrics(State(st): State<FleetState>) -> Response {
    let v = st.view.borrow().clone();
    let mut out = String::new();
    let gauges: [(&str, &str); 8] = [
        ("gpudash_fleet_site_live", "1 when the site is live, 0 when stale or unreachable"),
        ("gpudash_fleet_site_nodes", "nodes at the site (last view)"),
        ("gpudash_fleet_site_nodes_ready", "ready nodes at the site (last view)"),
        ("gpudash_fleet_site_gpu_capacity", "GPU units at the site (last view)"),
        ("gpudash_fleet_site_gpu_allocated", "GPU units held at the site (last view)"),
        ("gpudash_fleet_site_pending", "pending pods at the site (last view)"),
        ("gpudash_fleet_site_critical", "critical diagnoses at the site (last view)"),
        ("gpudash_fleet_site_warning", "warnings at the site (last view)"),
    ];
    for (i, (name, help)) in gauges.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for s in &v.sites {
            let label = s.name.replace('\\', "\\\\").replace('"', "\\\"");
            let value = match (i, &s.totals) {
                (0, _) => Some(u64::from(s.state == SiteState::Live)),
                (_, None) => None,
                (1, Some(t)) => Some(u64::from(t.nodes)),
                (2, Some(t)) => Some(u64::from(t.nodes_ready)),
                (3, Some(t)) => Some(t.gpu_capacity),
                (4, Some(t)) => Some(t.gpu_allocated),
                (5, Some(t)) => Some(u64::from(t.pending)),
                (6, Some(t)) => Some(u64::from(t.critical)),
                (_, Some(t)) => Some(u64::from(t.warning)),
            };
            // Unknown is left out, never written as 0.
            if let Some(x) = value {
                let _ = writeln!(
                    out,
                    "{name}{{site=\"{label}\",state=\"{}\"}} {x}",
                    serde_json::to_value(s.state).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
                );
            }
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

/// The router, under `base`, behind the site's sign-in (`access`: open when it names no token
/// or proxy).
pub fn router(st: FleetState, site_root: &std::path::Path, access: Arc<gpudash_web::auth::Access>) -> Router {
    let pkg = tower_http::services::ServeDir::new(site_root.join("pkg")).precompressed_br().precompressed_gzip();
    let routes = Router::new()
        .route("/", get(page_handler))
        .route("/api/v1/fleet", get(fleet_json))
        .route("/api/v1/fleet/stream", get(stream))
        .route("/api/v1/fleet/history", get(history))
        .route("/charts/site.svg", get(site_chart))
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
        .route("/fleet.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], page::SCRIPT) }))
        .route("/zone.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], app::time::ZONE_SCRIPT) }))
        .route(
            "/login",
            get(gpudash_web::auth::login_form).post(gpudash_web::auth::login_submit).with_state(access.clone()),
        )
        .route(
            "/logout",
            get(gpudash_web::auth::logout_form).post(gpudash_web::auth::logout).with_state(access.clone()),
        )
        .route("/login/oidc", get(gpudash_web::auth::oidc_start).with_state(access.clone()))
        .route("/login/oidc/callback", get(gpudash_web::auth::oidc_callback).with_state(access.clone()))
        .nest_service("/pkg", pkg)
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .with_state(st.clone());
    let app = if st.base.is_empty() { routes } else { Router::new().nest(&st.base, routes) };
    app.layer(axum::middleware::from_fn_with_state(access, gpudash_web::auth::guard))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Family, SiteTotals, SiteView};

    fn fleet(sites: usize) -> FleetView {
        let site = |i: usize| SiteView {
            name: format!("plant-{i:04}"),
            url: format!("https://plant-{i:04}.example/gpu"),
            state: SiteState::Live,
            stale_since: None,
            revision: Some(7),
            totals: Some(SiteTotals {
                nodes: 10,
                nodes_ready: 10,
                gpu_capacity: 40,
                gpu_allocated: 31,
                pending: 2,
                critical: 0,
                warning: 1,
            }),
            families: vec![Family { family: "nvidia.com/gpu".into(), held: 31, total: 40 }],
            error: None,
            cut: None,
        };
        FleetView { generated_at: "2026-12-05T06:00:00Z".into(), sites: (0..sites).map(site).collect() }
    }

    /// What a change costs each client: the whole list once, then one card (and the order when it
    /// moves). Figures printed for docs/benchmarks.md.
    #[test]
    fn the_stream_sends_every_card_once_then_only_what_changed() {
        for n in [100, 1000] {
            let mut v = fleet(n);
            let mut sent: Sent = None;
            let first = updates(&mut sent, &v, false, app::i18n::Lang::En, &app::time::Zone::default());
            let text = String::from_utf8_lossy(&first).to_string();
            assert!(text.starts_with("event: cards\n") && text.matches("<article").count() == n, "first: all cards");
            // Nothing changed but the time: the status line alone.
            v.generated_at = "2026-12-05T06:00:01Z".into();
            let idle = updates(&mut sent, &v, false, app::i18n::Lang::En, &app::time::Zone::default());
            assert!(!String::from_utf8_lossy(&idle).contains("event: card"), "no card when none changed");
            // One site's pending count changes.
            if let Some(t) = v.sites.get_mut(n / 2).and_then(|s| s.totals.as_mut()) {
                t.pending = 3;
            }
            let one = updates(&mut sent, &v, false, app::i18n::Lang::En, &app::time::Zone::default());
            let text = String::from_utf8_lossy(&one).to_string();
            assert_eq!(text.matches("event: card\n").count(), 1, "{text}");
            assert!(text.contains(&format!(r#"data-site="plant-{:04}""#, n / 2)) && !text.contains("event: order"));
            // It turns unreachable and moves to the front: its card and the order.
            let mut s = v.sites.remove(n / 2);
            s.state = SiteState::Unreachable;
            v.sites.insert(0, s);
            let moved = updates(&mut sent, &v, false, app::i18n::Lang::En, &app::time::Zone::default());
            let text = String::from_utf8_lossy(&moved).to_string();
            assert_eq!(text.matches("event: card\n").count(), 1, "{text}");
            let order = text.lines().find_map(|l| l.strip_prefix("data: [")).unwrap_or_default();
            assert!(order.starts_with(&format!(r#""plant-{:04}","plant-0000""#, n / 2)), "{order}");
            println!(
                "fleet stream at {n} sites: first {} bytes; a changed card {} bytes (every card was {} bytes); a card and the order {} bytes",
                first.len(),
                one.len(),
                first.len(),
                moved.len()
            );
            assert!(one.len() * 20 < first.len(), "{} vs {}", one.len(), first.len());
        }
    }
}
