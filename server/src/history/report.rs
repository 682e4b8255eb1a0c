//! GPU-hours reports from history: per namespace, workload or pod, the GPU-hours each held (in
//! physical GPUs: a time-slicing replica is its fraction of a GPU), how much of that the agent
//! measured and how much was used (held time weighted by the busy % of the GPU it sat on),
//! held while the GPU idled (< 5 % busy), memory-hours on unified-memory boards, and hours
//! waiting for a GPU. Gaps in history are left out of every figure and reported.
//!
//! [`compute`] is pure (rows in, report out) and tested to the second; [`report`] reads the rows.

use std::collections::BTreeMap;

pub use app::model::report::{hours, By, Day, Figures, Report, Row};
use sqlx::SqlitePool;

use super::query::{self, Point};

/// Reports over at most this many seconds read every busy sample (exact to the second).
pub const EXACT_UP_TO: i64 = 2 * 86_400;
/// Narrowest busy bucket of a longer report: the rollup width.
const BUCKET_FLOOR: i64 = 600;

/// Below this busy %, held time counts as idle-held.
pub const IDLE_BELOW_PERCENT: f64 = 5.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// One row of `pod_intervals`.
#[derive(Debug, Clone, Default, sqlx::FromRow)]
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
    let mut acc = Acc::default();
    let gaps = clip_gaps(gaps, from, to.min(now.max(from)));
    acc.add_intervals(intervals, &gaps, busy, from, to.min(now.max(from)), by, tz_minutes);
    acc.finish(gaps, from, to, by, tz_minutes)
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
        from: i64,
        end: i64,
        by: By,
        tz_minutes: i32,
    ) {
        let cut: Vec<(i64, i64)> = gaps.iter().map(|(s, e, _)| (*s, *e)).collect();
        let tz = i64::from(tz_minutes) * 60;
        let (rows, days) = (&mut self.rows, &mut self.days);
        for iv in intervals {
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

/// Reads the rows for `[from, to)` and computes the report. `max_step` is how long a busy
/// sample holds without a newer one (the recorder's heartbeat plus slack, or a rollup's width).
pub async fn report(
    pool: &SqlitePool,
    from: i64,
    to: i64,
    now: i64,
    by: By,
    tz_minutes: i32,
    max_step: i64,
) -> Result<Report, sqlx::Error> {
    let end = to.min(now.max(from));
    let gaps = clip_gaps(&query::gaps(pool, from, end).await?, from, end);
    // Intervals on a GPU an agent measured are read one by one (their busy % weighs them);
    // every other interval is added up by SQLite: reading a month of a 1,000-node site's
    // 120,000 intervals into Rust alone took longer than the whole report does now
    // (docs/benchmarks.md: still over its one-second target).
    // (node, resource) pairs with a busy series, as one set SQLite builds once per query.
    let measured = "COALESCE((p.node || '|' || p.gpu_resource) IN (SELECT node || '|' || substr(resource, 1, instr(resource, '|') - 1) \
                    FROM series WHERE metric = 'gpu_busy' AND instr(resource, '|') > 0), 0)";
    let overlap = "p.start < ?2 AND (p.end IS NULL OR p.end > ?1) AND (p.gpu_resource IS NOT NULL OR p.unified = 1)";
    let sql = format!(
        "SELECT namespace, name, state, node, gpu_resource, gpu_share, workload, mem_request_bytes, unified, start, end \
         FROM pod_intervals p WHERE {overlap} AND p.state = 'running' AND {measured}"
    );
    let intervals: Vec<Interval> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(from).bind(end).fetch_all(pool).await?;
    let mut wanted: Vec<(String, String)> =
        intervals.iter().filter_map(|i| Some((i.node.clone()?, i.gpu_resource.clone()?))).collect();
    wanted.sort();
    wanted.dedup();
    // Every GPU's busy series at once (`resource|device`), then each one's points.
    let all: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT id, node, resource FROM series WHERE metric = 'gpu_busy'").fetch_all(pool).await?;
    let mut busy: BTreeMap<(String, String), Vec<Steps>> = BTreeMap::new();
    // Short ranges read every sample (exact to the second); long ones read averages over
    // buckets of a thousandth of the range, at least the rollup width, as the charts do.
    let width = ((end - from) / 1000).max(BUCKET_FLOOR);
    let exact = end - from <= EXACT_UP_TO;
    for (id, node, series) in all {
        let Some((resource, _)) = series.split_once('|') else { continue };
        let key = (node, resource.to_string());
        if wanted.binary_search(&key).is_err() {
            continue;
        }
        let devices = busy.entry(key.clone()).or_default();
        if exact {
            let pts = query::points(pool, &key.0, "gpu_busy", &series, from, end).await?;
            devices.push(steps(&pts, &gaps, max_step, end));
        } else {
            let rows: Vec<(i64, f64)> = sqlx::query_as(
                "SELECT b, AVG(v) FROM (SELECT ts / ?2 * ?2 AS b, value AS v FROM samples WHERE series = ?1 AND ts >= ?3 AND ts < ?4 \
                 UNION ALL SELECT bucket / ?2 * ?2, avg FROM rollups WHERE series = ?1 AND bucket >= ?3 AND bucket < ?4) GROUP BY b ORDER BY b",
            )
            .bind(id)
            .bind(width)
            .bind(from)
            .bind(end)
            .fetch_all(pool)
            .await?;
            let pts: Vec<Point> =
                rows.into_iter().map(|(ts, value)| Point { ts, value, min: None, max: None }).collect();
            devices.push(steps(&pts, &gaps, width, end));
        }
    }
    let mut acc = Acc::default();
    acc.add_intervals(&intervals, &gaps, &busy, from, end, by, tz_minutes);

    // The rest, in SQL: each interval clipped to the range, less its overlap with the gaps
    // (which do not overlap one another: the recorder opens one where the last one closed).
    let key = match by {
        By::Namespace => "namespace, NULL, NULL",
        By::Workload => "namespace, COALESCE(workload, 'Pod/' || name), NULL",
        By::Pod => "namespace, workload, name",
    };
    let clipped = format!(
        "g(gs, ge) AS MATERIALIZED (SELECT MAX(start, ?1), MIN(COALESCE(end, ?2), ?2) FROM gaps
                WHERE start < ?2 AND (end IS NULL OR end > ?1)),
         iv AS MATERIALIZED (SELECT p.namespace, p.name, p.state, p.gpu_resource, p.gpu_share, p.workload,
                p.mem_request_bytes, p.unified, MAX(p.start, ?1) AS a, MIN(COALESCE(p.end, ?2), ?2) AS b
                FROM pod_intervals p WHERE {overlap} AND NOT (p.state = 'running' AND {measured}))"
    );
    let cut = "(SELECT COALESCE(SUM(MAX(0, MIN(ge, @hi) - MAX(gs, @lo))), 0) FROM g)";
    let secs = format!("(b - a - {})", cut.replace("@hi", "b").replace("@lo", "a"));
    let sql = format!(
        "WITH {clipped}, s AS (SELECT *, {secs} AS secs FROM iv WHERE b > a)
         SELECT {key},
           TOTAL(CASE WHEN state = 'running' AND gpu_resource IS NOT NULL AND gpu_share IS NOT NULL THEN gpu_share * secs END),
           TOTAL(CASE WHEN state = 'running' AND gpu_resource IS NOT NULL AND gpu_share IS NULL THEN secs END),
           SUM(CASE WHEN state = 'running' AND unified = 1 AND mem_request_bytes IS NOT NULL
                    THEN mem_request_bytes / 1073741824.0 * secs END),
           TOTAL(CASE WHEN state = 'pending' AND gpu_resource IS NOT NULL THEN secs END),
           SUM(CASE WHEN (state = 'running' AND (gpu_resource IS NOT NULL OR (unified = 1 AND mem_request_bytes IS NOT NULL)))
                    OR (state = 'pending' AND gpu_resource IS NOT NULL) THEN 1 ELSE 0 END)
         FROM s WHERE secs > 0 GROUP BY 1, 2, 3"
    );
    type Agg = (String, Option<String>, Option<String>, f64, f64, Option<f64>, f64, i64);
    let agg: Vec<Agg> = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(from).bind(end).fetch_all(pool).await?;
    for (ns, workload, pod, held, unknown, memory, waited, counted) in agg {
        if counted == 0 {
            continue;
        }
        let f = Figures {
            held_gpu_seconds: held,
            unknown_share_seconds: unknown,
            memory_gib_seconds: memory,
            waited_seconds: waited,
            ..Figures::default()
        };
        acc.rows.entry((ns, workload, pod)).or_default().add(&f);
    }
    // GPU-seconds per namespace per day (days at the offset).
    let tz = i64::from(tz_minutes) * 60;
    let first_day = (from + tz).div_euclid(86_400) * 86_400 - tz;
    let day_cut = cut.replace("@hi", "MIN(b, day + 86400)").replace("@lo", "MAX(a, day)");
    let sql = format!(
        "WITH RECURSIVE d(day) AS (SELECT ?3 UNION ALL SELECT day + 86400 FROM d WHERE day + 86400 < ?2), {clipped}
         SELECT day, namespace, TOTAL(gpu_share * (MIN(b, day + 86400) - MAX(a, day) - {day_cut}))
         FROM d JOIN iv ON a < day + 86400 AND b > day
         WHERE state = 'running' AND gpu_resource IS NOT NULL AND gpu_share IS NOT NULL AND b > a
         GROUP BY day, namespace"
    );
    let per_day: Vec<(i64, String, f64)> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(from).bind(end).bind(first_day).fetch_all(pool).await?;
    for (day, ns, held) in per_day.into_iter().filter(|(_, _, h)| *h > 0.0) {
        *acc.days.entry((day, ns)).or_default() += held;
    }
    Ok(acc.finish(gaps, from, to, by, tz_minutes))
}

/// The CSV's column titles in `lang` (the page's own column titles).
pub fn csv_heads(lang: app::i18n::Lang) -> [&'static str; 9] {
    let s = lang.s();
    [
        s.col_namespace,
        s.col_workload,
        s.col_pod,
        s.col_held,
        s.col_measured,
        s.col_gpu_used,
        s.col_idle,
        s.col_memory_hours,
        s.col_waited,
    ]
}

/// The report as CSV (UTF-8 with a byte-order mark, so spreadsheet programs read Japanese
/// names right), hours to two decimals; `heads` are the column titles in the page's language.
pub fn csv(r: &Report, heads: &[&str; 9]) -> String {
    let mut out = String::from("\u{feff}");
    let cell = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    out.push_str(&heads.iter().map(|h| cell(h)).collect::<Vec<_>>().join(","));
    out.push_str("\r\n");
    for row in &r.rows {
        let f = &row.figures;
        let cells = [
            cell(&row.namespace),
            cell(row.workload.as_deref().unwrap_or("")),
            cell(row.pod.as_deref().unwrap_or("")),
            hours(Some(f.held_gpu_seconds)),
            hours(Some(f.measured_gpu_seconds)),
            hours(f.used_gpu_seconds),
            hours(f.idle_held_gpu_seconds),
            hours(f.memory_gib_seconds),
            hours(Some(f.waited_seconds)),
        ];
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SQL that adds up the intervals on unmeasured GPUs and the Rust that weighs the
    /// measured ones give, together, what the pure [`compute`] gives on the same rows: 300
    /// pseudo-random intervals (shares, unknown shares, unified boards, waits, open ends) over
    /// four nodes, two of them measured, with two gaps, in every grouping and at two offsets.
    #[tokio::test]
    async fn sql_and_rust_paths_agree_with_the_pure_computation() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let pool = crate::db::open(&dir.path().join("h.db")).await.unwrap_or_else(|e| panic!("{e}"));
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
            .unwrap_or_else(|e| panic!("{e}"));
            intervals.push(iv);
        }
        for (s, e) in [(from + 30_000, from + 33_600), (from + 90_000, from + 90_060)] {
            sqlx::query("INSERT INTO gaps (start, end, reason) VALUES (?, ?, 'gpudash not running')")
                .bind(s)
                .bind(e)
                .execute(&pool)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        // n0 and n2 measured, two GPUs on n2.
        let mut busy: BTreeMap<(String, String), Vec<Steps>> = BTreeMap::new();
        let gaps = query::gaps(&pool, from, now).await.unwrap_or_else(|e| panic!("{e}"));
        for (id, node, dev) in [(1, "n0", "gpu0"), (2, "n2", "gpu0"), (3, "n2", "gpu1")] {
            sqlx::query("INSERT INTO series (id, node, metric, resource) VALUES (?, ?, 'gpu_busy', ?)")
                .bind(id)
                .bind(node)
                .bind(format!("nvidia.com/gpu|{dev}"))
                .execute(&pool)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
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
                    .unwrap_or_else(|e| panic!("{e}"));
                pts.push(Point { ts: t, value: v, min: None, max: None });
                t += 60 + rnd(900) as i64;
            }
            let all = query::points(&pool, node, "gpu_busy", &format!("nvidia.com/gpu|{dev}"), from, now)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            busy.entry((node.to_string(), "nvidia.com/gpu".to_string()))
                .or_default()
                .push(steps(&all, &gaps, 600, now));
        }
        for by in [By::Namespace, By::Workload, By::Pod] {
            for tz in [0, 540] {
                let sql = report(&pool, from, to, now, by, tz, 600).await.unwrap_or_else(|e| panic!("{e}"));
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
}
