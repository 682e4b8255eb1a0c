//! GPU-hours reports from history: per namespace, workload or pod, the GPU-hours each held (in
//! physical GPUs: a time-slicing replica is its fraction of a GPU), how much of that the agent
//! measured and how much was used (held time weighted by the busy % of the GPU it sat on),
//! held while the GPU idled (< 5 % busy), memory-hours on unified-memory boards, and hours
//! waiting for a GPU. Gaps in history are left out of every figure and reported.
//!
//! [`compute`] is pure (rows in, report out) and tested to the second; [`report`] reads the rows.

use std::collections::BTreeMap;

pub use app::model::report::{By, Day, Figures, Report, Row};
use sqlx::SqlitePool;

use super::query::{self, Point};

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
    let end = to.min(now.max(from));
    let gaps: Vec<(i64, i64, String)> =
        gaps.iter().map(|(s, e, r)| ((*s).max(from), (*e).min(end), r.clone())).filter(|(s, e, _)| e > s).collect();
    let cut: Vec<(i64, i64)> = gaps.iter().map(|(s, e, _)| (*s, *e)).collect();
    let tz = i64::from(tz_minutes) * 60;
    let mut rows: BTreeMap<(String, Option<String>, Option<String>), Figures> = BTreeMap::new();
    let mut days: BTreeMap<(i64, String), f64> = BTreeMap::new();
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
        let mut f = Figures::default();
        match (iv.state.as_str(), &iv.gpu_resource) {
            ("pending", Some(_)) => f.waited_seconds = secs as f64,
            ("running", Some(r)) => {
                match iv.gpu_share {
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
                }
                if iv.unified == Some(1) {
                    if let Some(m) = iv.mem_request_bytes {
                        f.memory_gib_seconds = Some(m as f64 / GIB * secs as f64);
                    }
                }
            }
            ("running", None) => {
                // Memory-hours on a unified-memory board count every pod: its heap is the GPU's.
                if let (Some(1), Some(m)) = (iv.unified, iv.mem_request_bytes) {
                    f.memory_gib_seconds = Some(m as f64 / GIB * secs as f64);
                } else {
                    continue;
                }
            }
            _ => continue,
        }
        let key = match by {
            By::Namespace => (iv.namespace.clone(), None, None),
            By::Workload => {
                (iv.namespace.clone(), Some(iv.workload.clone().unwrap_or_else(|| format!("Pod/{}", iv.name))), None)
            }
            By::Pod => (iv.namespace.clone(), iv.workload.clone(), Some(iv.name.clone())),
        };
        rows.entry(key).or_default().add(&f);
    }
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
    let gap_seconds = cut.iter().map(|(s, e)| e - s).sum();
    let days = days
        .into_iter()
        .map(|((start, namespace), held_gpu_seconds)| Day { start, namespace, held_gpu_seconds })
        .collect();
    Report { from, to, by, tz_minutes, rows, totals, gaps, gap_seconds, days }
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
    let end = to.min(now);
    let intervals: Vec<Interval> = sqlx::query_as(
        "SELECT namespace, name, state, node, gpu_resource, gpu_share, workload, mem_request_bytes, unified, start, end \
         FROM pod_intervals WHERE start < ? AND (end IS NULL OR end > ?) AND (gpu_resource IS NOT NULL OR unified = 1)",
    )
    .bind(to)
    .bind(from)
    .fetch_all(pool)
    .await?;
    let gaps: Vec<(i64, i64, String)> = query::gaps(pool, from, end).await?;
    let mut wanted: Vec<(String, String)> = intervals
        .iter()
        .filter(|i| i.state == "running")
        .filter_map(|i| Some((i.node.clone()?, i.gpu_resource.clone()?)))
        .collect();
    wanted.sort();
    wanted.dedup();
    let mut busy = BTreeMap::new();
    for (node, resource) in wanted {
        let mut devices = Vec::new();
        for series in query::resources_like(pool, &node, "gpu_busy", &format!("{resource}|")).await? {
            let pts = query::points(pool, &node, "gpu_busy", &series, from, end).await?;
            devices.push(steps(&pts, &gaps, max_step, end));
        }
        busy.insert((node, resource), devices);
    }
    Ok(compute(&intervals, &gaps, &busy, from, to, now, by, tz_minutes))
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
    // Hours to two decimals, halves away from zero (as a spreadsheet rounds; `{:.2}` alone
    // rounds 0.125 to even).
    let h = |s: f64| format!("{:.2}", (s / 36.0).round() / 100.0);
    let o = |s: Option<f64>| s.map(h).unwrap_or_default();
    for row in &r.rows {
        let f = &row.figures;
        let cells = [
            cell(&row.namespace),
            cell(row.workload.as_deref().unwrap_or("")),
            cell(row.pod.as_deref().unwrap_or("")),
            h(f.held_gpu_seconds),
            h(f.measured_gpu_seconds),
            o(f.used_gpu_seconds),
            o(f.idle_held_gpu_seconds),
            o(f.memory_gib_seconds),
            h(f.waited_seconds),
        ];
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}
