//! A recorded time series as both services store, serve and draw it: the sampling settings,
//! the window of a named range (`app::model::Range`), points and the segments a chart draws.

use std::time::Duration;

use serde::Serialize;

/// History settings.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Sampling resolution: values are looked at once per this interval.
    pub resolution: Duration,
    /// A sample is written at least this often even when nothing changed. Only a safety net:
    /// a value holds until its next sample, its series' stop or a gap, which are all recorded.
    pub heartbeat: Duration,
    /// Full resolution is kept this long, then rolled up.
    pub full_window: Duration,
    /// Rollups and intervals are kept this long.
    pub keep: Duration,
    /// Rollup bucket width.
    pub rollup_width: Duration,
    /// Hard cap on the database's used size.
    pub max_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            resolution: Duration::from_secs(10),
            heartbeat: Duration::from_secs(3600),
            full_window: Duration::from_secs(7 * 86_400),
            keep: Duration::from_secs(90 * 86_400),
            rollup_width: Duration::from_secs(600),
            max_bytes: 512 << 20,
        }
    }
}

/// The window `range` ends now: (from, to) in Unix seconds.
pub fn window(range: app::model::Range) -> (i64, i64) {
    let to = jiff::Timestamp::now().as_second();
    (to - range.seconds(), to)
}

/// One point of a series: time, value, and for rolled-up points the bucket's min and max.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Unix seconds.
    pub ts: i64,
    /// Value (average for rollups).
    pub value: f64,
    /// Minimum within a rollup bucket.
    pub min: Option<f64>,
    /// Maximum within a rollup bucket.
    pub max: Option<f64>,
}

impl Point {
    /// Where a series stopped being known: no value (`null` in JSON) from `ts` on.
    pub fn stop(ts: i64) -> Self {
        Self { ts, value: f64::NAN, min: None, max: None }
    }

    /// Whether this point ends the line rather than giving a value.
    pub fn is_stop(&self) -> bool {
        self.value.is_nan()
    }
}

/// Splits points into drawable segments: a segment ends at a gap, or where the next point is
/// further away than `max_step` (nothing was recorded), so that missing time is never drawn.
/// Each point holds until the next one (a step function); a stop ([`Point::stop`]) ends the line.
pub fn segments(points: &[Point], gaps: &[(i64, i64, String)], max_step: i64, to: i64) -> Vec<Vec<(i64, f64)>> {
    let in_gap = |t: i64| gaps.iter().any(|(s, e, _)| t >= *s && t < *e);
    let mut out: Vec<Vec<(i64, f64)>> = Vec::new();
    let mut cur: Vec<(i64, f64)> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if p.is_stop() {
            // The line ends here (the previous value held until now).
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if in_gap(p.ts) {
            continue;
        }
        let next = points.get(i + 1).map_or(to, |n| n.ts);
        // Where this value stops holding: the next sample, a gap, the max step, or the end.
        let gap_start = gaps.iter().filter(|(s, _, _)| *s > p.ts).map(|(s, _, _)| *s).min().unwrap_or(i64::MAX);
        let mut end = next.min(gap_start).min(p.ts + max_step).min(to);
        if end < p.ts {
            end = p.ts;
        }
        cur.push((p.ts, p.value));
        cur.push((end, p.value));
        if end < next {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
