//! The pages: overview, node, pending, diagnoses.

use leptos::either::Either;
use leptos::prelude::*;

use crate::boot::{percent_encode, Boot};
use crate::i18n::{elapsed, fill, Say, T};
use crate::model::{ClusterView, Severity};
use crate::time::parse_rfc3339;
use crate::units::bytes;

use super::app::Live;
use super::cards::NodeCard;

fn all_namespaces(v: &ClusterView) -> Vec<String> {
    let mut out: Vec<String> = v.nodes.iter().flat_map(|n| n.namespaces.iter().cloned()).collect();
    out.sort();
    out.dedup();
    out
}

#[component]
pub(super) fn Totals() -> impl IntoView {
    let live = expect_context::<Live>();
    let s = expect_context::<Boot>().lang.t();
    let t = move || live.view.with(|v| v.totals.clone());
    view! {
        <section class="totals" aria-label=s.totals_label>
            <div class="total"><span class="num">{move || t().ready_nodes} "/" {move || t().nodes}</span><span class="lbl">{s.totals_nodes}</span></div>
            <div class="total">
                <span class="num">{move || t().gpu_allocated} "/" {move || t().gpu_allocatable}</span>
                <span class="lbl">{s.totals_gpu}</span>
            </div>
            <div class="total" data-alert=move || (t().pending > 0 || t().blocked > 0).to_string()>
                <span class="num">{move || t().pending}</span><span class="lbl">{s.totals_pending}</span>
                <span class="lbl blocked">{move || (t().blocked > 0).then(|| fill(s.totals_blocked, &[&t().blocked.to_string()]))}</span></div>
            <div class="total" data-alert=move || (t().critical > 0).to_string()>
                <span class="num">{move || t().critical}</span><span class="lbl">{s.totals_critical}</span>
            </div>
            <div class="total"><span class="num">{move || t().warnings}</span><span class="lbl">{s.totals_warnings}</span></div>
        </section>
    }
}

#[component]
pub(super) fn Filters() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let t = boot.lang.t();
    let live = expect_context::<Live>();
    let namespaces = live.view.with_untracked(all_namespaces);
    let ns = boot.ns.clone().unwrap_or_default();
    let label = boot.label.clone().unwrap_or_default();
    let action = format!("{}/", boot.base);
    view! {
        <form class="filters" method="get" action=action>
            {boot.embed.then(|| view! { <input type="hidden" name="embed" value="1"/> })}
            {boot.lang_pinned.then(|| view! { <input type="hidden" name="lang" value=boot.lang.code()/> })}
            <label>{t.filter_namespace}
                <select name="ns">
                    <option value="" selected=ns.is_empty()>{t.filter_all}</option>
                    {namespaces.into_iter().map(|n| { let sel = n == ns; view! { <option value=n.clone() selected=sel>{n.clone()}</option> } }).collect_view()}
                </select>
            </label>
            <label>{t.filter_label}
                <input type="text" name="label" value=label placeholder="key=value"/>
            </label>
            <button type="submit">{t.filter_submit}</button>
        </form>
    }
}

/// `/`: totals and one card per node.
#[component]
pub fn OverviewPage() -> impl IntoView {
    let live = expect_context::<Live>();
    let boot = expect_context::<Boot>();
    let (ns, label) = (boot.ns.clone(), boot.label.clone());
    let t = boot.lang.t();
    let nodes = move || {
        live.view.with(|v| {
            v.nodes.iter().filter(|n| n.matches(ns.as_deref(), label.as_deref())).cloned().collect::<Vec<_>>()
        })
    };
    view! {
        <h1 class="page-title">{t.overview_title}</h1>
        <Totals/>
        {(!boot.kiosk).then(|| view! { <Filters/> })}
        <section class="cards">
            <For each=nodes key=crate::model::fingerprint children=|n| view! { <NodeCard node=n/> }/>
        </section>
    }
}

fn severity_label(s: Severity, t: &T) -> (&'static str, &'static str) {
    match s {
        Severity::Critical => ("sev critical", t.sev_critical),
        Severity::Warning => ("sev warning", t.sev_warning),
        Severity::Info => ("sev info", t.sev_info),
    }
}

/// `/pending`.
#[component]
pub fn PendingPage() -> impl IntoView {
    let live = expect_context::<Live>();
    let boot = expect_context::<Boot>();
    let lang = boot.lang;
    let t = lang.t();
    let kiosk = boot.kiosk;
    let boot_q = boot.keep_query();
    let boot_hist = boot.href("/history");
    let now = live.now;
    // Pods waiting for the scheduler, then workloads a quota keeps from creating pods: for the
    // operator both are a model that is not running.
    let items = move || live.view.with(|v| v.pending.iter().chain(&v.blocked).cloned().collect::<Vec<_>>());
    view! {
        <h1 class="page-title">{t.pending_title}</h1>
        <Show when=move || live.view.with(|v| v.pending.is_empty() && v.blocked.is_empty())>
            <p class="muted big">{t.pending_none}</p>
        </Show>
        <section class="pending-list">
            <For each=items key=crate::model::fingerprint children=move |p| {
                let since = p.pending_since.as_deref().and_then(parse_rfc3339);
                let id = format!("pod-{}-{}", percent_encode(&p.namespace), percent_encode(&p.name));
                let total = p.nodes_total;
                let (state, prefix) = match &p.workload {
                    Some(kind) => (t.pending_blocked, format!("{kind} {}/", p.namespace)),
                    None => (t.pending_waiting, format!("{}/", p.namespace)),
                };
                view! {
                    <article class="card pending" id=id data-pod=p.name.clone() data-blocked=p.workload.is_some().to_string()>
                        <header class="card-head">
                            <h2><span class="ns">{prefix}</span>{p.name.clone()}</h2>
                            <span class="badge warn">{move || fill(state, &[&since.map(|s| elapsed(s, now.get(), lang)).unwrap_or_else(|| "?".into())])}</span>
                        </header>
                        <p class="request">
                            {p.gpu_request.clone().map(|g| view! { <span class="chip want">{g.count} " × " {g.resource}</span> })}
                            {p.memory_request_bytes.map(|m| view! { <span class="chip">{fill(t.pending_memory, &[&bytes(m)])}</span> })}
                            {p.scheduler.clone().map(|s| view! { <span class="chip">{fill(t.pending_scheduler, &[&s])}</span> })}
                            {p.claims.iter().map(|c| view! {
                                <span class=format!("chip claim {}", c.state)>{t.pending_claim} <b class="mono">{c.name.clone()}</b>
                                    {c.device_class.clone().map(|d| view! { " · " <span class="mono">{d}</span> })}
                                    " · " {c.state.clone()}</span>
                            }).collect_view()}
                        </p>
                        <ul class="reasons">
                            {p.reasons.iter().map(|r| view! {
                                <li class="reason"><span class="reason-text" lang=r.verbatim.then_some("en")>{r.reason.say(lang).to_string()}</span>
                                    <span class="reason-nodes">{match (r.nodes, total) {
                                        (Some(n), Some(all)) => {
                                            let of = if all == 1 { t.pending_nodes_of_1 } else { t.pending_nodes_of };
                                            fill(of, &[&n.to_string(), &all.to_string()])
                                        }
                                        (Some(n), None) => fill(if n == 1 { t.pending_nodes_1 } else { t.pending_nodes }, &[&n.to_string()]),
                                        _ => String::new(),
                                    }}</span>
                                </li>
                            }).collect_view()}
                        </ul>
                        {p.problems.iter().map(|d| { let (cls, lbl) = severity_label(d.severity, t); view! {
                            <p class="diagnosis"><span class=cls>{lbl}</span> " " <b class="mono">{d.code.to_string()}</b> " \
                                " {d.message.say(lang).to_string()}</p>
                        }}).collect_view()}
                        {(!kiosk).then(|| p.message.clone().map(|m| view! {
                            <details class="raw"><summary>{t.pending_raw}</summary><pre lang="en">{m}</pre></details>
                        }))}
                        {(!kiosk && p.workload.is_none()).then(|| {
                            let sep = if boot_q.is_empty() { "?" } else { "&" };
                            let href = format!("{}{sep}pod={}", boot_hist, percent_encode(&format!("{}/{}", p.namespace, p.name)));
                            view! { <a class="timeline-link" href=href>{t.pending_history}</a> }
                        })}
                    </article>
                }
            }/>
        </section>
    }
}

/// `/diagnoses`: every diagnosis, most severe first.
#[component]
pub fn DiagnosesPage() -> impl IntoView {
    let live = expect_context::<Live>();
    let boot = expect_context::<Boot>();
    let lang = boot.lang;
    let t = lang.t();
    let now = live.now;
    let items = move || live.view.with(|v| v.diagnoses.clone());
    view! {
        <h1 class="page-title">{t.diagnoses_title}</h1>
        <Show when=move || live.view.with(|v| v.diagnoses.is_empty())>
            <p class="muted big">{t.diagnoses_none}</p>
        </Show>
        <ul class="diagnoses">
            <For each=items key=crate::model::fingerprint children=move |d| {
                let (cls, lbl) = severity_label(d.severity, t);
                let href = d.link.as_deref().map(|l| boot.link(l));
                let obj = match &d.namespace { Some(ns) => format!("{} {ns}/{}", d.kind, d.name), None => format!("{} {}", d.kind, d.name) };
                // Since when it holds (the alert's start too): its age, live; the time on hover.
                let since = d.since.clone();
                let at = since.as_deref().and_then(parse_rfc3339);
                view! {
                    <li class="diagnosis-item" data-code=d.code.to_string()>
                        <span class=cls>{lbl}</span>
                        <b class="mono code">{d.code.to_string()}</b>
                        {match href {
                            Some(h) => Either::Left(view! { <a href=h class="obj">{obj}</a> }),
                            None => Either::Right(view! { <span class="obj">{obj}</span> }),
                        }}
                        {at.map(|s| {
                            let age = move || fill(t.diagnosis_since, &[&elapsed(s, now.get(), lang)]);
                            view! { <time class="since muted" datetime=since.clone() title=since>{age}</time> }
                        })}
                        <p>{d.message.say(lang).to_string()}</p>
                    </li>
                }
            }/>
        </ul>
    }
}

/// Anything else.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let t = boot.lang.t();
    view! { <h1 class="page-title">{t.not_found}</h1><p><a href=boot.href("/")>{t.not_found_back}</a></p> }
}
