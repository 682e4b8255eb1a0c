//! `/quotas`: each namespace's GPU quotas, used against hard as bars, with the pods that use
//! them, the cluster's free units the namespace could use, and charts of quota use over time.
//! Server-rendered (a table of the moment; the charts are images), filterable by namespace.

use leptos::prelude::*;

use crate::boot::{percent_encode, Boot, Theme};
use crate::model::QuotaView;

use super::app::Live;

/// `/quotas`.
#[component]
pub fn QuotasPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let live = expect_context::<Live>();
    let ns = boot.ns.clone();
    let (quotas, blocked): (Vec<QuotaView>, u32) = live.view.with_untracked(|v| {
        (
            v.quotas.iter().filter(|q| ns.as_deref().is_none_or(|n| q.namespace == n)).cloned().collect(),
            v.totals.blocked,
        )
    });
    let mut namespaces: Vec<String> =
        live.view.with_untracked(|v| v.quotas.iter().map(|q| q.namespace.clone()).collect());
    namespaces.dedup();
    let theme = if boot.theme == Theme::Dark { "&theme=dark" } else { "" };
    let base = boot.base.clone();
    let chart = move |q: &QuotaView| {
        format!(
            "{}/charts/quota.svg?namespace={}&quota={}&resource={}&range=24h{theme}",
            base,
            percent_encode(&q.namespace),
            percent_encode(&q.name),
            percent_encode(&q.resource)
        )
    };
    let selected = ns.clone().unwrap_or_default();
    let action = format!("{}/quotas", boot.base);
    let pending = boot.href("/pending");
    view! {
        <h1 class="page-title">"GPU quotas"</h1>
        <form class="filters" method="get" action=action>
            <label>"Namespace "
                <select name="ns">
                    <option value="" selected=selected.is_empty()>"all"</option>
                    {namespaces.into_iter().map(|n| { let sel = n == selected; view! { <option value=n.clone() selected=sel>{n.clone()}</option> } }).collect_view()}
                </select>
            </label>
            <button type="submit">"Filter"</button>
        </form>
        {(blocked > 0).then(|| view! {
            <p class="warn"><a href=pending>{blocked} " workload(s) cannot create their pods: a quota refuses them"</a></p>
        })}
        {quotas.is_empty().then(|| view! { <p class="muted big">"No ResourceQuota limits a GPU resource here."</p> })}
        <section class="quota-list">
            {quotas.into_iter().map(|q| {
                let width = format!("width: {}", super::cards::percent(q.used_permille));
                let src = chart(&q);
                let free = match (q.cluster_free, q.device_class) {
                    (Some(f), _) => format!("{f} free {} in the cluster", q.gpu_resource),
                    (None, true) => format!("DeviceClass {}", q.gpu_resource),
                    (None, false) => String::new(),
                };
                let pods = if q.pods.is_empty() { "no pod holds it now".to_string() } else { q.pods.join(", ") };
                view! {
                    <article class="card quota" data-namespace=q.namespace.clone() data-full=q.full.to_string()>
                        <header class="card-head">
                            <h2><span class="ns">{q.namespace.clone()} "/"</span>{q.name.clone()}</h2>
                            {q.full.then(|| view! { <span class="badge bad">"✖ full"</span> })}
                            {q.scopes.iter().map(|s| view! { <span class="badge plain">{s.clone()}</span> }).collect_view()}
                        </header>
                        <div class="mem-row">
                            <span class="mem-label mono">{q.resource.clone()}</span>
                            <span class="mem-track"><span class="mem-fill" style=width></span></span>
                            <span class="mem-value">{q.used} " / " {q.hard} " used"</span>
                        </div>
                        <p class="note">{free} " · " {pods}</p>
                        <img class="chart" src=src alt=format!("{} use over 24 h", q.resource) width="900" height="320" loading="lazy"/>
                    </article>
                }
            }).collect_view()}
        </section>
    }
}
