//! `/reports`: GPU-hours per team, workload and pod for a month (or any range) — held, used,
//! idle-held, memory-hours and waits — with a stacked chart per day and CSV downloads.
//! Server-rendered from the report the server computed from history ([`Boot::report`]).

use leptos::prelude::*;

use crate::boot::Boot;
use crate::i18n::fill;
use crate::model::report::{hours, By, DailyChart, Report, Sheet};

/// The stacked daily chart, as the core laid it out.
fn chart(c: DailyChart, alt: &str) -> impl IntoView {
    let DailyChart { width, height, left, baseline, label_x, label_y, top_label, first, last, bars, legend } = c;
    view! {
        <figure class="panel chart report-chart">
            <svg viewBox=format!("0 0 {width} {height}") role="img" aria-label=alt.to_string()>
                <title>{alt.to_string()}</title>
                <line x1=left y1=baseline x2=width y2=baseline class="axis"/>
                <text x=label_x y=14 text-anchor="end" class="tick">{top_label}</text>
                <text x=label_x y=baseline text-anchor="end" class="tick">"0"</text>
                <text x=left y=label_y class="tick">{first}</text>
                <text x=width y=label_y text-anchor="end" class="tick">{last}</text>
                {bars.into_iter().map(|b| view! {
                    <rect x=b.x y=b.y width=b.width height=b.height fill=b.colour><title>{b.title}</title></rect>
                }).collect_view()}
            </svg>
            <figcaption class="legend">
                {legend.into_iter().map(|(n, c)| view! { <span class="key"><i style=format!("background:{c}")></i>{n}</span> }).collect_view()}
            </figcaption>
        </figure>
    }
}

/// The report's rows and totals; each column's head links to the report sorted by it.
fn table(r: &Report, sheet: &Sheet, sort: &str, sorted_by: impl Fn(&str) -> String) -> impl IntoView {
    let s = expect_context::<Boot>().lang.s();
    let (show_ws, show_pod) = (sheet.workload_column, sheet.pod_column);
    // Sorted by the server as `sort=` asks.
    let rows = r.rows.clone();
    let head = |col: &'static str, label: &'static str| {
        let on = sort == col;
        let class = if col == "name" { "" } else { "num" };
        let aria = if on { "descending" } else { "none" };
        view! { <th scope="col" class=class aria-sort=aria><a href=sorted_by(col)>{label}{on.then_some(" ▼")}</a></th> }
    };
    let totals = r.totals.clone();
    view! {
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
                <th scope="row" colspan=sheet.label_columns>{s.reports_total}</th>
                <td class="num">{hours(Some(totals.held_gpu_seconds))}</td>
                <td class="num">{hours(Some(totals.measured_gpu_seconds))}</td>
                <td class="num">{hours(totals.used_gpu_seconds)}</td>
                <td class="num">{hours(totals.idle_held_gpu_seconds)}</td>
                <td class="num">{hours(totals.memory_gib_seconds)}</td>
                <td class="num">{hours(Some(totals.waited_seconds))}</td>
            </tr></tfoot>
        </table>
        </div>
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
    let sort = q("sort").unwrap_or_else(|| "held".into());
    let month = q("month");
    // A link to this page with `month`/`by`/`sort` changed and everything else kept.
    let link = |month: Option<String>, by: &str, sort: &str| boot.report_link(month.as_deref(), by, sort);
    let body = match report {
        None => view! { <p class="muted">{s.reports_none}</p> }.into_any(),
        Some(Err(e)) => view! { <p class="status" data-state="stale" role="alert">"▲ " {e}</p> }.into_any(),
        Some(Ok((r, sheet))) => {
            let by_name = sheet.by_name;
            let (prev, next) = sheet.months.clone();
            let groups = [
                (By::Namespace, "namespace", s.reports_by_namespace),
                (By::Workload, "workload", s.reports_by_workload),
                (By::Pod, "pod", s.reports_by_pod),
            ];
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
            let (first, last, zone) = &sheet.range;
            let range = fill(s.reports_range, &[first, last, zone]);
            let gaps = (r.gap_seconds > 0).then(|| {
                let d = crate::i18n::duration(r.gap_seconds, boot.lang);
                view! { <p class="status" data-state="stale" role="note">"▲ " {fill(s.reports_gaps, &[&d])}</p> }
            });
            let empty = r.rows.is_empty();
            let alt = s.reports_chart.to_string();
            // A long report (by pod over months) is paged; the CSV has every row.
            let rows = sheet.rows;
            let pager = (rows.prev.is_some() || rows.next.is_some()).then(|| {
                let at = |page: u32| format!("{}&page={page}", link(month.clone(), by_name, &sort));
                let prev = rows.prev.map(|p| view! { <a rel="prev" href=at(p)>{s.sheet_prev}</a> });
                let next = rows.next.map(|p| view! { <a rel="next" href=at(p)>{s.sheet_next}</a> });
                let said =
                    fill(s.reports_rows, &[&rows.first.to_string(), &rows.last.to_string(), &rows.total.to_string()]);
                view! { <nav class="pager" aria-label=s.list_pages><span class="muted">{said}</span>{prev}{next}</nav> }
            });
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
                        {chart(sheet.chart.clone(), &alt)}
                        <p><a class="button" href=csv download="">{s.reports_csv}</a></p>
                        {table(&r, &sheet, &sort, |col| link(month.clone(), by_name, col))}
                        {pager}
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
