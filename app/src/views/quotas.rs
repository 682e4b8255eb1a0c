//! `/quotas`: each namespace's GPU quotas, used against hard as bars, with the pods that use
//! them, the cluster's free units the namespace could use, and charts of quota use over time.
//! Server-rendered (a table of the moment; the charts are images), filterable by namespace.

use leptos::prelude::*;

use crate::boot::{percent_encode, Boot, Theme};
use crate::i18n::fill;
use crate::model::QuotaView;

use super::app::Live;

/// `/quotas`.
#[component]
pub fn QuotasPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let live = expect_context::<Live>();
    let s = boot.lang.s();
    let t = boot.lang.t();
    let lang = boot.lang.code();
    let ns = boot.ns.clone();
    let (quotas, blocked): (Vec<QuotaView>, u32) = live.view.with_untracked(|v| {
        (v.quotas.iter().filter(|q| q.in_namespace(ns.as_deref())).cloned().collect(), v.totals.blocked)
    });
    let mut namespaces: Vec<String> =
        live.view.with_untracked(|v| v.quotas.iter().map(|q| q.namespace.clone()).collect());
    namespaces.dedup();
    let theme = if boot.theme == Theme::Dark { "&theme=dark" } else { "" };
    let base = boot.base.clone();
    let chart = move |q: &QuotaView| {
        format!(
            "{}/charts/quota.svg?namespace={}&quota={}&resource={}&range=24h{theme}&lang={lang}",
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
        <h1 class="page-title">{s.quotas_title}</h1>
        <form class="filters" method="get" action=action>
            {boot.lang_pinned.then(|| view! { <input type="hidden" name="lang" value=lang/> })}
            <label>{t.filter_namespace}
                <select name="ns">
                    <option value="" selected=selected.is_empty()>{t.filter_all}</option>
                    {namespaces.into_iter().map(|n| {
                        let sel = n == selected;
                        view! { <option value=n.clone() selected=sel>{n.clone()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <button type="submit">{t.filter_submit}</button>
        </form>
        {(blocked > 0).then(|| view! {
            <p class="warn"><a href=pending>{fill(s.quotas_blocked, &[&blocked.to_string()])}</a></p>
        })}
        {quotas.is_empty().then(|| view! { <p class="muted big">{s.quotas_none}</p> })}
        <section class="quota-list">
            {quotas.into_iter().map(|q| {
                let width = format!("width: {}", crate::units::percent(q.used_permille));
                let src = chart(&q);
                let free = match (q.cluster_free, q.device_class) {
                    (Some(f), _) => fill(s.quotas_free, &[&f.to_string(), &q.gpu_resource]),
                    (None, true) => fill(s.quotas_class, &[&q.gpu_resource]),
                    (None, false) => String::new(),
                };
                let pods = if q.pods.is_empty() { s.quotas_no_pod.to_string() } else { q.pods.join(", ") };
                view! {
                    <article class="card quota" data-namespace=q.namespace.clone() data-full=q.full.to_string()>
                        <header class="card-head">
                            <h2><span class="ns">{q.namespace.clone()} "/"</span>{q.name.clone()}</h2>
                            {q.full.then(|| view! { <span class="badge bad">{s.quotas_full}</span> })}
                            {q.scopes.iter().map(|s| view! { <span class="badge plain">{s.clone()}</span> }).collect_view()}
                        </header>
                        <div class="mem-row">
                            <span class="mem-label mono">{q.resource.clone()}</span>
                            <span class="mem-track"><span class="mem-fill" style=width></span></span>
                            <span class="mem-value">{fill(s.quotas_used, &[&q.used.to_string(), &q.hard.to_string()])}</span>
                        </div>
                        <p class="note">{free} " · " {pods}</p>
                        <img class="chart" src=src alt=fill(s.quotas_alt, &[&q.resource]) width="900" height="320" loading="lazy"/>
                    </article>
                }
            }).collect_view()}
        </section>
    }
}
