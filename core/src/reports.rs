//! The reports page's arithmetic: a [`Report`]'s range in words, the months either side, and
//! its stacked daily chart laid out (`gpudash_model::model::report::Sheet`), so that the page only
//! renders.

use gpudash_model::model::report::{Bar, By, DailyChart, Report, Sheet};
use gpudash_model::time::{civil_from_days, Zone};

/// Okabe–Ito, colour-blind safe, as the history charts use.
pub const PALETTE: [&str; 8] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"];

/// `YYYY-MM-DD` of a Unix time at `tz` minutes east.
fn date(t: i64, tz: i32) -> String {
    let (y, m, d) = civil_from_days((t + i64::from(tz) * 60).div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `JST (+09:00)` where the offset is the reader's zone's at `at`, else `+09:00`.
fn zone(tz: i32, reader: &Zone, at: i64) -> String {
    let sign = if tz < 0 { '-' } else { '+' };
    let offset = format!("{sign}{:02}:{:02}", tz.abs() / 60, tz.abs() % 60);
    match reader.at(at) {
        (o, abbr) if o == i64::from(tz) * 60 => format!("{abbr} ({offset})"),
        _ => offset,
    }
}

/// Rows on one page of the reports page: a year by pod had ~100,000 rows (114 MB of HTML).
pub const PAGE_ROWS: usize = 200;

/// Keeps page `page` (from 1; past the end gives the last) of `r`'s rows, in their order, and
/// says where it lies; the totals stay every row's. The CSV and the API keep every row.
pub fn page_rows(r: &mut Report, page: u32) -> gpudash_model::model::report::RowsPage {
    let total = r.rows.len();
    let pages = total.div_ceil(PAGE_ROWS).max(1);
    let page = usize::try_from(page).unwrap_or(1).clamp(1, pages);
    let start = ((page - 1) * PAGE_ROWS).min(total);
    let end = (start + PAGE_ROWS).min(total);
    r.rows.truncate(end);
    r.rows.drain(..start);
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    gpudash_model::model::report::RowsPage {
        first: if end > start { count(start + 1) } else { 0 },
        last: count(end),
        total: count(total),
        page: count(page),
        pages: count(pages),
        prev: (page > 1).then(|| count(page - 1)),
        next: (page < pages).then(|| count(page + 1)),
    }
}

/// What the page shows of `r` for a reader in `reader` (its rows all on one page: see
/// [`page_rows`]).
pub fn sheet(r: &Report, reader: &Zone) -> Sheet {
    let (y, m, _) = civil_from_days((r.from + i64::from(r.tz_minutes) * 60).div_euclid(86_400));
    let month = |(y, m): (i64, i64)| format!("{y:04}-{m:02}");
    let prev = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    let next = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let (workload_column, pod_column) = (r.by != By::Namespace, r.by == By::Pod);
    Sheet {
        range: (date(r.from, r.tz_minutes), date(r.to - 1, r.tz_minutes), zone(r.tz_minutes, reader, r.from)),
        months: (month(prev), month(next)),
        by_name: match r.by {
            By::Namespace => "namespace",
            By::Workload => "workload",
            By::Pod => "pod",
        },
        workload_column,
        pod_column,
        label_columns: 1 + usize::from(workload_column) + usize::from(pod_column),
        chart: chart(r),
        rows: gpudash_model::model::report::RowsPage::default(),
    }
}

/// The stacked bars: GPU-hours held per day, one colour per namespace (the seven most held,
/// the rest as one grey band), with a legend. Every day of the range has its slot, so that a
/// month reads as a month.
pub fn chart(r: &Report) -> DailyChart {
    let grey = PALETTE[PALETTE.len() - 1];
    let mut totals: Vec<(String, f64)> = Vec::new();
    for d in &r.days {
        match totals.iter_mut().find(|(n, _)| *n == d.namespace) {
            Some(t) => t.1 += d.held_gpu_seconds,
            None => totals.push((d.namespace.clone(), d.held_gpu_seconds)),
        }
    }
    totals.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let shown: Vec<String> = totals.iter().take(PALETTE.len() - 1).map(|(n, _)| n.clone()).collect();
    let colour = |ns: &str| shown.iter().position(|n| n == ns).map_or(grey, |i| PALETTE[i]);
    let tz = i64::from(r.tz_minutes) * 60;
    let first_day = (r.from + tz).div_euclid(86_400) * 86_400 - tz;
    let day_starts: Vec<i64> = (0..400).map(|i| first_day + i * 86_400).take_while(|d| *d < r.to).collect();
    let per_day = |s: i64| r.days.iter().filter(|d| d.start == s).map(|d| d.held_gpu_seconds).sum::<f64>();
    let max = day_starts.iter().map(|s| per_day(*s)).fold(0.0_f64, f64::max).max(1.0) / 3600.0;
    let (w, h, left, bottom) = (960.0_f64, 160.0_f64, 56.0_f64, 22.0_f64);
    let n = day_starts.len().max(1) as f64;
    let bw = ((w - left) / n).max(1.0);
    let mut bars = Vec::new();
    for (i, s) in day_starts.iter().enumerate() {
        let mut y = h - bottom;
        let mut parts: Vec<(&str, f64)> = r
            .days
            .iter()
            .filter(|d| d.start == *s)
            .map(|d| (d.namespace.as_str(), d.held_gpu_seconds / 3600.0))
            .collect();
        parts.sort_by_key(|(ns, _)| shown.iter().position(|n| n == ns).unwrap_or(usize::MAX));
        for (ns, v) in parts {
            let height = v / max * (h - bottom - 8.0);
            y -= height;
            bars.push(Bar {
                x: left + i as f64 * bw + 1.0,
                y,
                width: (bw - 2.0).max(0.5),
                height,
                colour: colour(ns),
                title: format!("{} {ns}: {:.2}", date(*s, r.tz_minutes), v),
            });
        }
    }
    let mut legend: Vec<(String, &'static str)> = shown.iter().map(|n| (n.clone(), colour(n))).collect();
    if totals.len() > shown.len() {
        legend.push(("…".into(), grey));
    }
    DailyChart {
        width: w,
        height: h,
        left,
        baseline: h - bottom,
        label_x: left - 4.0,
        label_y: h - 4.0,
        top_label: if max < 1.0 { format!("{max:.2} h") } else { format!("{max:.1} h") },
        first: day_starts.first().map(|s| date(*s, r.tz_minutes)).unwrap_or_default(),
        last: day_starts.last().map(|s| date(*s, r.tz_minutes)).unwrap_or_default(),
        bars,
        legend,
    }
}

#[cfg(test)]
mod paging_tests {
    use super::*;
    use gpudash_model::model::report::Row;

    #[test]
    fn a_long_report_is_paged_by_200_rows_and_its_totals_stay_whole() {
        let mut r = Report {
            rows: (0..450).map(|i| Row { namespace: format!("ns-{i:03}"), ..Row::default() }).collect(),
            ..Report::default()
        };
        let totals = r.totals.clone();
        let p = page_rows(&mut r, 3);
        assert_eq!((p.first, p.last, p.total, p.page, p.pages), (401, 450, 450, 3, 3));
        assert_eq!((p.prev, p.next), (Some(2), None));
        assert_eq!((r.rows.len(), r.rows[0].namespace.as_str()), (50, "ns-400"));
        assert_eq!(r.totals, totals);
        let mut r2 = Report { rows: (0..450).map(|_| Row::default()).collect(), ..Report::default() };
        let p = page_rows(&mut r2, 0);
        assert_eq!((p.page, p.prev, p.next), (1, None, Some(2)));
        assert_eq!(r2.rows.len(), 200);
        let mut empty = Report::default();
        let p = page_rows(&mut empty, 7);
        assert_eq!((p.first, p.last, p.total, p.page, p.pages), (0, 0, 0, 1, 1));
        assert_eq!((p.prev, p.next), (None, None));
    }
}
