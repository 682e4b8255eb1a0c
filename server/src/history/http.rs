//! HTTP for history: JSON under `/api/v1/history/…` and SVG charts under `/charts/…`. Thin:
//! parse the query, call a query or chart function, map the error.

mod chart;

use std::sync::Arc;

use app::i18n::Lang;
use app::model::Range;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use gpudash_web::query::Params;
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

use crate::error::ApiError;
use crate::history::charts::{self, ChartError, Unit};
use crate::history::{query, report, Config, Health};

pub use chart::chart;

/// History's state as handlers see it.
#[derive(Clone)]
pub struct History {
    /// The pool, when history is available.
    pub pool: Option<SqlitePool>,
    /// What each writer reports.
    pub health: Arc<Health>,
    /// Settings.
    pub cfg: Config,
    /// The site's time zone (charts use the reader's when their cookie names one).
    pub zone: Arc<str>,
}

impl History {
    /// The current problems, if any.
    pub fn problem(&self) -> Option<String> {
        self.health.problem()
    }
}

/// `?node=&metric=&resource=&range=`
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SeriesParams {
    node: String,
    metric: String,
    resource: String,
    range: Range,
}

/// `?namespace=&name=&range=`
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PodParams {
    namespace: Option<String>,
    name: String,
    range: Range,
}

/// `?range=&lang=`
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DiagnosisParams {
    range: Range,
    lang: Option<String>,
}

/// `?node=&resource=&namespace=&name=&quota=&range=&theme=&lang=`
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ChartParams {
    node: String,
    resource: String,
    namespace: String,
    name: String,
    quota: String,
    range: Range,
    theme: Option<String>,
    lang: Option<String>,
}

/// The longest step a recorded line is drawn across (beyond it, nothing was recorded): a
/// heartbeat and two samples, at least two rollup buckets.
fn max_step(cfg: &Config) -> i64 {
    let step = (cfg.heartbeat.as_secs() + 2 * cfg.resolution.as_secs().max(1)) as i64;
    step.max(cfg.rollup_width.as_secs() as i64 * 2)
}

/// `?month=|from=&to=&by=&tz=&sort=&format=&lang=`: read as given; [`report_window`] and
/// [`load_report`] say what is wrong in each.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct ReportParams {
    /// `YYYY-MM`.
    pub month: String,
    /// RFC 3339 or Unix seconds.
    pub from: String,
    /// RFC 3339 or Unix seconds.
    pub to: String,
    /// Minutes east of UTC.
    pub tz: String,
    /// `namespace`, `workload` or `pod`.
    pub by: String,
    /// A column to sort by.
    pub sort: Option<String>,
    /// `csv` for CSV.
    pub format: String,
    /// The CSV headers' language.
    pub lang: Option<String>,
}

/// `?lang=` read leniently (`ja-JP` is Japanese; an unknown tag is English).
fn lang_of(lang: Option<&str>) -> Option<Lang> {
    lang.and_then(Lang::parse)
}

fn pool(h: &History) -> Result<&SqlitePool, ApiError> {
    h.pool
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable(h.problem().unwrap_or_else(|| "history is not available".into())))
}

/// The time window and the pool every history read needs (a bad range was refused, 400, by
/// the parameters' extractor, even when history is unavailable, 503).
fn scope(h: &History, range: Range) -> Result<(i64, i64, &SqlitePool), ApiError> {
    let (from, to) = gpudash_web::series::window(range);
    Ok((from, to, pool(h)?))
}

#[derive(Serialize)]
struct SeriesOut {
    node: String,
    metric: String,
    resource: String,
    from: i64,
    to: i64,
    points: Vec<query::Point>,
    gaps: Vec<(i64, i64, String)>,
}

/// `GET /api/v1/history/series?node=&metric=&resource=&range=`
pub async fn series(State(h): State<History>, Params(q): Params<SeriesParams>) -> Result<Response, ApiError> {
    let (from, to, pool) = scope(&h, q.range)?;
    let SeriesParams { node, metric, resource, .. } = q;
    if metric.is_empty() {
        return Err(ApiError::bad(
            "metric",
            "metric is required (gpu_capacity, gpu_allocatable, gpu_allocated, gpu_holders, gpu_out_of_service, \
            mem_allocatable, mem_requests, mem_limits, mem_used, pending, pending_gpu)",
        ));
    }
    let query = |e| ApiError::internal("history query", e);
    let points = query::points(pool, &node, &metric, &resource, from, to).await.map_err(query)?;
    let gaps = query::gaps(pool, from, to).await.map_err(query)?;
    Ok(Json(SeriesOut { node, metric, resource, from, to, points, gaps }).into_response())
}

/// `GET /api/v1/history/pods?namespace=&name=&range=`
pub async fn pods(State(h): State<History>, Params(q): Params<PodParams>) -> Result<Response, ApiError> {
    let (from, to, pool) = scope(&h, q.range)?;
    let pod = q.namespace.as_deref().filter(|_| !q.name.is_empty()).map(|ns| (ns, q.name.as_str()));
    let v = query::pod_intervals(pool, pod, from, to).await.map_err(|e| ApiError::internal("history query", e))?;
    Ok(Json(serde_json::json!({"from": from, "to": to, "intervals": v})).into_response())
}

/// `GET /api/v1/history/diagnoses?range=&lang=`
pub async fn diagnoses(
    State(h): State<History>,
    headers: axum::http::HeaderMap,
    Params(q): Params<DiagnosisParams>,
) -> Result<Response, ApiError> {
    let (from, to, pool) = scope(&h, q.range)?;
    let lang = lang_of(q.lang.as_deref()).unwrap_or_else(|| crate::http::answer_lang(Lang::En, &headers, None));
    let v = query::diagnoses(pool, from, to, lang).await.map_err(|e| ApiError::internal("history query", e))?;
    Ok(Json(serde_json::json!({"from": from, "to": to, "events": v})).into_response())
}

/// `GET /api/v1/history/status`
pub async fn status(State(h): State<History>) -> Response {
    let used = match &h.pool {
        Some(p) => crate::history::retention::used_bytes(p).await.ok(),
        None => None,
    };
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(serde_json::json!({"available": h.pool.is_some(), "problem": h.problem(), "problems": h.health.problems(), "used_bytes": used})),
    )
        .into_response()
}

/// Longest report range: a year and a day.
const MAX_REPORT_SECONDS: i64 = 367 * 86_400;

/// The last second a report may name: 9999-12-31T23:59:59Z.
const LAST_REPORT_SECOND: i64 = 253_402_300_799;

/// A report's window and time zone from the query: `month=YYYY-MM`, or `from=`/`to=` (RFC 3339
/// or Unix seconds), the current month when neither is given; `tz=` minutes east of UTC for
/// months and days (0 when not given).
pub fn report_window(q: &ReportParams, now: i64) -> Result<(i64, i64, i32), ApiError> {
    let tz: i32 = match Some(q.tz.as_str()).filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => t
            .parse()
            .ok()
            .filter(|m| (-720..=840).contains(m))
            .ok_or_else(|| ApiError::bad("tz", "tz is minutes east of UTC, from -720 to 840 (540 for Japan)"))?,
    };
    let off = i64::from(tz) * 60;
    let month_start = |y: i64, m: i64| app::time::days_from_civil(y, m, 1) * 86_400 - off;
    let month = |s: &str| -> Option<(i64, i64)> {
        let (y, m) = s.split_once('-')?;
        let (y, m): (i64, i64) = (y.parse().ok()?, m.parse().ok()?);
        ((1970..=9999).contains(&y) && (1..=12).contains(&m) && s.len() == 7)
            .then(|| (month_start(y, m), if m == 12 { month_start(y + 1, 1) } else { month_start(y, m + 1) }))
    };
    // Every time a report takes lies within the years a month can name: nothing it computes
    // from them (the range, days, buckets) can overflow (`from=-9223372036854775808` once
    // wrapped past the range check in release builds and read all history).
    let time = |k: &str, v: &str| -> Result<Option<i64>, ApiError> {
        match Some(v).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v
                .parse::<i64>()
                .ok()
                .or_else(|| app::time::parse_rfc3339(v))
                .filter(|t| (0..=LAST_REPORT_SECOND).contains(t))
                .map(Some)
                .ok_or_else(|| {
                    ApiError::bad(
                        k,
                        format!("{k} is RFC 3339 (2026-11-01T00:00:00Z) or Unix seconds, from 1970 to 9999"),
                    )
                }),
        }
    };
    let (from, to) =
        match (Some(q.month.as_str()).filter(|m| !m.is_empty()), time("from", &q.from)?, time("to", &q.to)?) {
            (Some(m), _, _) => month(m).ok_or_else(|| ApiError::bad("month", "month is YYYY-MM (2026-11)"))?,
            (None, Some(f), Some(t)) => (f, t),
            (None, Some(f), None) => (f, now),
            (None, None, Some(_)) => return Err(ApiError::bad("from", "from is required with to")),
            (None, None, None) => {
                let (y, m, _) = app::time::civil_from_days((now + off).div_euclid(86_400));
                (month_start(y, m), if m == 12 { month_start(y + 1, 1) } else { month_start(y, m + 1) })
            }
        };
    if to <= from {
        return Err(ApiError::bad("to", "to must be after from"));
    }
    if to.checked_sub(from).is_none_or(|span| span > MAX_REPORT_SECONDS) {
        return Err(ApiError::bad("to", "a report covers at most 367 days"));
    }
    Ok((from, to, tz))
}

/// How long a report may take, its wait for a slot included: it answers before the request's
/// 30 s limit, and stops computing when nobody would read it.
pub const REPORT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(25);

/// The report a query asks for (shared by the API and the page).
pub async fn load_report(h: &History, q: &ReportParams) -> Result<report::Report, ApiError> {
    let deadline = std::time::Instant::now() + REPORT_DEADLINE;
    let now = jiff::Timestamp::now().as_second();
    let (from, to, tz) = report_window(q, now)?;
    let by = report::By::parse(&q.by).ok_or_else(|| ApiError::bad("by", "by is namespace, workload or pod"))?;
    let pool = pool(h)?;
    let mut r = report::report(pool, from, to, now, by, tz, max_step(&h.cfg), deadline).await.map_err(|e| match e {
        report::ReportError::Stopped(report::Stopped::TooLong) => ApiError::Unprocessable {
            field: "to".into(),
            message: format!(
                "the report took longer than {} s: ask for a shorter range, or group by namespace or workload",
                REPORT_DEADLINE.as_secs()
            ),
        },
        report::ReportError::Stopped(report::Stopped::TooManyRows(max)) => ApiError::Unprocessable {
            field: "by".into(),
            message: format!(
                "the report has more than {max} rows: group by workload or namespace, or ask for a shorter range"
            ),
        },
        report::ReportError::Busy => {
            ApiError::Unavailable("other reports are being computed: try again in a moment".into())
        }
        e => ApiError::internal("history query", e),
    })?;
    if let Some(column) = q.sort.clone() {
        r = tokio::task::spawn_blocking(move || {
            app::model::report::sort_rows(&mut r.rows, &column);
            r
        })
        .await
        .map_err(|e| ApiError::internal("sorting the report", e))?;
    }
    Ok(r)
}

/// `GET /api/v1/reports?month=|from=&to=&by=&tz=` — JSON, or CSV with `format=csv` (headers in
/// `lang=`'s language).
pub async fn reports(State(h): State<History>, Params(q): Params<ReportParams>) -> Result<Response, ApiError> {
    let r = load_report(&h, &q).await?;
    if q.format == "csv" {
        let heads = report::csv_heads(lang_of(q.lang.as_deref()).unwrap_or_default());
        let by = if q.by.is_empty() { "namespace" } else { q.by.as_str() };
        let name = format!("gpudash-gpu-hours-{by}.csv");
        // Written on the blocking pool and streamed in 64 KiB chunks: a year by pod is
        // megabytes, which the response does not hold whole; a client that leaves stops it.
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::convert::Infallible>>(4);
        tokio::task::spawn_blocking(move || {
            report::csv_chunks(&r, &heads, 64 * 1024, &mut |chunk| tx.blocking_send(Ok(chunk)).is_ok())
        });
        let csv = axum::body::Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        }));
        return Ok((
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
                (header::CACHE_CONTROL, "no-store".to_string()),
            ],
            csv,
        )
            .into_response());
    }
    let json = tokio::task::spawn_blocking(move || serde_json::to_vec(&r))
        .await
        .map_err(|e| ApiError::internal("writing the report", e))?
        .map_err(|e| ApiError::internal("writing the report", e))?;
    Ok(([(header::CACHE_CONTROL, "no-store"), (header::CONTENT_TYPE, "application/json")], json).into_response())
}
