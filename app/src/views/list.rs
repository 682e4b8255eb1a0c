//! `/pending` and `/diagnoses` of a site with long lists: a page of items (the most severe and
//! the longest waiting first), how many there are in all, filters by namespace and diagnosis
//! code, and links to the other pages. Server-rendered and kept live by `public/refresh.js`,
//! which also turns a kiosk's pages.

use leptos::either::Either;
use leptos::prelude::*;

use crate::boot::{Boot, Page};
use crate::i18n::fill;
use crate::model::ListPage;

use super::app::Live;
use super::pages::{DiagnosesPage, PendingPage};

/// The paged pending or diagnoses page; its items are the view's.
#[component]
pub fn ListPageView(list: ListPage) -> impl IntoView {
    let boot = expect_context::<Boot>();
    let live = expect_context::<Live>();
    let (s, t) = (boot.lang.s(), boot.lang.t());
    let revision = live.view.with_untracked(|v| v.revision);
    let rotate = if boot.kiosk { boot.rotate_seconds } else { 0 };
    let code = list.code.clone();
    let turn = boot.list_link(code.as_deref(), list.turn);
    let diagnoses = boot.page == Page::Diagnoses;
    let mut summary = fill(
        s.list_summary,
        &[
            &list.first.to_string(),
            &list.last.to_string(),
            &list.matching.to_string(),
            &list.page.to_string(),
            &list.pages.to_string(),
        ],
    );
    if list.matching != list.total {
        summary.push_str(&fill(s.list_filtered, &[&list.total.to_string()]));
    }
    let filters = (!boot.kiosk).then(|| {
        let action = format!("{}{}", boot.base, boot.page.path());
        let ns = boot.ns.clone().unwrap_or_default();
        let options = list
            .codes
            .iter()
            .map(|(c, n)| {
                let selected = code.as_deref() == Some(c.as_str());
                view! { <option value=c.clone() selected=selected>{format!("{c} ({n})")}</option> }
            })
            .collect_view();
        view! {
            <form class="filters" method="get" action=action>
                {boot.embed.then(|| view! { <input type="hidden" name="embed" value="1"/> })}
                {boot.lang_pinned.then(|| view! { <input type="hidden" name="lang" value=boot.lang.code()/> })}
                <label>{t.filter_namespace}<input type="text" name="ns" value=ns maxlength="63"/></label>
                <label>{s.list_code}
                    <select name="code">
                        <option value="" selected=code.is_none()>{t.filter_all}</option>
                        {options}
                    </select>
                </label>
                <button type="submit">{t.filter_submit}</button>
            </form>
        }
    });
    let pager = (!boot.kiosk && (list.prev.is_some() || list.next.is_some())).then(|| {
        let prev =
            list.prev.map(|p| view! { <a rel="prev" href=boot.list_link(code.as_deref(), p)>{s.sheet_prev}</a> });
        let next =
            list.next.map(|p| view! { <a rel="next" href=boot.list_link(code.as_deref(), p)>{s.sheet_next}</a> });
        view! { <nav class="pager" aria-label=s.list_pages>{prev}{next}</nav> }
    });
    // The live pages' own views, whole (their title first on screen: `.listed` in pages.css);
    // the bundle carries nothing of this page.
    let items =
        if diagnoses { Either::Left(view! { <DiagnosesPage/> }) } else { Either::Right(view! { <PendingPage/> }) };
    view! {
        <div class="sheet listed" data-revision=revision data-rotate=rotate data-next=turn>
            <p class="sheet-summary">{summary}</p>
            {filters}
            {items}
            {pager}
        </div>
    }
}
