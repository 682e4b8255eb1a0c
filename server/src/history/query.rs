//! Reading history back: series points (full resolution and rollups), gaps, pod intervals,
//! diagnosis events. Every query here runs in a test against a real SQLite file.

use app::i18n::Lang;
use serde::Serialize;
use sqlx::SqlitePool;

pub use gpudash_web::series::{segments, Point};

/// The series' id, and the points both readers start from: rollups in `[from, to]` and the
/// last sample before `from` (the value in force at `from`). None when the series is unknown.
async fn series_start(
    pool: &SqlitePool,
    node: &str,
    metric: &str,
    resource: &str,
    from: i64,
    to: i64,
) -> Result<Option<(i64, Vec<Point>)>, sqlx::Error> {
    let id: Option<(i64,)> = sqlx::query_as("SELECT id FROM series WHERE node = ? AND metric = ? AND resource = ?")
        .bind(node)
        .bind(metric)
        .bind(resource)
        .fetch_optional(pool)
        .await?;
    let Some((id,)) = id else { return Ok(None) };
    let rollups: Vec<(i64, f64, f64, f64)> = sqlx::query_as(
        "SELECT bucket, min, avg, max FROM rollups WHERE series = ? AND bucket BETWEEN ? AND ? ORDER BY bucket",
    )
    .bind(id)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await?;
    let before: Option<(i64, f64)> =
        sqlx::query_as("SELECT ts, value FROM samples WHERE series = ? AND ts < ? ORDER BY ts DESC LIMIT 1")
            .bind(id)
            .bind(from)
            .fetch_optional(pool)
            .await?;
    // Where the line stopped (its node removed, its agent silent): no value from there. Read
    // from the sample in force at `from`: a stop between it and `from` means none is.
    let since = before.map_or(from, |(ts, _)| ts);
    let stops: Vec<(i64,)> = sqlx::query_as("SELECT ts FROM series_stops WHERE series = ? AND ts BETWEEN ? AND ?")
        .bind(id)
        .bind(since)
        .bind(to)
        .fetch_all(pool)
        .await?;
    let mut out: Vec<Point> = rollups
        .into_iter()
        .map(|(ts, min, avg, max)| Point { ts, value: avg, min: Some(min), max: Some(max) })
        .collect();
    let (earlier, stops): (Vec<i64>, Vec<i64>) = stops.into_iter().map(|(ts,)| ts).partition(|ts| *ts < from);
    out.extend(before.filter(|_| earlier.is_empty()).map(|(ts, value)| Point { ts, value, min: None, max: None }));
    out.extend(stops.into_iter().map(Point::stop));
    Ok(Some((id, out)))
}

/// A series' points in `[from, to]`, including the last point before `from` (the value in force
/// at `from`), rollups first then full-resolution samples, in time order.
/// The resources a node's `metric` is recorded for that start with `prefix` (each GPU's busy
/// series is `resource|device`).
pub async fn resources_like(
    pool: &SqlitePool,
    node: &str,
    metric: &str,
    prefix: &str,
) -> Result<Vec<String>, sqlx::Error> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT resource FROM series WHERE node = ? AND metric = ? AND substr(resource, 1, ?) = ? ORDER BY resource",
    )
    .bind(node)
    .bind(metric)
    .bind(i64::try_from(prefix.chars().count()).unwrap_or(0))
    .bind(prefix)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}

/// Points of one series between `from` and `to`, starting with the value that held at `from`.
pub async fn points(
    pool: &SqlitePool,
    node: &str,
    metric: &str,
    resource: &str,
    from: i64,
    to: i64,
) -> Result<Vec<Point>, sqlx::Error> {
    let Some((id, mut out)) = series_start(pool, node, metric, resource, from, to).await? else {
        return Ok(Vec::new());
    };
    let samples: Vec<(i64, f64)> =
        sqlx::query_as("SELECT ts, value FROM samples WHERE series = ? AND ts BETWEEN ? AND ? ORDER BY ts")
            .bind(id)
            .bind(from)
            .bind(to)
            .fetch_all(pool)
            .await?;
    out.extend(samples.into_iter().map(|(ts, value)| Point { ts, value, min: None, max: None }));
    out.sort_by_key(|p| p.ts);
    Ok(out)
}

/// As [`points`], but full-resolution samples are bucketed by SQLite into `width`-second buckets
/// (each bucket gives its minimum and then its maximum), so that long ranges read a few thousand
/// rows instead of every sample.
pub async fn points_bucketed(
    pool: &SqlitePool,
    node: &str,
    metric: &str,
    resource: &str,
    from: i64,
    to: i64,
    width: i64,
) -> Result<Vec<Point>, sqlx::Error> {
    let Some((id, mut out)) = series_start(pool, node, metric, resource, from, to).await? else {
        return Ok(Vec::new());
    };
    let width = width.max(1);
    let buckets: Vec<(i64, i64, f64, f64)> = sqlx::query_as(
        "SELECT (ts / ?1) * ?1 AS b, MIN(ts), MIN(value), MAX(value) FROM samples WHERE series = ?2 AND ts BETWEEN ?3 AND ?4 GROUP BY b ORDER BY b",
    )
    .bind(width)
    .bind(id)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await?;
    for (b, first, lo, hi) in buckets {
        out.push(Point { ts: first, value: lo, min: Some(lo), max: Some(hi) });
        if hi > lo {
            out.push(Point { ts: (b + width / 2).max(first + 1), value: hi, min: Some(lo), max: Some(hi) });
        }
    }
    out.sort_by_key(|p| p.ts);
    Ok(out)
}

/// Gaps overlapping `[from, to]`; an open gap ends at `to`.
pub async fn gaps(pool: &SqlitePool, from: i64, to: i64) -> Result<Vec<(i64, i64, String)>, sqlx::Error> {
    let rows: Vec<(i64, Option<i64>, String)> = sqlx::query_as(
        "SELECT start, end, reason FROM gaps WHERE start <= ? AND (end IS NULL OR end >= ?) ORDER BY start",
    )
    .bind(to)
    .bind(from)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(s, e, r)| (s.max(from), e.unwrap_or(to).min(to), r)).collect())
}

/// One pod interval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct PodInterval {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// `pending` or `running`.
    pub state: String,
    /// Node it ran on.
    pub node: Option<String>,
    /// GPU resource requested or held.
    pub gpu_resource: Option<String>,
    /// GPU units.
    pub gpu_count: Option<i64>,
    /// Reasons seen while pending.
    pub reasons: Option<String>,
    /// Start (Unix seconds).
    pub start: i64,
    /// End, or null while open.
    pub end: Option<i64>,
    /// False when it ended while gpudash was not watching (the end is an upper bound of the start of the gap).
    pub end_known: bool,
}

/// Pod intervals overlapping `[from, to]`, optionally for one pod.
pub async fn pod_intervals(
    pool: &SqlitePool,
    pod: Option<(&str, &str)>,
    from: i64,
    to: i64,
) -> Result<Vec<PodInterval>, sqlx::Error> {
    let (ns, name) = pod.unwrap_or(("", ""));
    sqlx::query_as(
        "SELECT namespace, name, state, node, gpu_resource, gpu_count, reasons, start, end, end_known FROM pod_intervals
         WHERE start <= ? AND (end IS NULL OR end >= ?) AND (? = '' OR (namespace = ? AND name = ?))
         ORDER BY start, namespace, name LIMIT 5000",
    )
    .bind(to)
    .bind(from)
    .bind(name)
    .bind(ns)
    .bind(name)
    .fetch_all(pool)
    .await
}

/// One diagnosis event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiagnosisEvent {
    /// Code.
    pub code: String,
    /// Severity.
    pub severity: String,
    /// Kind of object.
    pub kind: String,
    /// Namespace.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// Message when raised, in the language asked for: said again from the sentences that made
    /// it where they were recorded and this build has them, else as recorded in that language.
    pub message: String,
    /// The language of `message`: the one asked for, or `en` where the event was recorded in
    /// English only (before gpudash kept both languages).
    pub message_lang: String,
    /// Raised at.
    pub raised: i64,
    /// Cleared at, or null while open.
    pub cleared: Option<i64>,
}

/// A diagnosis event as stored.
#[derive(sqlx::FromRow)]
struct StoredEvent {
    code: String,
    severity: String,
    kind: String,
    namespace: Option<String>,
    name: String,
    message: String,
    message_ja: Option<String>,
    message_form: Option<String>,
    raised: i64,
    cleared: Option<i64>,
}

impl StoredEvent {
    /// The event read in `lang`: from its form where it says it, else from the stored words.
    fn read(self, lang: Lang) -> DiagnosisEvent {
        let Self { code, severity, kind, namespace, name, message, message_ja, message_form, raised, cleared } = self;
        let said = message_form
            .as_deref()
            .and_then(|f| serde_json::from_str::<app::i18n::Form>(f).ok())
            .and_then(|f| gpudash_core::catalogue::say(&f, lang));
        let (message, message_lang) = match (said, lang, message_ja) {
            (Some(m), _, _) => (m, lang.code()),
            (None, Lang::Ja, Some(ja)) => (ja, "ja"),
            (None, _, _) => (message, "en"),
        };
        let message_lang = message_lang.to_string();
        DiagnosisEvent { code, severity, kind, namespace, name, message, message_lang, raised, cleared }
    }
}

/// Diagnosis events overlapping `[from, to]`, their messages in `lang` (see [`DiagnosisEvent`]).
pub async fn diagnoses(pool: &SqlitePool, from: i64, to: i64, lang: Lang) -> Result<Vec<DiagnosisEvent>, sqlx::Error> {
    let rows: Vec<StoredEvent> = sqlx::query_as(
        "SELECT code, severity, kind, namespace, name, message, message_ja, message_form, raised, cleared \
         FROM diagnosis_events WHERE raised <= ? AND (cleared IS NULL OR cleared >= ?) ORDER BY raised LIMIT 5000",
    )
    .bind(to)
    .bind(from)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| r.read(lang)).collect())
}

/// When each diagnosis about one pod was raised within the range (its code), for the marks on
/// its timeline: what happened to it (OOM-killed, preempted, evicted, held without running).
pub async fn pod_diagnoses(
    pool: &SqlitePool,
    ns: &str,
    name: &str,
    from: i64,
    to: i64,
) -> Result<Vec<(i64, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT raised, code FROM diagnosis_events WHERE kind = 'Pod' AND namespace = ? AND name = ? \
         AND raised >= ? AND raised <= ? ORDER BY raised LIMIT 50",
    )
    .bind(ns)
    .bind(name)
    .bind(from)
    .bind(to)
    .fetch_all(pool)
    .await
}

/// The diagnoses left open when gpudash last stopped (code, kind, namespace, name, raised),
/// when that stop was at most `within` seconds before `now` — the times the next run's view
/// may say they have held since. Older than that, whether they held in between is not known.
pub async fn open_diagnoses(
    pool: &SqlitePool,
    now: i64,
    within: i64,
) -> Result<Vec<(String, String, String, String, i64)>, sqlx::Error> {
    let hb: Option<(String,)> =
        sqlx::query_as("SELECT value FROM gpudash_meta WHERE key = 'heartbeat'").fetch_optional(pool).await?;
    let hb: i64 = hb.and_then(|(s,)| s.parse().ok()).unwrap_or(0);
    if hb <= 0 || now - hb > within {
        return Ok(Vec::new());
    }
    sqlx::query_as(
        "SELECT code, kind, COALESCE(namespace, ''), name, raised FROM diagnosis_events WHERE cleared IS NULL LIMIT 100000",
    )
    .fetch_all(pool)
    .await
}
