//! `/reports`: GPU-hours per team, workload and pod for a month (or any range) — held, used,
//! idle-held, memory-hours and waits — with a stacked chart per day and CSV downloads.
//! Server-rendered from the report the server computed from history ([`Boot::report`]).

use leptos::prelude::*;

use crate::boot::{percent_encode, Boot};
use crate::i18n::fill;
use crate::model::report::{hours, By, Report};
use crate::time::civil_from_days;

/// Okabe–Ito, colour-blind safe, as the history charts use.
const PALETTE: [&str; 8] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"];

/// `YYYY-MM-DD` of a Unix time at `tz` minutes east.
fn date(t: i64, tz: i32) -> String {
    let (y, m, d) = civil_from_days((t + i64::from(tz) * 60).div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `JST (+09:00)` where the offset is the reader's zone's at `at`, else `+09:00`.
fn zone(tz: i32, reader: &crate::time::Zone, at: i64) -> String {
    let sign = if tz < 0 { '-' } else { '+' };
    let offset = format!("{sign}{:02}:{:02}", tz.abs() / 60, tz.abs() % 60);
    match reader.at(at) {
        (o, abbr) if o == i64::from(tz) * 60 => format!("{abbr} ({offset})"),
        _ => offset,
    }
}

/// The stacked bars: GPU-hours held per day, one colour per namespace (the eight most held,
/// the rest as one grey band), with a legend.
fn chart(r: &Report, alt: &str) -> impl IntoView {
    let mut totals: Vec<(String, f64)> = Vec::new();
    for d in &r.days {
        match totals.iter_mut().find(|(n, _)| *n == d.namespace) {
            Some(t) => t.1 += d.held_gpu_seconds,
            None => totals.push((d.namespace.clone(), d.held_gpu_seconds)),
        }
    }
    totals.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let shown: Vec<String> = totals.iter().take(PALETTE.len() - 1).map(|(n, _)| n.clone()).collect();
    let colour = |ns: &str| shown.iter().position(|n| n == ns).map_or(PALETTE[PALETTE.len() - 1], |i| PALETTE[i]);
    // Every day of the range has its slot, so that a month reads as a month.
    let tz = i64::from(r.tz_minutes) * 60;
    let first_day = (r.from + tz).div_euclid(86_400) * 86_400 - tz;
    let day_starts: Vec<i64> = (0..400).map(|i| first_day + i * 86_400).take_while(|d| *d < r.to).collect();
    let per_day = |s: i64| r.days.iter().filter(|d| d.start == s).map(|d| d.held_gpu_seconds).sum::<f64>();
    let max = day_starts.iter().map(|s| per_day(*s)).fold(0.0_f64, f64::max).max(1.0) / 3600.0;
    let (w, h, left, bottom) = (960.0_f64, 160.0_f64, 56.0_f64, 22.0_f64);
    let top_label = if max < 1.0 { format!("{max:.2} h") } else { format!("{max:.1} h") };
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
            let bh = v / max * (h - bottom - 8.0);
            y -= bh;
            bars.push((
                left + i as f64 * bw + 1.0,
                y,
                (bw - 2.0).max(0.5),
                bh,
                colour(ns),
                format!("{} {ns}: {:.2}", date(*s, r.tz_minutes), v),
            ));
        }
    }
    let first = day_starts.first().map(|s| date(*s, r.tz_minutes)).unwrap_or_default();
    let last = day_starts.last().map(|s| date(*s, r.tz_minutes)).unwrap_or_default();
    let mut legend: Vec<(String, &str)> = shown.iter().map(|n| (n.clone(), colour(n))).collect();
    if totals.len() > shown.len() {
        legend.push(("…".into(), PALETTE[PALETTE.len() - 1]));
    }
    view! {
        <figure class="panel chart report-chart">
            <svg viewBox=format!("0 0 {w} {h}") role="img" aria-label=alt.to_string()>
                <title>{alt.to_string()}</title>
                <line x1=left y1=h - bottom x2=w y2=h - bottom class="axis"/>
                <text x=left - 4.0 y=14 text-anchor="end" class="tick">{top_label}</text>
                <text x=left - 4.0 y=h - bottom text-anchor="end" class="tick">"0"</text>
                <text x=left y=h - 4.0 class="tick">{first}</text>
                <text x=w y=h - 4.0 text-anchor="end" class="tick">{last}</text>
                {bars.into_iter().map(|(x, y, bw, bh, c, title)| view! {
                    <rect x=x y=y width=bw height=bh fill=c><title>{title}</title></rect>
                }).collect_view()}
            </svg>
            <figcaption class="legend">
                {legend.into_iter().map(|(n, c)| view! { <span class="key"><i style=format!("background:{c}")></i>{n}</span> }).collect_view()}
            </figcaption>
        </figure>
    }
}

/// `/reports`.
#[component]
pub fn ReportsPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let s = boot.lang.s();
    let lang = boot.lang.code();
    let q = |k: &str| boot.report_query.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    let report = boot.report.clone();
    let tz = q("tz").unwrap_or_default();
    // A link to this page with `month`/`by` changed and everything else kept.
    let sort = q("sort").unwrap_or_else(|| "held".into());
    let link = |month: Option<String>, by: &str, sort: &str| {
        let mut pairs: Vec<String> = Vec::new();
        if let Some(m) = month {
            pairs.push(format!("month={m}"));
        } else {
            for k in ["from", "to"] {
                if let Some(v) = q(k) {
                    pairs.push(format!("{k}={}", percent_encode(&v)));
                }
            }
        }
        pairs.push(format!("by={by}"));
        if sort != "held" {
            pairs.push(format!("sort={}", percent_encode(sort)));
        }
        if !tz.is_empty() {
            pairs.push(format!("tz={}", percent_encode(&tz)));
        }
        let page = boot.href("/reports");
        let sep = if page.contains('?') { '&' } else { '?' };
        format!("{page}{sep}{}", pairs.join("&"))
    };
    let body = match report {
        None => view! { <p class="muted">{s.reports_none}</p> }.into_any(),
        Some(Err(e)) => view! { <p class="status" data-state="stale" role="alert">"▲ " {e}</p> }.into_any(),
        Some(Ok(r)) => {
            let by_name = match r.by {
                By::Namespace => "namespace",
                By::Workload => "workload",
                By::Pod => "pod",
            };
            // The month shown (its first day at the report's offset), and the ones either side.
            let (y, m, _) = civil_from_days((r.from + i64::from(r.tz_minutes) * 60).div_euclid(86_400));
            let months = [if m == 1 { (y - 1, 12) } else { (y, m - 1) }, if m == 12 { (y + 1, 1) } else { (y, m + 1) }]
                .map(|(y, m)| format!("{y:04}-{m:02}"));
            let [prev, next] = months;
            let groups = [
                (By::Namespace, "namespace", s.reports_by_namespace),
                (By::Workload, "workload", s.reports_by_workload),
                (By::Pod, "pod", s.reports_by_pod),
            ];
            let month = q("month");
            let tabs = groups
                .into_iter()
                .map(|(b, name, label)| {
                    let cls = if b == r.by { "range current" } else { "range" };
                    view! { <a class=cls href=link(month.clone(), name, &sort) aria-current=if b == r.by { "page" } else { "false" }>{label}</a> }
                })
                .collect_view();
            let csv = {
                let mut h = link(month.clone(), by_name, "held").replace("/reports", "/api/v1/reports");
                h.push_str(&format!("&format=csv&lang={lang}"));
                h
            };
            let range = fill(
                s.reports_range,
                &[&date(r.from, r.tz_minutes), &date(r.to - 1, r.tz_minutes), &zone(r.tz_minutes, &boot.zone, r.from)],
            );
            let gaps = (r.gap_seconds > 0).then(|| {
                let d = crate::i18n::duration(r.gap_seconds, boot.lang);
                view! { <p class="status" data-state="stale" role="note">"▲ " {fill(s.reports_gaps, &[&d])}</p> }
            });
            let show_ws = r.by != By::Namespace;
            let show_pod = r.by == By::Pod;
            let empty = r.rows.is_empty();
            let alt = s.reports_chart.to_string();
            // Sorted by the server as `sort=` asks.
            let rows = r.rows.clone();
            let head = |col: &'static str, label: &'static str| {
                let on = sort == col;
                let href = link(month.clone(), by_name, col);
                let class = if col == "name" { "" } else { "num" };
                let aria = if on { "descending" } else { "none" };
                view! { <th scope="col" class=class aria-sort=aria><a href=href>{label}{on.then_some(" ▼")}</a></th> }
            };
            let totals = r.totals.clone();
            view! {
                <nav class="ranges" aria-label=s.reports_by>
                    <a class="range" href=link(Some(prev), by_name, &sort)>{s.reports_prev}</a>
                    <span class="range current">{range}</span>
                    <a class="range" href=link(Some(next), by_name, &sort)>{s.reports_next}</a>
                </nav>
                <nav class="ranges" aria-label=s.reports_by>{tabs}</nav>
                {gaps}
                {if empty {
                    view! { <p class="muted big">{s.reports_none}</p> }.into_any()
                } else {
                    view! {
                        {chart(&r, &alt)}
                        <p><a class="button" href=csv download="">{s.reports_csv}</a></p>
                        <div class="table-wrap">
                        <table class="report">
                            <thead><tr>
                                {head("name", s.col_namespace)}
                                {show_ws.then(|| view! { <th scope="col">{s.col_workload}</th> })}
                                {show_pod.then(|| view! { <th scope="col">{s.col_pod}</th> })}
                                {head("held", s.col_held)}
                                {head("measured", s.col_measured)}
                                {head("used", s.col_gpu_used)}
                                {head("idle", s.col_idle)}
                                {head("memory", s.col_memory_hours)}
                                {head("waited", s.col_waited)}
                            </tr></thead>
                            <tbody>
                                {rows.into_iter().map(|row| {
                                    let f = row.figures;
                                    view! { <tr>
                                        <td>{row.namespace}</td>
                                        {show_ws.then(|| view! { <td class="mono">{row.workload.clone().unwrap_or_default()}</td> })}
                                        {show_pod.then(|| view! { <td class="mono">{row.pod.clone().unwrap_or_default()}</td> })}
                                        <td class="num">{hours(Some(f.held_gpu_seconds))}</td>
                                        <td class="num">{hours(Some(f.measured_gpu_seconds))}</td>
                                        <td class="num">{hours(f.used_gpu_seconds)}</td>
                                        <td class="num">{hours(f.idle_held_gpu_seconds)}</td>
                                        <td class="num">{hours(f.memory_gib_seconds)}</td>
                                        <td class="num">{hours(Some(f.waited_seconds))}</td>
                                    </tr> }
                                }).collect_view()}
                            </tbody>
                            <tfoot><tr>
                                <th scope="row" colspan=1 + usize::from(show_ws) + usize::from(show_pod)>{s.reports_total}</th>
                                <td class="num">{hours(Some(totals.held_gpu_seconds))}</td>
                                <td class="num">{hours(Some(totals.measured_gpu_seconds))}</td>
                                <td class="num">{hours(totals.used_gpu_seconds)}</td>
                                <td class="num">{hours(totals.idle_held_gpu_seconds)}</td>
                                <td class="num">{hours(totals.memory_gib_seconds)}</td>
                                <td class="num">{hours(Some(totals.waited_seconds))}</td>
                            </tr></tfoot>
                        </table>
                        </div>
                        <p class="muted">{s.reports_unmeasured}</p>
                    }.into_any()
                }}
            }
            .into_any()
        }
    };
    view! {
        <h1 class="page-title">{s.reports_title}</h1>
        <p class="muted">{s.reports_intro}</p>
        {body}
    }
}
