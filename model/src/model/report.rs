//! GPU-hours reports (`/reports`, `GET /api/v1/reports`): what the server computes from
//! history and the page renders. Figures are seconds; the page shows hours.

use serde::{Deserialize, Serialize};

/// Seconds as hours to two decimals, halves away from zero (as a spreadsheet rounds; `{:.2}`
/// alone rounds 0.125 to even); blank when unknown. The page and the CSV both show this.
pub fn hours(seconds: Option<f64>) -> String {
    seconds.map(|s| format!("{:.2}", (s / 36.0).round() / 100.0)).unwrap_or_default()
}

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// Per namespace (team).
    #[default]
    Namespace,
    /// Per workload (`Deployment/x`; a bare pod as `Pod/name`).
    Workload,
    /// Per pod.
    Pod,
}

impl By {
    /// From a query value.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "namespace" | "" => Some(Self::Namespace),
            "workload" => Some(Self::Workload),
            "pod" => Some(Self::Pod),
            _ => None,
        }
    }
}

/// One row's figures. Seconds of GPU (a GPU-second is one physical GPU for one second).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// GPU-seconds held.
    pub held_gpu_seconds: f64,
    /// Of those, GPU-seconds during which the agent measured the GPU's busy %.
    pub measured_gpu_seconds: f64,
    /// GPU-seconds used: measured held time weighted by busy % (null when nothing was measured).
    pub used_gpu_seconds: Option<f64>,
    /// Measured GPU-seconds held while the GPU was below 5 % busy (null when nothing was measured).
    pub idle_held_gpu_seconds: Option<f64>,
    /// GPU-seconds held by intervals recorded before gpudash knew the share (counted apart).
    pub unknown_share_seconds: f64,
    /// Memory requested on unified-memory boards, in GiB-seconds (null when none ran there).
    pub memory_gib_seconds: Option<f64>,
    /// Seconds Pending pods waited for a GPU.
    pub waited_seconds: f64,
}

impl Figures {
    /// Adds another row's figures (an unknown stays unknown only when both are).
    pub fn add(&mut self, o: &Figures) {
        self.held_gpu_seconds += o.held_gpu_seconds;
        self.measured_gpu_seconds += o.measured_gpu_seconds;
        self.unknown_share_seconds += o.unknown_share_seconds;
        self.waited_seconds += o.waited_seconds;
        let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.used_gpu_seconds = sum(self.used_gpu_seconds, o.used_gpu_seconds);
        self.idle_held_gpu_seconds = sum(self.idle_held_gpu_seconds, o.idle_held_gpu_seconds);
        self.memory_gib_seconds = sum(self.memory_gib_seconds, o.memory_gib_seconds);
    }
}

/// One row of a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Namespace.
    pub namespace: String,
    /// Workload (`by=workload`), or the pod's workload (`by=pod`).
    pub workload: Option<String>,
    /// Pod (`by=pod`).
    pub pod: Option<String>,
    /// Its figures.
    #[serde(flatten)]
    pub figures: Figures,
}

/// GPU-seconds one namespace held on one day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Day {
    /// The day's start (Unix seconds, at the report's time-zone offset).
    pub start: i64,
    /// Namespace.
    pub namespace: String,
    /// GPU-seconds held.
    pub held_gpu_seconds: f64,
}

/// A report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Start (Unix seconds).
    pub from: i64,
    /// End (Unix seconds, exclusive).
    pub to: i64,
    /// Grouping.
    pub by: By,
    /// Time-zone offset of the days, in minutes east of UTC.
    pub tz_minutes: i32,
    /// Rows, most GPU-hours held first.
    pub rows: Vec<Row>,
    /// Sum of the rows.
    pub totals: Figures,
    /// Gaps in history within the range: `(start, end, reason)`, left out of every figure.
    pub gaps: Vec<(i64, i64, String)>,
    /// Seconds of the range inside gaps.
    pub gap_seconds: i64,
    /// Per namespace per day, for the stacked chart.
    pub days: Vec<Day>,
}

/// Orders rows by a column (`sort=`): `name` alphabetically, else that figure, most first
/// (unknown last), ties keeping their order; anything else leaves the default, most held first.
pub fn sort_rows(rows: &mut [Row], column: &str) {
    let key = |f: &Figures| match column {
        "used" => f.used_gpu_seconds.unwrap_or(-1.0),
        "idle" => f.idle_held_gpu_seconds.unwrap_or(-1.0),
        "memory" => f.memory_gib_seconds.unwrap_or(-1.0),
        "waited" => f.waited_seconds,
        "measured" => f.measured_gpu_seconds,
        _ => f.held_gpu_seconds,
    };
    if column == "name" {
        rows.sort_by(|a, b| (&a.namespace, &a.workload, &a.pod).cmp(&(&b.namespace, &b.workload, &b.pod)));
    } else {
        rows.sort_by(|a, b| key(&b.figures).total_cmp(&key(&a.figures)));
    }
}

/// What the reports page shows of a [`Report`] beyond its rows, worked out by the core
/// (`gpudash_core::reports::sheet`): the range in words, the months either side, and the
/// stacked chart laid out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sheet {
    /// First and last day (`2026-11-01`, `2026-11-30`) and the zone they are in
    /// (`JST (+09:00)`, or the offset alone).
    pub range: (String, String, String),
    /// The month before and after the one shown (`2026-10`, `2026-12`).
    pub months: (String, String),
    /// The `by=` name of the grouping.
    pub by_name: &'static str,
    /// Workload and pod columns shown.
    pub workload_column: bool,
    /// The pod column shown.
    pub pod_column: bool,
    /// Columns the totals' label spans.
    pub label_columns: usize,
    /// The chart.
    pub chart: DailyChart,
    /// Which of the report's rows the page shows (a long report by pod is paged).
    pub rows: RowsPage,
}

/// A page of a report's rows: the page's are the report's, the totals are every row's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowsPage {
    /// The first row shown, from 1 (0 without rows).
    pub first: u32,
    /// The last row shown.
    pub last: u32,
    /// Rows in all.
    pub total: u32,
    /// This page, from 1.
    pub page: u32,
    /// Pages.
    pub pages: u32,
    /// The page before this one, if any.
    pub prev: Option<u32>,
    /// The page after this one, if any.
    pub next: Option<u32>,
}

/// GPU-hours held per day, stacked by namespace, laid out in SVG units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DailyChart {
    /// The SVG's `viewBox` size.
    pub width: f64,
    /// Height.
    pub height: f64,
    /// Where the plot starts (room for the y labels).
    pub left: f64,
    /// The baseline's y.
    pub baseline: f64,
    /// Where the y labels end (left of the plot).
    pub label_x: f64,
    /// Where the date labels sit (below the baseline).
    pub label_y: f64,
    /// The top's label (`3.5 h`).
    pub top_label: String,
    /// The first and last day's dates.
    pub first: String,
    /// The last day's date.
    pub last: String,
    /// The bars.
    pub bars: Vec<Bar>,
    /// The legend: a namespace (or `…` for the rest) and its colour.
    pub legend: Vec<(String, &'static str)>,
}

/// One namespace's part of one day's bar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bar {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
    /// Fill.
    pub colour: &'static str,
    /// Its tooltip: the day, the namespace, the hours.
    pub title: String,
}
