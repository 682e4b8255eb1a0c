//! GPU-hours reports from history: per namespace, workload or pod, the GPU-hours each held (in
//! physical GPUs: a time-slicing replica is its fraction of a GPU), how much of that the agent
//! measured and how much was used (held time weighted by the busy % of the GPU it sat on),
//! held while the GPU idled (< 5 % busy), memory-hours on unified-memory boards, and hours
//! waiting for a GPU. Gaps in history are left out of every figure and reported.
//!
//! [`compute`] is pure (rows in, report out) and tested to the second; [`report`] reads the rows
//! (the intervals as one JSON value; for reports over two days, each GPU's busy % summed per
//! hour by [`sum_busy_hours`]) and computes.

mod csv;

use std::collections::BTreeMap;

pub use app::model::report::{hours, By, Day, Figures, Report, Row};
use sqlx::SqlitePool;

pub use csv::{csv, csv_chunks, csv_heads};

use super::query::{self, Point};

/// Reports over at most this many seconds read every busy sample (exact to the second).
pub const EXACT_UP_TO: i64 = 2 * 86_400;
/// Narrowest busy bucket of a longer report: the rollup width.
const BUCKET_FLOOR: i64 = 600;

/// Below this busy %, held time counts as idle-held.
pub const IDLE_BELOW_PERCENT: f64 = 5.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// One row of `pod_intervals` (read from SQLite's JSON as an array of the fields in order).
#[derive(Debug, Clone, Default, sqlx::FromRow, serde::Deserialize)]
pub struct Interval {
    /// Namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// `pending` or `running`.
    pub state: String,
    /// Node (running).
    pub node: Option<String>,
    /// GPU resource held or asked for.
    pub gpu_resource: Option<String>,
    /// Physical GPUs held (NULL in rows written before reports existed).
    pub gpu_share: Option<f64>,
    /// `Kind/name` of its workload.
    pub workload: Option<String>,
    /// Memory request.
    pub mem_request_bytes: Option<i64>,
    /// 1 on a unified-memory board.
    pub unified: Option<i64>,
    /// Start (Unix seconds).
    pub start: i64,
    /// End, NULL while open.
    pub end: Option<i64>,
}

/// `[a, b)` minus the gaps, as sorted disjoint pieces.
fn pieces(a: i64, b: i64, gaps: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = vec![(a, b)];
    for &(gs, ge) in gaps {
        out = out
            .into_iter()
            .flat_map(|(s, e)| {
                if ge <= s || gs >= e {
                    vec![(s, e)]
                } else {
                    [(s, gs.max(s)), (ge.min(e), e)].into_iter().filter(|(x, y)| y > x).collect()
                }
            })
            .collect();
    }
    out
}

/// A step function `(start, end, value)`, one per busy series of a GPU.
type Steps = Vec<(i64, i64, f64)>;

/// Seconds of `[a, b)` each step covers, weighted: (covered, covered × busy/100, covered idle).
fn over(steps: &Steps, a: i64, b: i64) -> (f64, f64, f64) {
    let mut out = (0.0, 0.0, 0.0);
    for &(s, e, v) in steps {
        let d = (e.min(b) - s.max(a)).max(0) as f64;
        out.0 += d;
        out.1 += d * v / 100.0;
        if v < IDLE_BELOW_PERCENT {
            out.2 += d;
        }
    }
    out
}

/// Splits `[a, b)` at day boundaries (`tz` seconds east of UTC): (day start, seconds).
fn by_day(a: i64, b: i64, tz: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut t = a;
    while t < b {
        let day = (t + tz).div_euclid(86_400) * 86_400 - tz;
        let next = (day + 86_400).min(b);
        out.push((day, next - t));
        t = next;
    }
    out
}

/// The report from rows: intervals overlapping `[from, to)`, the gaps, and the busy steps of
/// each (node, resource)'s GPUs; open intervals and gaps end at `now`.
#[allow(clippy::too_many_arguments)]
pub fn compute(
    intervals: &[Interval],
    gaps: &[(i64, i64, String)],
    busy: &BTreeMap<(String, String), Vec<Steps>>,
    from: i64,
    to: i64,
    now: i64,
    by: By,
    tz_minutes: i32,
) -> Report {
    let unlimited = Limits { deadline: None, max_rows: usize::MAX };
    match compute_within(intervals, gaps, busy, (from, to, now), by, tz_minutes, unlimited) {
        Ok(r) => r,
        Err(stop) => unreachable!("no limits, yet stopped: {stop:?}"),
    }
}

/// How far a report's computation may go: a deadline (the request's) and a number of rows.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// When to give up (checked every [`CHECK_EVERY`] intervals).
    pub deadline: Option<std::time::Instant>,
    /// The most rows a report may have.
    pub max_rows: usize,
}

/// Why a report's computation stopped before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The deadline passed.
    TooLong,
    /// More rows than [`Limits::max_rows`].
    TooManyRows(usize),
}

/// How many intervals are added between two looks at the deadline.
const CHECK_EVERY: usize = 1024;

/// A report by pod over more than this many seconds (a month) is computed alone.
const LONG_BY_POD: i64 = 31 * 86_400;

/// The report slots (of two) a report over `[from, to)` grouped `by` takes: both for a report
/// by pod over more than [`LONG_BY_POD`], else one.
fn slots_for(by: By, from: i64, to: i64) -> u32 {
    if by == By::Pod && to.saturating_sub(from) > LONG_BY_POD {
        2
    } else {
        1
    }
}

/// The most rows a report computes: a year by pod on the hostile probe's site reached ~300,000
/// (a 33 MB CSV); the benchmark's 30 days by pod are 120,600. Past the cap the reader is told
/// to group by workload or namespace.
pub const MAX_ROWS: usize = 250_000;

/// [`compute`] within `limits`: stops with [`Stopped`] when the deadline passes or the rows
/// exceed the cap, so that a report nobody waits for any more frees its slot.
pub fn compute_within(
    intervals: &[Interval],
    gaps: &[(i64, i64, String)],
    busy: &BTreeMap<(String, String), Vec<Steps>>,
    (from, to, now): (i64, i64, i64),
    by: By,
    tz_minutes: i32,
    limits: Limits,
) -> Result<Report, Stopped> {
    let mut acc = Acc::default();
    let gaps = clip_gaps(gaps, from, to.min(now.max(from)));
    acc.add_intervals(intervals, &gaps, busy, (from, to.min(now.max(from))), by, tz_minutes, limits)?;
    Ok(acc.finish(gaps, from, to, by, tz_minutes))
}

/// A row's key: namespace, workload, pod.
type Key = (String, Option<String>, Option<String>);

/// Rows and days being added up.
#[derive(Default)]
struct Acc {
    rows: BTreeMap<Key, Figures>,
    days: BTreeMap<(i64, String), f64>,
}

/// The gaps within `[from, end)`.
fn clip_gaps(gaps: &[(i64, i64, String)], from: i64, end: i64) -> Vec<(i64, i64, String)> {
    gaps.iter().map(|(s, e, r)| ((*s).max(from), (*e).min(end), r.clone())).filter(|(s, e, _)| e > s).collect()
}

impl Acc {
    #[allow(clippy::too_many_arguments)]
    fn add_intervals(
        &mut self,
        intervals: &[Interval],
        gaps: &[(i64, i64, String)],
        busy: &BTreeMap<(String, String), Vec<Steps>>,
        (from, end): (i64, i64),
        by: By,
        tz_minutes: i32,
        limits: Limits,
    ) -> Result<(), Stopped> {
        let cut: Vec<(i64, i64)> = gaps.iter().map(|(s, e, _)| (*s, *e)).collect();
        let tz = i64::from(tz_minutes) * 60;
        let (rows, days) = (&mut self.rows, &mut self.days);
        for (k, iv) in intervals.iter().enumerate() {
            if k % CHECK_EVERY == CHECK_EVERY - 1 && limits.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Err(Stopped::TooLong);
            }
            if rows.len() > limits.max_rows {
                return Err(Stopped::TooManyRows(limits.max_rows));
            }
            let a = iv.start.max(from);
            let b = iv.end.unwrap_or(end).min(end);
            if b <= a {
                continue;
            }
            let parts = pieces(a, b, &cut);
            let secs: i64 = parts.iter().map(|(s, e)| e - s).sum();
            if secs == 0 {
                continue;
            }
            // Memory-hours on a unified-memory board count every running pod: its heap is the GPU's.
            let memory = match (iv.state.as_str(), iv.unified, iv.mem_request_bytes) {
                ("running", Some(1), Some(m)) => Some(m as f64 / GIB * secs as f64),
                _ => None,
            };
            let mut f = Figures { memory_gib_seconds: memory, ..Figures::default() };
            match (iv.state.as_str(), &iv.gpu_resource) {
                ("pending", Some(_)) => f.waited_seconds = secs as f64,
                ("running", Some(r)) => match iv.gpu_share {
                    Some(share) => {
                        f.held_gpu_seconds = share * secs as f64;
                        let devices = iv.node.as_ref().and_then(|n| busy.get(&(n.clone(), r.clone())));
                        if let Some(devices) = devices.filter(|d| !d.is_empty()) {
                            let n = devices.len() as f64;
                            let (mut m, mut u, mut i) = (0.0, 0.0, 0.0);
                            for steps in devices {
                                for (s, e) in &parts {
                                    let (dm, du, di) = over(steps, *s, *e);
                                    (m, u, i) = (m + dm, u + du, i + di);
                                }
                            }
                            f.measured_gpu_seconds = share * m / n;
                            if m > 0.0 {
                                f.used_gpu_seconds = Some(share * u / n);
                                f.idle_held_gpu_seconds = Some(share * i / n);
                            }
                        }
                        for (s, e) in &parts {
                            for (day, d) in by_day(*s, *e, tz) {
                                *days.entry((day, iv.namespace.clone())).or_default() += share * d as f64;
                            }
                        }
                    }
                    None => f.unknown_share_seconds = secs as f64,
                },
                ("running", None) if memory.is_some() => {}
                _ => continue,
            }
            let key = match by {
                By::Namespace => (iv.namespace.clone(), None, None),
                By::Workload => (
                    iv.namespace.clone(),
                    Some(iv.workload.clone().unwrap_or_else(|| format!("Pod/{}", iv.name))),
                    None,
                ),
                By::Pod => (iv.namespace.clone(), iv.workload.clone(), Some(iv.name.clone())),
            };
            rows.entry(key).or_default().add(&f);
        }
        if rows.len() > limits.max_rows {
            return Err(Stopped::TooManyRows(limits.max_rows));
        }
        Ok(())
    }

    fn finish(self, gaps: Vec<(i64, i64, String)>, from: i64, to: i64, by: By, tz_minutes: i32) -> Report {
        let Acc { rows, days } = self;
        let mut totals = Figures::default();
        let mut rows: Vec<Row> = rows
            .into_iter()
            .map(|((namespace, workload, pod), figures)| {
                totals.add(&figures);
                Row { namespace, workload, pod, figures }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.figures
                .held_gpu_seconds
                .total_cmp(&a.figures.held_gpu_seconds)
                .then_with(|| (&a.namespace, &a.workload, &a.pod).cmp(&(&b.namespace, &b.workload, &b.pod)))
        });
        let gap_seconds = gaps.iter().map(|(s, e, _)| e - s).sum();
        let days = days
            .into_iter()
            .map(|((start, namespace), held_gpu_seconds)| Day { start, namespace, held_gpu_seconds })
            .collect();
        Report { from, to, by, tz_minutes, rows, totals, gaps, gap_seconds, days }
    }
}

/// Busy points to steps: each value holds until the next point, a gap, `max_step` or `to`.
fn steps(points: &[Point], gaps: &[(i64, i64, String)], max_step: i64, to: i64) -> Steps {
    let mut out = Vec::new();
    for seg in query::segments(points, gaps, max_step, to) {
        for pair in seg.chunks(2) {
            if let [(s, v), (e, _)] = pair {
                if e > s {
                    out.push((*s, *e, *v));
                }
            }
        }
    }
    out
}

fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, sqlx::Error> {
    serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

/// Every interval a report over `[from, end)` counts (it holds or waits for a GPU, or runs on a
/// unified-memory board), as one JSON array SQLite builds and serde_json reads at once: a month
/// of a 1,000-node site is 120,000 intervals, and reading them as rows through sqlx took
/// 0.8–1.4 s on its own (docs/benchmarks.md), the JSON about a tenth of that.
async fn intervals(pool: &SqlitePool, from: i64, end: i64) -> Result<Vec<Interval>, sqlx::Error> {
    let (text,): (String,) = sqlx::query_as(
        "SELECT json_group_array(json_array(namespace, name, state, node, gpu_resource, gpu_share, workload, \
         mem_request_bytes, unified, start, end)) FROM pod_intervals \
         WHERE start < ?2 AND (end IS NULL OR end > ?1) AND (gpu_resource IS NOT NULL OR unified = 1)",
    )
    .bind(from)
    .bind(end)
    .fetch_one(pool)
    .await?;
    decode(&text)
}

/// The hour before which every GPU busy sample is summed in `busy_hours`.
async fn busy_hours_until(pool: &SqlitePool) -> Result<i64, sqlx::Error> {
    let mark: Option<(String,)> =
        sqlx::query_as("SELECT value FROM gpudash_meta WHERE key = 'busy_hours_until'").fetch_optional(pool).await?;
    Ok(mark.and_then(|(m,)| m.parse().ok()).unwrap_or(0))
}

/// Sums the GPUs' busy samples (and rollups, for hours retention rolled up before they were
/// summed) of every whole hour from the watermark to the hour `now` is in into `busy_hours`,
/// and moves the watermark there, in one transaction. Retention runs it before rolling samples
/// up; returns the hours written.
pub async fn sum_busy_hours(pool: &SqlitePool, now: i64) -> Result<u64, sqlx::Error> {
    let until = now - now.rem_euclid(3600);
    let mark = busy_hours_until(pool).await?;
    if until <= mark {
        return Ok(0);
    }
    let mut tx = pool.begin().await?;
    let busy = "series IN (SELECT id FROM series WHERE metric = 'gpu_busy')";
    let sql = format!(
        "INSERT INTO busy_hours (series, hour, sum, n)
         SELECT series, h, SUM(x), SUM(k) FROM (
           SELECT series, ts / 3600 * 3600 AS h, value AS x, 1 AS k FROM samples WHERE {busy} AND ts >= ?1 AND ts < ?2
           UNION ALL
           SELECT series, bucket / 3600 * 3600, avg * n, n FROM rollups WHERE {busy} AND bucket >= ?1 AND bucket < ?2)
         WHERE true GROUP BY series, h
         ON CONFLICT (series, hour) DO UPDATE SET sum = busy_hours.sum + excluded.sum, n = busy_hours.n + excluded.n"
    );
    let written = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(mark).bind(until).execute(&mut *tx).await?.rows_affected();
    sqlx::query("UPDATE gpudash_meta SET value = ? WHERE key = 'busy_hours_until'")
        .bind(until.to_string())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(written)
}

/// Each GPU's busy steps over `[from, end)` for the (node, resource) pairs in `wanted` (sorted).
/// Short ranges read every sample (exact to the second); longer ones average whole hours (or
/// several, a thousandth of the range), read from `busy_hours` before its watermark and from
/// the samples and rollups after it — all GPUs in one query, as JSON.
async fn busy_steps(
    pool: &SqlitePool,
    wanted: &[(String, String)],
    gaps: &[(i64, i64, String)],
    from: i64,
    end: i64,
    max_step: i64,
) -> Result<BTreeMap<(String, String), Vec<Steps>>, sqlx::Error> {
    let all: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT id, node, resource FROM series WHERE metric = 'gpu_busy'").fetch_all(pool).await?;
    let mut busy: BTreeMap<(String, String), Vec<Steps>> = BTreeMap::new();
    let key_of = |node: &str, series: &str| {
        let (resource, _) = series.split_once('|')?;
        let key = (node.to_string(), resource.to_string());
        wanted.binary_search(&key).is_ok().then_some(key)
    };
    if end - from <= EXACT_UP_TO {
        for (_, node, series) in &all {
            if let Some(key) = key_of(node, series) {
                let pts = query::points(pool, node, "gpu_busy", series, from, end).await?;
                busy.entry(key).or_default().push(steps(&pts, gaps, max_step, end));
            }
        }
        return Ok(busy);
    }
    let width = (((end - from) / 1000).max(BUCKET_FLOOR) + 3599) / 3600 * 3600;
    let first_hour = from - from.rem_euclid(3600);
    let mark = busy_hours_until(pool).await?;
    let sql = "WITH u(series, b, x, k) AS (
           SELECT series, hour / ?1 * ?1, sum, n FROM busy_hours WHERE hour >= ?2 AND hour < MIN(?3, ?4)
           UNION ALL
           SELECT series, ts / ?1 * ?1, value, 1 FROM samples
             WHERE series IN (SELECT id FROM series WHERE metric = 'gpu_busy') AND ts >= MAX(?2, ?4) AND ts < ?3
           UNION ALL
           SELECT series, bucket / ?1 * ?1, avg * n, n FROM rollups
             WHERE series IN (SELECT id FROM series WHERE metric = 'gpu_busy') AND bucket >= MAX(?2, ?4) AND bucket < ?3),
         a(series, b, v) AS (SELECT series, b, SUM(x) / SUM(k) FROM u GROUP BY series, b)
         SELECT series, json_group_array(json_array(b, v)) FROM a GROUP BY series";
    let rows: Vec<(i64, String)> =
        sqlx::query_as(sql).bind(width).bind(first_hour).bind(end).bind(mark).fetch_all(pool).await?;
    let mut by_id: BTreeMap<i64, Vec<(i64, f64)>> = BTreeMap::new();
    for (id, text) in rows {
        by_id.insert(id, decode(&text)?);
    }
    for (id, node, series) in &all {
        let Some(key) = key_of(node, series) else { continue };
        let mut pts: Vec<Point> = by_id
            .remove(id)
            .unwrap_or_default()
            .into_iter()
            .map(|(ts, value)| Point { ts, value, min: None, max: None })
            .collect();
        pts.sort_by_key(|p| p.ts);
        busy.entry(key).or_default().push(steps(&pts, gaps, width, end));
    }
    Ok(busy)
}

/// Why a report could not be given.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Reading history failed.
    #[error("history query: {0}")]
    Db(#[from] sqlx::Error),
    /// The computation stopped at a limit.
    #[error("the report stopped: {0:?}")]
    Stopped(Stopped),
    /// Every report slot stayed taken until the deadline.
    #[error("every report slot was taken until the deadline")]
    Busy,
    /// The computation's task failed.
    #[error("the report's computation failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Reads the rows for `[from, to)` and computes the report ([`compute_within`]) before
/// `deadline`, with at most [`MAX_ROWS`] rows. `max_step` is how long a busy sample holds
/// without a newer one (the recorder's heartbeat plus slack).
#[allow(clippy::too_many_arguments)]
pub async fn report(
    pool: &SqlitePool,
    from: i64,
    to: i64,
    now: i64,
    by: By,
    tz_minutes: i32,
    max_step: i64,
    deadline: std::time::Instant,
) -> Result<Report, ReportError> {
    // Two reports at a time, from their first read to their last row, and a report by pod over
    // more than a month alone (its rows are most of what a reader can make gpudash hold: ~30
    // MiB for 90 days of a 100-node site; two at once took the hostile probe over the
    // manifest's 256 MiB): the rest wait their turn until the deadline. The slot is taken before anything is read — reading a long
    // report's rows is most of its memory (the probe's 40 readers of 90-day reports each read
    // theirs and then queued for a slot: RSS 203 -> 883 MiB) — and held by the computation
    // itself, which stops at the request's deadline, so a client that gives up frees it within
    // that time. The computation runs on the blocking pool: on an async worker it stalled
    // `/healthz` and every stream for as long.
    static SLOTS: std::sync::OnceLock<std::sync::Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    let slots = SLOTS.get_or_init(|| std::sync::Arc::new(tokio::sync::Semaphore::new(2))).clone();
    let slot = tokio::time::timeout_at(deadline.into(), slots.acquire_many_owned(slots_for(by, from, to)))
        .await
        .map_err(|_| ReportError::Busy)?
        .map_err(|_| ReportError::Busy)?;
    let end = to.min(now.max(from));
    let gaps = clip_gaps(&query::gaps(pool, from, end).await?, from, end);
    let intervals = intervals(pool, from, end).await?;
    let mut wanted: Vec<(String, String)> = intervals
        .iter()
        .filter(|i| i.state == "running")
        .filter_map(|i| Some((i.node.clone()?, i.gpu_resource.clone()?)))
        .collect();
    wanted.sort();
    wanted.dedup();
    let busy = busy_steps(pool, &wanted, &gaps, from, end, max_step).await?;
    if std::time::Instant::now() >= deadline {
        return Err(ReportError::Stopped(Stopped::TooLong));
    }
    let limits = Limits { deadline: Some(deadline), max_rows: MAX_ROWS };
    let r = tokio::task::spawn_blocking(move || {
        let r = compute_within(&intervals, &gaps, &busy, (from, to, now), by, tz_minutes, limits);
        drop(slot);
        r
    })
    .await?;
    r.map_err(ReportError::Stopped)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A deadline no test reaches.
    pub(crate) fn far() -> std::time::Instant {
        std::time::Instant::now() + std::time::Duration::from_secs(3600)
    }

    /// A report by pod over more than a month takes both slots (it runs alone); shorter ones
    /// and other groupings take one, whatever their range.
    #[test]
    fn a_long_report_by_pod_runs_alone() {
        let day = 86_400;
        assert_eq!(slots_for(By::Pod, 0, 90 * day), 2);
        assert_eq!(slots_for(By::Pod, 0, 31 * day), 1, "a month of 31 days");
        assert_eq!(slots_for(By::Namespace, 0, 367 * day), 1);
        assert_eq!(slots_for(By::Workload, 0, 367 * day), 1);
        assert_eq!(slots_for(By::Pod, i64::MIN, i64::MAX), 2, "saturating, never wrapping");
    }

    /// A report stops at its deadline and at its row cap, with which, instead of running on
    /// for a client that has gone (a year by pod once held a worker 150 s after its client left).
    #[test]
    fn a_report_stops_at_its_deadline_and_at_its_row_cap() {
        let iv = |i: usize| Interval {
            namespace: format!("ns{}", i % 3),
            name: format!("p{i}"),
            state: "running".into(),
            node: Some("n".into()),
            gpu_resource: Some("nvidia.com/gpu".into()),
            gpu_share: Some(1.0),
            start: 100,
            end: Some(200),
            ..Interval::default()
        };
        let intervals: Vec<Interval> = (0..3 * CHECK_EVERY).map(iv).collect();
        let busy = BTreeMap::new();
        let run = |limits| compute_within(&intervals, &[], &busy, (0, 1000, 1000), By::Pod, 0, limits);
        let past = Some(std::time::Instant::now() - std::time::Duration::from_millis(1));
        assert_eq!(run(Limits { deadline: past, max_rows: usize::MAX }).err(), Some(Stopped::TooLong));
        assert_eq!(run(Limits { deadline: None, max_rows: 10 }).err(), Some(Stopped::TooManyRows(10)));
        let by_ns = compute_within(
            &intervals,
            &[],
            &busy,
            (0, 1000, 1000),
            By::Namespace,
            0,
            Limits { deadline: Some(far()), max_rows: 3 },
        );
        assert_eq!(by_ns.map(|r| r.rows.len()).ok(), Some(3), "three rows are within a cap of three");
        let all = run(Limits { deadline: Some(far()), max_rows: MAX_ROWS }).unwrap();
        assert_eq!(all.rows.len(), 3 * CHECK_EVERY);
    }

    /// What [`report`] reads from the database (the intervals as JSON, the busy samples) gives
    /// what the pure [`compute`] gives on the same rows: 300
    /// pseudo-random intervals (shares, unknown shares, unified boards, waits, open ends) over
    /// four nodes, two of them measured, with two gaps, in every grouping and at two offsets.
    #[tokio::test]
    async fn sql_and_rust_paths_agree_with_the_pure_computation() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap();
        let (from, to, now) = (1_000_000_i64, 1_000_000 + 3 * 86_400, 1_000_000 + 2 * 86_400);
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut intervals = Vec::new();
        for i in 0..300 {
            let node = format!("n{}", rnd(4));
            let pending = rnd(5) == 0;
            let start = from - 20_000 + rnd(2 * 86_400 + 20_000) as i64;
            let end = (rnd(6) != 0).then(|| start + 1 + rnd(40_000) as i64);
            let iv = Interval {
                namespace: format!("ns{}", rnd(3)),
                name: format!("p{i}"),
                state: if pending { "pending" } else { "running" }.into(),
                node: (!pending).then(|| node.clone()),
                gpu_resource: (rnd(4) != 0).then(|| "nvidia.com/gpu".to_string()),
                gpu_share: match rnd(4) {
                    0 => None,
                    k => Some(k as f64 / 4.0),
                },
                workload: (rnd(3) != 0).then(|| format!("Deployment/w{}", rnd(4))),
                mem_request_bytes: (rnd(3) != 0).then(|| (1 + rnd(8) as i64) << 28),
                unified: Some(i64::from(node == "n0" || node == "n1")),
                start,
                end,
            };
            sqlx::query(
                "INSERT INTO pod_intervals (namespace, name, state, node, gpu_resource, gpu_count, start, end, \
                gpu_share, workload, mem_request_bytes, unified) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)",
            )
            .bind(&iv.namespace)
            .bind(&iv.name)
            .bind(&iv.state)
            .bind(&iv.node)
            .bind(&iv.gpu_resource)
            .bind(iv.start)
            .bind(iv.end)
            .bind(iv.gpu_share)
            .bind(&iv.workload)
            .bind(iv.mem_request_bytes)
            .bind(iv.unified)
            .execute(&pool)
            .await
            .unwrap();
            intervals.push(iv);
        }
        for (s, e) in [(from + 30_000, from + 33_600), (from + 90_000, from + 90_060)] {
            sqlx::query("INSERT INTO gaps (start, end, reason) VALUES (?, ?, 'gpudash not running')")
                .bind(s)
                .bind(e)
                .execute(&pool)
                .await
                .unwrap();
        }
        // n0 and n2 measured, two GPUs on n2.
        let mut busy: BTreeMap<(String, String), Vec<Steps>> = BTreeMap::new();
        let gaps = query::gaps(&pool, from, now).await.unwrap();
        for (id, node, dev) in [(1, "n0", "gpu0"), (2, "n2", "gpu0"), (3, "n2", "gpu1")] {
            sqlx::query("INSERT INTO series (id, node, metric, resource) VALUES (?, ?, 'gpu_busy', ?)")
                .bind(id)
                .bind(node)
                .bind(format!("nvidia.com/gpu|{dev}"))
                .execute(&pool)
                .await
                .unwrap();
            let mut pts = Vec::new();
            let mut t = from - 1000;
            while t < now {
                let v = rnd(101) as f64;
                sqlx::query("INSERT INTO samples (series, ts, value) VALUES (?, ?, ?)")
                    .bind(id)
                    .bind(t)
                    .bind(v)
                    .execute(&pool)
                    .await
                    .unwrap();
                pts.push(Point { ts: t, value: v, min: None, max: None });
                t += 60 + rnd(900) as i64;
            }
            let all =
                query::points(&pool, node, "gpu_busy", &format!("nvidia.com/gpu|{dev}"), from, now).await.unwrap();
            busy.entry((node.to_string(), "nvidia.com/gpu".to_string()))
                .or_default()
                .push(steps(&all, &gaps, 600, now));
        }
        for by in [By::Namespace, By::Workload, By::Pod] {
            for tz in [0, 540] {
                let sql = report(&pool, from, to, now, by, tz, 600, far()).await.unwrap();
                let pure = compute(&intervals, &gaps, &busy, from, to, now, by, tz);
                let t = &pure.totals;
                assert!(pure.rows.len() > 2 && t.used_gpu_seconds.is_some_and(|u| u > 0.0), "{t:?}");
                assert!(t.unknown_share_seconds > 0.0 && t.waited_seconds > 0.0 && t.memory_gib_seconds.is_some());
                let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
                let opt = |a: Option<f64>, b: Option<f64>| match (a, b) {
                    (Some(a), Some(b)) => near(a, b),
                    (a, b) => a == b,
                };
                assert_eq!(sql.rows.len(), pure.rows.len(), "{by:?} {tz}");
                for (x, y) in sql.rows.iter().zip(&pure.rows) {
                    let (f, g) = (&x.figures, &y.figures);
                    assert_eq!((&x.namespace, &x.workload, &x.pod), (&y.namespace, &y.workload, &y.pod), "{by:?} {tz}");
                    assert!(
                        near(f.held_gpu_seconds, g.held_gpu_seconds)
                            && near(f.measured_gpu_seconds, g.measured_gpu_seconds)
                            && opt(f.used_gpu_seconds, g.used_gpu_seconds)
                            && opt(f.idle_held_gpu_seconds, g.idle_held_gpu_seconds)
                            && near(f.unknown_share_seconds, g.unknown_share_seconds)
                            && opt(f.memory_gib_seconds, g.memory_gib_seconds)
                            && near(f.waited_seconds, g.waited_seconds),
                        "{by:?} {tz}: {x:?} != {y:?}"
                    );
                }
                assert_eq!(sql.days.len(), pure.days.len(), "{by:?} {tz}");
                for (x, y) in sql.days.iter().zip(&pure.days) {
                    assert!(
                        x.start == y.start
                            && x.namespace == y.namespace
                            && near(x.held_gpu_seconds, y.held_gpu_seconds),
                        "{x:?} != {y:?}"
                    );
                }
                assert_eq!(sql.gap_seconds, pure.gap_seconds);
            }
        }
    }

    /// A month-long report reads hourly sums: the same figures before the hours are summed
    /// (from the samples), after (from `busy_hours`), and after retention rolled the older
    /// samples up, and from the rollups of a database summed after they were made — and the
    /// right ones: a GPU 40 % busy for five days
    /// and 2 % for five more, held at half a GPU, used 0.5 × (5 d × 40 % + 5 d × 2 %), idle-held
    /// the second five days.
    #[tokio::test]
    async fn long_reports_read_hourly_sums_and_agree_with_the_samples() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap();
        let day = 86_400_i64;
        let from = 1_700_000_000 - 1_700_000_000 % 3600;
        let now = from + 10 * day;
        let exec = |sql: &'static str| {
            let pool = pool.clone();
            async move {
                sqlx::query(sql).bind(from).bind(now).execute(&pool).await.unwrap();
            }
        };
        exec("INSERT INTO series (id, node, metric, resource) SELECT 1, 'n0', 'gpu_busy', 'nvidia.com/gpu|gpu0' WHERE ?1 < ?2")
            .await;
        exec(
            "WITH RECURSIVE t(ts) AS (SELECT ?1 UNION ALL SELECT ts + 60 FROM t WHERE ts + 60 < ?2)
             INSERT INTO samples (series, ts, value) SELECT 1, ts, CASE WHEN ts < (?1 + ?2) / 2 THEN 40 ELSE 2 END FROM t",
        )
        .await;
        exec(
            "INSERT INTO pod_intervals (namespace, name, state, node, gpu_resource, gpu_count, start, end, gpu_share, workload) \
             VALUES ('vision', 'detector-0', 'running', 'n0', 'nvidia.com/gpu', 1, ?1, NULL, 0.5, 'Deployment/detector'), \
                    ('vision', 'other-0', 'running', 'n9', 'nvidia.com/gpu', 1, ?1, ?2, 1.0, NULL)",
        )
        .await;
        let run = || report(&pool, from, now, now, By::Pod, 540, 600, far());
        let before = run().await.unwrap();
        assert_eq!(busy_hours_until(&pool).await.unwrap(), 0);
        assert_eq!(sum_busy_hours(&pool, now + 59).await.unwrap(), 240);
        let summed = run().await.unwrap();
        let pruned = crate::history::retention::prune(&pool, &crate::history::Config::default(), now).await.unwrap();
        assert!(pruned.rolled_up > 1000, "{pruned:?}");
        let rolled = run().await.unwrap();
        // A database whose older samples were rolled up before any hour was summed (one written
        // before busy_hours existed): read from the rollups, then summed from them.
        exec("DELETE FROM busy_hours WHERE ?1 < ?2").await;
        exec("UPDATE gpudash_meta SET value = '0' WHERE key = 'busy_hours_until' AND ?1 < ?2").await;
        let from_rollups = run().await.unwrap();
        assert_eq!(sum_busy_hours(&pool, now).await.unwrap(), 240);
        let resummed = run().await.unwrap();
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
        let find = |r: &Report, pod: &str| {
            r.rows.iter().find(|x| x.pod.as_deref() == Some(pod)).map(|x| x.figures.clone()).unwrap_or_default()
        };
        let d = (5 * day) as f64;
        for r in [&before, &summed, &rolled, &from_rollups, &resummed] {
            let f = find(r, "detector-0");
            assert!(near(f.held_gpu_seconds, d), "{f:?}");
            assert!(near(f.measured_gpu_seconds, d), "{f:?}");
            assert!(f.used_gpu_seconds.is_some_and(|u| near(u, 0.5 * (d * 0.40 + d * 0.02))), "{f:?}");
            assert!(f.idle_held_gpu_seconds.is_some_and(|i| near(i, 0.5 * d)), "{f:?}");
            let o = find(r, "other-0");
            assert!(near(o.held_gpu_seconds, 2.0 * d) && o.used_gpu_seconds.is_none(), "unmeasured: {o:?}");
            assert_eq!(r.days.len(), 11, "ten days at +09:00 span eleven: {:?}", r.days);
        }
    }
}
