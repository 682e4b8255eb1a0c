//! `/history`: server-rendered SVG charts of the recorded history, by time range.

use leptos::prelude::*;

use crate::boot::{percent_encode, Boot, Theme};

use super::app::Live;

/// `/history`.
#[component]
pub fn HistoryPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let live = expect_context::<Live>();
    let range = boot.range.clone().unwrap_or_else(|| "24h".into());
    let theme = if boot.theme == Theme::Dark { "&theme=dark" } else { "" };
    let chart = |file: &str, extra: &str| format!("{}/charts/{file}?range={range}{extra}{theme}", boot.base);
    let link = |r: &str| {
        let sep = if boot.keep_query().is_empty() { "?" } else { "&" };
        format!("{}{sep}range={r}", boot.href("/history"))
    };
    let ranges = ["1h", "24h", "7d", "30d"].map(|r| (r, link(r), r == range));
    // The node and resource list is taken once at render: charts are images, not live.
    // Nodes with an agent also get each GPU's measured busy % beside its allocation.
    let nodes: Vec<(String, Vec<String>, bool)> = live.view.with_untracked(|v| {
        v.nodes
            .iter()
            .map(|n| (n.name.clone(), n.gpu_resources.iter().map(|g| g.resource.clone()).collect(), n.agent.is_some()))
            .collect()
    });
    let pod = boot.pod.clone().and_then(|p| p.split_once('/').map(|(a, b)| (a.to_string(), b.to_string())));
    view! {
        <h1 class="page-title">"History"</h1>
        {boot.history_problem.clone().map(|p| view! { <p class="status" data-state="stale" role="alert">"▲ " {p}</p> })}
        <nav class="ranges" aria-label="Time range">
            {ranges.into_iter().map(|(r, href, cur)| view! { <a class=if cur { "range current" } else { "range" } href=href aria-current=if cur { "page" } else { "false" }>{r}</a> }).collect_view()}
        </nav>
        {pod.map(|(ns, name)| {
            let src = chart("pod.svg", &format!("&namespace={}&name={}", percent_encode(&ns), percent_encode(&name)));
            view! { <section class="panel chart"><h2>"Pod " {format!("{ns}/{name}")}</h2><img src=src alt=format!("Pending and running intervals of {ns}/{name}")/></section> }
        })}
        <section class="charts">
            <figure class="panel chart"><img src=chart("pending.svg", "") alt="Number of pending pods over time"/></figure>
            <figure class="panel chart"><img src=chart("waits.svg", "") alt="How long pods waited to be scheduled"/></figure>
            {nodes.into_iter().map(|(n, resources, agent)| {
                let enc = percent_encode(&n);
                view! {
                    {resources.into_iter().map(|r| {
                        let q = format!("&node={enc}&resource={}", percent_encode(&r));
                        let busy = agent.then(|| view! { <figure class="panel chart"><img src=chart("busy.svg", &q) alt=format!("How busy each GPU of {r} on {n} was, as its agent measured")/></figure> });
                        view! { <figure class="panel chart"><img src=chart("gpu.svg", &q) alt=format!("GPU allocation of {r} on {n} over time")/></figure> {busy} }
                    }).collect_view()}
                    <figure class="panel chart"><img src=chart("memory.svg", &format!("&node={enc}")) alt=format!("Memory use, requests and limits on {n} over time")/></figure>
                }
            }).collect_view()}
        </section>
    }
}
