//! Allocation history in SQLite: the recorder (fed by the view stream), queries, retention and
//! downsampling, and server-side SVG charts. Collection and rendering are kept apart.

pub mod charts;
pub mod http;
pub mod query;
pub mod recorder;
pub mod report;
pub mod retention;

use std::time::Duration;

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

/// Who reports on history's health. Each writer has its own slot: one that recovers clears
/// its own problem and no other's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// Opening the database at start-up.
    Open = 0,
    /// The recorder's batches.
    Recorder = 1,
    /// Pruning and rollups.
    Retention = 2,
}

/// What each writer last reported: a problem, or nothing while it works.
#[derive(Debug, Default)]
pub struct Health {
    slots: std::sync::Mutex<[Option<String>; 3]>,
}

impl Health {
    /// Sets (or, with `None`, clears) one writer's problem.
    pub fn set(&self, w: Writer, problem: Option<String>) {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[w as usize] = problem;
    }

    /// Every current problem, in writer order.
    pub fn problems(&self) -> Vec<String> {
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().flatten().cloned().collect()
    }

    /// The current problems as one line, if any.
    pub fn problem(&self) -> Option<String> {
        let all = self.problems();
        (!all.is_empty()).then(|| all.join("; "))
    }
}

/// A time range by name, as the UI and API take it.
pub fn range_seconds(name: &str) -> Option<i64> {
    match name {
        "1h" => Some(3600),
        "24h" => Some(86_400),
        "7d" => Some(7 * 86_400),
        "30d" => Some(30 * 86_400),
        _ => None,
    }
}

/// The time ranges offered.
pub const RANGES: [&str; 4] = ["1h", "24h", "7d", "30d"];

#[cfg(test)]
mod tests;
