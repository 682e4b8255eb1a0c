//! `/nodes/{name}`: one node whole — its card, the GPU holders, memory by pod, conditions and
//! GPU labels. Server-rendered and kept live by `public/refresh.js` (it asks for the page again
//! and swaps the panels when the revision moved): this page's tables kept out of the browser
//! bundle weigh 17 KiB gzip there.

use leptos::either::Either;
use leptos::prelude::*;

use crate::boot::{percent_encode, Boot};
use crate::i18n::{elapsed, fill};
use crate::model::{BoardSplit, GpuResource, NodeView, Sharing};
use crate::time::parse_rfc3339;
use crate::units::{bytes, percent, short};

use super::app::Live;
use super::cards::NodeCard;

/// `/nodes/{name}`.
#[component]
pub fn NodePage(name: String) -> impl IntoView {
    let live = expect_context::<Live>();
    let boot = expect_context::<Boot>();
    let lang = boot.lang;
    let s = lang.s();
    let n2 = name.clone();
    let node = move || live.view.with(|v| v.node(&n2).cloned());
    let now = live.now;
    view! {
        {move || match node() {
            None => Either::Left(view! { <h1 class="page-title">{fill(s.node_title, &[&name])}</h1><p class="muted">{s.node_missing}</p> }),
            Some(n) => {
                let gpu_known = n.pods.iter().any(|p| p.gpu_memory_bytes.is_some());
                Either::Right(view! {
                    <h1 class="page-title">{fill(s.node_title, &[&n.name])}</h1>
                    <div class="node-page" data-revision=live.view.with_untracked(|v| v.revision)>
                        <NodeCard node=n.clone()/>
                        {holders_table(&n, now)}
                        {n.gpu_resources.iter().filter(|g| !g.devices.is_empty()).map(devices_table).collect_view()}
                        {n.memory.split.clone().map(|sp| view! { <BoardSplitBar split=sp/> })}
                        {gpu_known.then(|| {
                            let src = format!("{}/charts/gpumem.svg?range=24h&node={}&lang={}", boot.base, percent_encode(&n.name), lang.code());
                            view! { <figure class="panel chart gpumem"><img src=src alt=fill(s.alt_gpumem, &[&n.name])/></figure> }
                        })}
                        {memory_table(&n, gpu_known)}
                        {conditions_panel(&n)}
                    </div>
                })
            }
        }}
    }
}

/// The pods holding the node's GPU units, with since when (ticking) and their runtime class.
fn holders_table(n: &NodeView, now: RwSignal<i64>) -> impl IntoView {
    let lang = expect_context::<Boot>().lang;
    let s = lang.s();
    let holders: Vec<_> =
        n.gpu_resources.iter().flat_map(|g| g.holders.iter().map(move |h| (g.resource.clone(), h.clone()))).collect();
    view! {
        <section class="panel wide">
            <h2>{s.node_holders}</h2>
            <table class="table">
                <thead><tr>
                    <th>{s.col_namespace}</th><th>{s.col_pod}</th><th>{s.col_resource}</th>
                    <th>{s.col_count}</th><th>{s.col_age}</th><th>{s.col_runtime_class}</th>
                </tr></thead>
                <tbody>
                {holders.into_iter().map(|(r, h)| {
                    let since = h.since.as_deref().and_then(parse_rfc3339);
                    view! { <tr>
                        <td>{h.namespace.clone()}</td><td class="mono">{h.name.clone()}</td><td class="mono">{r}</td><td>{h.count}</td>
                        <td>{move || since.map(|s| elapsed(s, now.get(), lang)).unwrap_or_else(|| "?".into())}</td>
                        <td>{h.runtime_class.clone().unwrap_or_else(|| s.none.into())}</td>
                    </tr> }
                }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// A driver's (or the kubelet's) devices on the node: attributes, use, claims and pods.
fn devices_table(g: &GpuResource) -> impl IntoView {
    let s = expect_context::<Boot>().lang.s();
    view! {
        <section class=if g.sharing == Sharing::Dra { "panel wide dra" } else { "panel wide devices" } data-driver=g.resource.clone()>
            <h2>{if g.sharing == Sharing::Dra { s.node_dra } else { s.node_kubelet }} <span class="mono">{g.resource.clone()}</span></h2>
            <table class="table">
                <thead><tr>
                    <th>{s.col_device}</th><th>{s.col_type}</th><th>{s.col_product}</th><th>{s.col_memory}</th>
                    <th>{s.col_uuid}</th><th>{s.col_busy}</th><th>{s.col_memory_used}</th><th>{s.col_claims}</th>
                    <th>{s.col_pods}</th>
                </tr></thead>
                <tbody>
                {g.devices.iter().map(|d| view! { <tr class=if d.parent.is_some() { "child" } else { "" } data-device=d.name.clone()>
                    <td class="mono">{d.parent.clone().map(|_| "└ ")}{d.name.clone()}</td>
                    <td>{d.type_.clone().unwrap_or_else(|| "—".into())}{d.shared.then_some(s.shared)}</td>
                    <td>{d.product.clone().unwrap_or_else(|| "—".into())}</td>
                    <td class="num">{d.memory_bytes.map(bytes).unwrap_or_else(|| "—".into())}</td>
                    <td class="mono small">{d.uuid.clone().unwrap_or_else(|| "—".into())}</td>
                    <td class="num busy">{d.busy_percent.map(|b| format!("{b}%")).unwrap_or_else(|| "—".into())}</td>
                    <td class="num">{d.memory_used_bytes.map(bytes).unwrap_or_else(|| "—".into())}</td>
                    <td class="mono">{if g.sharing != Sharing::Dra { "—".to_string() } else if d.claims.is_empty() { s.free.to_string() } else {
                        d.claims.iter().map(|c| match &c.share_id {
                            Some(id) => fill(s.share, &[&c.namespace, &c.name, &short(id, 8)]),
                            None => format!("{}/{}", c.namespace, c.name),
                        }).collect::<Vec<_>>().join(", ")
                    }}</td>
                    <td class="mono">{if d.holders.is_empty() && !d.claims.is_empty() { s.no_pod.to_string() } else {
                        d.holders.iter().map(|h| match h.replicas.as_slice() {
                            [] => format!("{}/{}", h.namespace, h.name),
                            r => fill(s.replica, &[&h.namespace, &h.name, &r.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")]),
                        }).collect::<Vec<_>>().join(", ")
                    }}</td>
                </tr> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// Each pod's memory: request, limit, use, and GPU memory where the agent measures it.
fn memory_table(n: &NodeView, gpu_known: bool) -> impl IntoView {
    let s = expect_context::<Boot>().lang.s();
    view! {
        <section class="panel">
            <h2>{s.node_memory}</h2>
            <table class="table">
                <thead><tr><th>{s.col_pod}</th><th>{s.col_request}</th><th>{s.col_limit}</th><th>{s.col_used}</th>
                    {gpu_known.then(|| view! { <th>{s.col_gpu_memory}</th> })}</tr></thead>
                <tbody>
                {n.pods.iter().map(|p| view! { <tr data-pod=format!("{}/{}", p.namespace, p.name)>
                    <td class="mono">{format!("{}/{}", p.namespace, p.name)}</td>
                    <td class="num">{bytes(p.requested_bytes)}</td>
                    <td class="num">{p.limit_bytes.map(bytes).unwrap_or_else(|| s.unbounded.into())}</td>
                    <td class="num">{p.used_bytes.map(bytes).unwrap_or_else(|| s.unknown.into())}</td>
                    {gpu_known.then(|| {
                        let gpu = p.gpu_memory_bytes.map(bytes).unwrap_or_else(|| s.unknown.into());
                        view! { <td class="num gpu-mem">{gpu}</td> }
                    })}
                </tr> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// The node's conditions (with the kubelet's words) and its GPU labels.
fn conditions_panel(n: &NodeView) -> impl IntoView {
    let s = expect_context::<Boot>().lang.s();
    view! {
        <section class="panel">
            <h2>{s.node_conditions}</h2>
            <ul class="conds">
                {n.conditions.iter().map(|c| view! { <li class=if c.bad { "bad" } else { "ok" }>
                    {if c.bad { "✗ " } else { "✓ " }}<b>{c.type_.clone()}</b>"=" {c.status.clone()} " \
                        " <span class="muted" lang="en">{c.message.clone().unwrap_or_default()}</span>
                </li> }).collect_view()}
            </ul>
            <h2>{s.node_labels}</h2>
            <dl class="labels">
                {n.gpu_labels.iter().map(|(k, v)| view! { <dt class="mono">{k.clone()}</dt><dd class="mono">{v.clone()}</dd> }).collect_view()}
            </dl>
        </section>
    }
}

/// A unified board's RAM as one bar by who holds it: the pods' GPU memory, the pods' own
/// memory, the rest in use, free — each segment's width is the view model's share.
#[component]
fn BoardSplitBar(split: BoardSplit) -> impl IntoView {
    let s = expect_context::<Boot>().lang.s();
    let BoardSplit {
        total_bytes,
        gpu_pods_bytes,
        other_pods_bytes,
        system_bytes,
        gpu_outside_bytes,
        free_bytes,
        nvmap_used_bytes,
        permille,
    } = split;
    let parts = [
        ("gpu-pods", s.split_gpu_pods, gpu_pods_bytes, permille[0]),
        ("other-pods", s.split_other_pods, other_pods_bytes.unwrap_or(0), permille[1]),
        ("system", s.split_system, system_bytes, permille[2]),
        ("free", s.split_free, free_bytes, permille[3]),
    ];
    view! {
        <section class="panel wide board-split">
            <h2>{s.node_split} " · " {bytes(total_bytes)}</h2>
            <div class="split-bar" role="img" aria-label=s.node_split>
                {parts.iter().map(|(cls, label, b, p)| view! {
                    <span class=format!("seg {cls}") style=format!("width: {}", percent(*p)) title=format!("{label}: {}", bytes(*b))></span>
                }).collect_view()}
            </div>
            <ul class="split-legend">
                {parts.iter().map(|(cls, label, b, p)| view! {
                    <li data-part=*cls><span class=format!("swatch {cls}")></span>{*label} " " <b>{bytes(*b)}</b> " (" {percent(*p)} ")"</li>
                }).collect_view()}
            </ul>
            {(gpu_outside_bytes > 0).then(|| view! { <p class="note">{fill(s.split_outside, &[&bytes(gpu_outside_bytes)])}</p> })}
            {other_pods_bytes.is_none().then(|| view! { <p class="note">{s.split_no_metrics}</p> })}
            {nvmap_used_bytes.map(|b| view! { <p class="note">{fill(s.split_nvmap, &[&bytes(b)])}</p> })}
        </section>
    }
}
