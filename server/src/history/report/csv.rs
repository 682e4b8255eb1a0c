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

/// A text cell as a spreadsheet reads it as text: one that begins with `=`, `+`, `-`, `@`, a tab
/// or a carriage return would be read as a formula (a workload's name is a tenant's text:
/// `=HYPERLINK(…)` ran in the monthly review's spreadsheet), so it gets a leading `'`, which
/// spreadsheet programs show as text and do not display (OWASP's advice for CSV injection).
fn spreadsheet_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The report as CSV (UTF-8 with a byte-order mark, so spreadsheet programs read Japanese
/// names right), hours to two decimals; `heads` are the column titles in the page's language.
pub fn csv(r: &Report, heads: &[&str; 9]) -> String {
    let mut out = String::new();
    csv_chunks(r, heads, usize::MAX, &mut |chunk| {
        out.push_str(&chunk);
        true
    });
    out
}

/// The report as [`csv`] does, handed to `emit` in chunks of about `chunk` bytes (a year by pod
/// is megabytes: the response streams it instead of holding it whole). Stops when `emit` says
/// no (the client left).
pub fn csv_chunks(r: &Report, heads: &[&str; 9], chunk: usize, emit: &mut dyn FnMut(String) -> bool) {
    let mut out = String::from("\u{feff}");
    let cell = |s: &str| {
        let s = spreadsheet_safe(s);
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.into_owned()
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
        if out.len() >= chunk && !emit(std::mem::take(&mut out)) {
            return;
        }
    }
    if !out.is_empty() {
        emit(out);
    }
}

#[cfg(test)]
mod tests {
    use super::{csv, csv_chunks, spreadsheet_safe};
    use crate::history::report::{By, Figures, Report, Row};

    /// The CSV in small chunks is the CSV whole, and a client that leaves stops the writing.
    #[test]
    fn the_csv_in_chunks_is_the_csv_whole() {
        let rows = (0..500)
            .map(|i| Row {
                namespace: format!("ns{i}"),
                workload: Some(format!("=Deployment/w{i}")),
                pod: Some(format!("p,{i}")),
                figures: Figures { held_gpu_seconds: f64::from(i) * 36.0, ..Figures::default() },
            })
            .collect();
        let r = Report { by: By::Pod, rows, ..Report::default() };
        let heads = ["a"; 9];
        let mut parts = Vec::new();
        csv_chunks(&r, &heads, 1000, &mut |c| {
            parts.push(c);
            true
        });
        assert!(parts.len() > 10, "{} chunks", parts.len());
        assert_eq!(parts.concat(), csv(&r, &heads));
        assert_eq!(csv(&r, &heads).lines().count(), 501);
        let mut taken = 0;
        csv_chunks(&r, &heads, 1000, &mut |_| {
            taken += 1;
            taken < 2
        });
        assert_eq!(taken, 2, "the writing stops when the client has gone");
    }

    #[test]
    fn a_cell_a_spreadsheet_would_read_as_a_formula_is_kept_as_text() {
        for bad in ["=HYPERLINK(\"http://evil.example\",\"x\")", "@SUM(1+1)", "+1", "-1+2", "\tx", "\rx"] {
            assert_eq!(spreadsheet_safe(bad), format!("'{bad}"), "{bad:?}");
        }
        for good in ["vision", "Deployment/ocr-model", "team-a", "名前", ""] {
            assert_eq!(spreadsheet_safe(good), good);
        }
    }
}
