//! `/nodes/{name}`: one node whole — its card, the GPU holders, memory by pod, conditions and
//! GPU labels. Server-rendered and refreshed by the browser every 15 s (`<meta refresh>`): the
//! overview's cards are the live view of every node, and this page's tables kept out of the
//! browser bundle weigh 17 KiB gzip there.

use leptos::either::Either;
use leptos::prelude::*;

use crate::model::Sharing;
use crate::time::{human_duration, parse_rfc3339};
use crate::units::bytes;

use super::app::Live;
use super::cards::{MemoryBars, NodeCard};

/// `/nodes/{name}`.
#[component]
pub fn NodePage(name: String) -> impl IntoView {
    let live = expect_context::<Live>();
    let n2 = name.clone();
    let node = move || live.view.with(|v| v.nodes.iter().find(|n| n.name == n2).cloned());
    let now = live.now;
    view! {
        {move || match node() {
            None => Either::Left(view! { <h1 class="page-title">"Node " {name.clone()}</h1><p class="muted">"No such node in the cluster (it may have been removed)."</p> }),
            Some(n) => {
                let holders: Vec<_> = n.gpu_resources.iter().flat_map(|g| g.holders.iter().map(move |h| (g.resource.clone(), h.clone()))).collect();
                Either::Right(view! {
                    <h1 class="page-title">"Node " {n.name.clone()}</h1>
                    <div class="node-page">
                        <NodeCard node=n.clone()/>
                        <section class="panel wide">
                            <h2>"GPU holders"</h2>
                            <table class="table">
                                <thead><tr><th>"Namespace"</th><th>"Pod"</th><th>"Resource"</th><th>"Count"</th><th>"Age"</th><th>"RuntimeClass"</th></tr></thead>
                                <tbody>
                                {holders.into_iter().map(|(r, h)| {
                                    let since = h.since.as_deref().and_then(parse_rfc3339);
                                    view! { <tr>
                                        <td>{h.namespace.clone()}</td><td class="mono">{h.name.clone()}</td><td class="mono">{r}</td><td>{h.count}</td>
                                        <td>{move || since.map(|s| human_duration(now.get() - s)).unwrap_or_else(|| "?".into())}</td>
                                        <td>{h.runtime_class.clone().unwrap_or_else(|| "— none —".into())}</td>
                                    </tr> }
                                }).collect_view()}
                                </tbody>
                            </table>
                        </section>
                        {n.gpu_resources.iter().filter(|g| !g.devices.is_empty()).map(|g| view! {
                            <section class=if g.sharing == Sharing::Dra { "panel wide dra" } else { "panel wide devices" } data-driver=g.resource.clone()>
                                <h2>{if g.sharing == Sharing::Dra { "DRA devices · " } else { "GPUs as the kubelet handed them out · " }} <span class="mono">{g.resource.clone()}</span></h2>
                                <table class="table">
                                    <thead><tr><th>"Device"</th><th>"Type"</th><th>"Product"</th><th>"Memory"</th><th>"UUID"</th><th>"Busy"</th><th>"Memory used"</th><th>"Claims"</th><th>"Pods"</th></tr></thead>
                                    <tbody>
                                    {g.devices.iter().map(|d| view! { <tr class=if d.parent.is_some() { "child" } else { "" } data-device=d.name.clone()>
                                        <td class="mono">{d.parent.clone().map(|_| "└ ")}{d.name.clone()}</td>
                                        <td>{d.type_.clone().unwrap_or_else(|| "—".into())}{d.shared.then_some(" · shared")}</td>
                                        <td>{d.product.clone().unwrap_or_else(|| "—".into())}</td>
                                        <td class="num">{d.memory_bytes.map(bytes).unwrap_or_else(|| "—".into())}</td>
                                        <td class="mono small">{d.uuid.clone().unwrap_or_else(|| "—".into())}</td>
                                        <td class="num busy">{d.busy_percent.map(|b| format!("{b}%")).unwrap_or_else(|| "—".into())}</td>
                                        <td class="num">{d.memory_used_bytes.map(bytes).unwrap_or_else(|| "—".into())}</td>
                                        <td class="mono">{if g.sharing != Sharing::Dra { "—".to_string() } else if d.claims.is_empty() { "free".to_string() } else {
                                            d.claims.iter().map(|c| match &c.share_id {
                                                Some(s) => format!("{}/{} (share {})", c.namespace, c.name, s.chars().take(8).collect::<String>()),
                                                None => format!("{}/{}", c.namespace, c.name),
                                            }).collect::<Vec<_>>().join(", ")
                                        }}</td>
                                        <td class="mono">{if d.holders.is_empty() && !d.claims.is_empty() { "— no pod —".to_string() } else {
                                            d.holders.iter().map(|h| match h.replicas.as_slice() {
                                                [] => format!("{}/{}", h.namespace, h.name),
                                                r => format!("{}/{} (replica {})", h.namespace, h.name, r.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
                                            }).collect::<Vec<_>>().join(", ")
                                        }}</td>
                                    </tr> }).collect_view()}
                                    </tbody>
                                </table>
                            </section>
                        }).collect_view()}
                        <section class="panel">
                            <h2>"Memory by pod"</h2>
                            <table class="table">
                                <thead><tr><th>"Pod"</th><th>"Request"</th><th>"Limit"</th><th>"Used"</th></tr></thead>
                                <tbody>
                                {n.pods.iter().map(|p| view! { <tr>
                                    <td class="mono">{format!("{}/{}", p.namespace, p.name)}</td>
                                    <td class="num">{bytes(p.requested_bytes)}</td>
                                    <td class="num">{p.limit_bytes.map(bytes).unwrap_or_else(|| "unbounded".into())}</td>
                                    <td class="num">{p.used_bytes.map(bytes).unwrap_or_else(|| "unknown".into())}</td>
                                </tr> }).collect_view()}
                                </tbody>
                            </table>
                        </section>
                        <section class="panel">
                            <h2>"Conditions"</h2>
                            <ul class="conds">
                                {n.conditions.iter().map(|c| view! { <li class=if c.bad { "bad" } else { "ok" }>
                                    {if c.bad { "✗ " } else { "✓ " }}<b>{c.type_.clone()}</b>"=" {c.status.clone()} " " <span class="muted">{c.message.clone().unwrap_or_default()}</span>
                                </li> }).collect_view()}
                            </ul>
                            <h2>"GPU labels"</h2>
                            <dl class="labels">
                                {n.gpu_labels.iter().map(|(k, v)| view! { <dt class="mono">{k.clone()}</dt><dd class="mono">{v.clone()}</dd> }).collect_view()}
                            </dl>
                        </section>
                        {n.gpu_resources.is_empty().then(|| view! { <MemoryBars m=n.memory.clone() unified=n.unified_memory/> })}
                    </div>
                })
            }
        }}
    }
}
