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
    }
    out
}

#[cfg(test)]
mod tests {
    use super::spreadsheet_safe;

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
