//! `/` for a site too large for the live overview: the nodes by GPU product, then a page of
//! cards (those needing attention first) with links to the other pages. Server-rendered and
//! kept live by `public/refresh.js`, which also turns a kiosk's pages.

use leptos::either::Either;
use leptos::prelude::*;

use crate::boot::Boot;
use crate::i18n::fill;
use crate::model::Sheet;

use super::app::Live;
use super::cards::NodeCard;
use super::pages::{Filters, Totals};

/// The paged overview.
#[component]
pub fn SheetPage(sheet: Sheet) -> impl IntoView {
    let boot = expect_context::<Boot>();
    let live = expect_context::<Live>();
    let (s, t) = (boot.lang.s(), boot.lang.t());
    let revision = live.view.with_untracked(|v| v.revision);
    let rotate = if boot.kiosk { boot.rotate_seconds } else { 0 };
    let group = sheet.group.clone();
    let turn = boot.overview_link(group.as_deref(), sheet.turn);
    let summary = fill(
        s.sheet_summary,
        &[&sheet.matching.to_string(), &sheet.attention.to_string(), &sheet.page.to_string(), &sheet.pages.to_string()],
    );
    let all = (group.is_some() && !boot.kiosk).then(|| boot.overview_link(None, 1));
    let rows = sheet
        .groups
        .iter()
        .map(|g| {
            let name = g.product.clone().unwrap_or_else(|| s.sheet_no_gpu.to_string());
            let current = group.as_deref() == Some(g.key.as_str());
            let href = boot.overview_link(Some(&g.key), 1);
            // A kiosk has no links to follow.
            let product =
                if boot.kiosk { Either::Left(name) } else { Either::Right(view! { <a href=href>{name.clone()}</a> }) };
            view! {
                <tr class:current=current>
                    <td>{product}</td>
                    <td class="num">{format!("{} ({})", g.nodes, g.ready)}</td>
                    <td class="num">{g.attention}</td>
                    <td class="num">{format!("{} / {}", g.gpu_allocated, g.gpu_allocatable)}</td>
                    <td class="num">{g.pending_pods}</td>
                </tr>
            }
        })
        .collect_view();
    let pager = (!boot.kiosk && (sheet.prev.is_some() || sheet.next.is_some())).then(|| {
        let prev =
            sheet.prev.map(|p| view! { <a rel="prev" href=boot.overview_link(group.as_deref(), p)>{s.sheet_prev}</a> });
        let next =
            sheet.next.map(|p| view! { <a rel="next" href=boot.overview_link(group.as_deref(), p)>{s.sheet_next}</a> });
        view! { <nav class="pager" aria-label=s.sheet_pages>{prev}{next}</nav> }
    });
    view! {
        <h1 class="page-title">{t.overview_title}</h1>
        {(!boot.kiosk).then(|| view! { <Filters/> })}
        <div class="sheet" data-revision=revision data-rotate=rotate data-next=turn>
            <Totals/>
            <p class="sheet-summary">{summary}</p>
            <section class="panel groups">
                <h2>{s.sheet_groups}</h2>
                <div class="table-wrap">
                    <table class="table">
                        <thead><tr>
                            <th>{s.col_gpu}</th>
                            <th class="num">{s.col_nodes_ready}</th>
                            <th class="num">{s.col_attention}</th>
                            <th class="num">{s.col_gpu_held}</th>
                            <th class="num">{s.col_pending}</th>
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                {all.map(|href| view! { <p><a href=href>{s.sheet_group_all}</a></p> })}
            </section>
            <section class="cards">
                {sheet.nodes.into_iter().map(|n| view! { <NodeCard node=n/> }).collect_view()}
            </section>
            {pager}
        </div>
    }
}
