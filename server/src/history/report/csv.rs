//! The GPU-hours report as CSV, its column titles in the page's language.

use super::{hours, Report};

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
