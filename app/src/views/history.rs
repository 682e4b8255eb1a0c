//! `/history`: server-rendered SVG charts of the recorded history, by time range.

use leptos::prelude::*;

use crate::boot::{percent_encode, Boot, Theme};
use crate::i18n::fill;

use super::app::Live;

/// `/history`.
#[component]
pub fn HistoryPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let live = expect_context::<Live>();
    let s = boot.lang.s();
    let range = boot.range.unwrap_or_default();
    let theme = if boot.theme == Theme::Dark { "&theme=dark" } else { "" };
    let lang = boot.lang.code();
    let chart =
        |file: &str, extra: &str| format!("{}/charts/{file}?range={range}{extra}{theme}&lang={lang}", boot.base);
    let link = |r: &str| {
        let sep = if boot.keep_query().is_empty() { "?" } else { "&" };
        format!("{}{sep}range={r}", boot.href("/history"))
    };
    let ranges = crate::model::Range::ALL.map(|r| (r.name(), link(r.name()), r == range));
    // The node and resource list is taken once at render: charts are images, not live.
    // Nodes with an agent also get each GPU's measured busy % beside its allocation.
    let nodes: Vec<(String, Vec<String>, bool)> = live.view.with_untracked(|v| {
        v.nodes
            .iter()
            .map(|n| (n.name.clone(), n.gpu_resources.iter().map(|g| g.resource.clone()).collect(), n.agent.is_some()))
            .collect()
    });
    let pod = boot.pod.clone();
    view! {
        <h1 class="page-title">{s.history_title}</h1>
        {boot.history_problem.clone().map(|p| view! { <p class="status" data-state="stale" role="alert">"▲ " {p}</p> })}
        <nav class="ranges" aria-label=s.history_ranges>
            {ranges.into_iter().map(|(r, href, cur)| view! { <a class=if cur { "range \
                current" } else { "range" } href=href aria-current=if cur { "page" } else { "false" }>{r}</a> }).collect_view()}
        </nav>
        {pod.map(|(ns, name)| {
            let src = chart("pod.svg", &format!("&namespace={}&name={}", percent_encode(&ns), percent_encode(&name)));
            let pod = format!("{ns}/{name}");
            view! { <section class="panel chart"><h2>{fill(s.history_pod, &[&pod])}</h2><img src=src alt=fill(s.alt_pod, &[&pod])/></section> }
        })}
        <section class="charts">
            <figure class="panel chart"><img src=chart("pending.svg", "") alt=s.alt_pending/></figure>
            <figure class="panel chart"><img src=chart("waits.svg", "") alt=s.alt_waits/></figure>
            {nodes.into_iter().map(|(n, resources, agent)| {
                let enc = percent_encode(&n);
                view! {
                    {resources.into_iter().map(|r| {
                        let q = format!("&node={enc}&resource={}", percent_encode(&r));
                        let busy = agent.then(|| view! { <figure class="panel \
                            chart"><img src=chart("busy.svg", &q) alt=fill(s.alt_busy, &[&r, &n])/></figure> });
                        view! { <figure class="panel chart"><img src=chart("gpu.svg", &q) alt=fill(s.alt_gpu, &[&r, &n])/></figure> {busy} }
                    }).collect_view()}
                    <figure class="panel chart"><img src=chart("memory.svg", &format!("&node={enc}")) alt=fill(s.alt_memory, &[&n])/></figure>
                }
            }).collect_view()}
        </section>
    }
}
