//! The document shell, the root component, and the live state every view reads.

#[cfg(not(feature = "hydrate"))]
use leptos::either::Either;
use leptos::either::EitherOf6;
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use crate::scope;

#[cfg(not(feature = "hydrate"))]
use crate::boot::Theme;
use crate::boot::{Boot, Page};
use crate::model::ClusterView;
use crate::time::parse_rfc3339;

use super::header::Header;
use super::pages::NotFoundPage;
#[cfg(any(not(feature = "hydrate"), feature = "overview-page"))]
use super::pages::OverviewPage;
#[cfg(any(not(feature = "hydrate"), feature = "lists-page"))]
use super::pages::{DiagnosesPage, PendingPage};

/// The browser's connection to gpudash's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conn {
    /// Rendered by the server; not yet connected.
    Initial,
    /// Receiving updates.
    Live,
    /// Lost since this Unix time; the browser reconnects by itself.
    Lost(i64),
}

/// Live state shared by every view.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    /// The current view.
    pub view: RwSignal<ClusterView>,
    /// The clock (Unix seconds); ticks in the browser.
    pub now: RwSignal<i64>,
    /// Stream connection state.
    pub conn: RwSignal<Conn>,
    /// Kiosk rotation: showing the pending page instead of the overview.
    pub rotated: RwSignal<bool>,
}

/// The HTML document (server side).
#[cfg(not(feature = "hydrate"))]
pub fn shell(options: leptos::config::LeptosOptions, boot: Boot) -> impl IntoView {
    let hydrates = boot.hydrates();
    let embedded = if hydrates { boot.to_embedded() } else { String::new() };
    let theme = match boot.theme {
        Theme::Auto => "auto",
        Theme::Light => "light",
        Theme::Dark => "dark",
    };
    let class =
        format!("theme-{theme}{}{}", if boot.kiosk { " kiosk" } else { "" }, if boot.embed { " embed" } else { "" });
    let root = boot.base.clone();
    let css = format!("{}/pkg/gpudash.css", boot.base);
    let t = boot.lang.t();
    let title = match &boot.page {
        Page::Node(n) => format!("{n} · gpudash"),
        Page::Pending => t.title_pending.to_string(),
        Page::Diagnoses => t.title_diagnoses.to_string(),
        Page::History => t.title_history.to_string(),
        Page::Fit => t.title_fit.to_string(),
        Page::Quotas => t.title_quotas.to_string(),
        Page::Reports => t.title_reports.to_string(),
        _ => "gpudash".to_string(),
    };
    let lang = boot.lang.code();
    let nonce = leptos::nonce::use_nonce();
    view! {
        <!DOCTYPE html>
        <html lang=lang class=class>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <title>{title}</title>
                <link rel="stylesheet" href=css/>
                // The server-rendered pages' styles; the live pages' first load goes without.
                {(!hydrates).then(|| view! { <link rel="stylesheet" href=format!("{}/pkg/pages.css", boot.base)/> })}
                <script nonce=nonce data-zone=boot.zone.name.clone() inner_html=crate::time::ZONE_SCRIPT></script>
                // The node page and a large site's paged overview are server-rendered and kept
                // live by a small script of their own (public/refresh.js), not by the bundle.
                {matches!(boot.page, Page::Node(_)).then(|| view! { <link rel="stylesheet" href=format!("{}/node.css", boot.base)/> })}
                {boot.refreshes().then(|| view! { <script src=format!("{}/refresh.js", boot.base) defer></script> })}
                {hydrates.then(|| view! {
                    <script type="text/plain" id="gd-boot" inner_html=embedded></script>
                    <HydrationScripts options root=root/>
                })}
            </head>
            <body>
                <App boot/>
            </body>
        </html>
    }
}

/// The pages that do not hydrate (history: charts are images; fit: a form that posts; quotas:
/// tables of the moment), rendered on the server only.
#[cfg(not(feature = "hydrate"))]
fn server_page(page: &Page, boot: &Boot) -> impl IntoView {
    match (page, boot.sheet.clone()) {
        (Page::Overview, Some(sheet)) => EitherOf6::A(view! { <super::sheet::SheetPage sheet/> }),
        (Page::History, _) => EitherOf6::B(view! { <super::history::HistoryPage/> }),
        (Page::Fit, _) => EitherOf6::C(view! { <super::fit::FitPage/> }),
        (Page::Node(n), _) => EitherOf6::D(view! { <super::node::NodePage name=n.clone()/> }),
        (Page::Reports, _) => EitherOf6::E(view! { <super::reports::ReportsPage/> }),
        _ => EitherOf6::F(match boot.list.clone() {
            Some(list) => Either::Left(view! { <super::list::ListPageView list/> }),
            None => Either::Right(view! { <super::quotas::QuotasPage/> }),
        }),
    }
}

/// The browser never hydrates those pages ([`Boot::hydrates`]), so the bundle leaves them out.
#[cfg(feature = "hydrate")]
fn server_page(_: &Page, _: &Boot) -> impl IntoView {}

// A browser bundle has the live pages it is built for (`frontend`'s features: the whole one
// for the kiosk, whose overview turns into the pending page; one per page for the others, so
// that a page's first load carries only its own views). The server renders them all.

#[cfg(any(not(feature = "hydrate"), feature = "overview-page"))]
fn overview_page() -> impl IntoView {
    view! { <OverviewPage/> }
}

#[cfg(all(feature = "hydrate", not(feature = "overview-page")))]
fn overview_page() -> impl IntoView {}

#[cfg(any(not(feature = "hydrate"), feature = "lists-page"))]
fn pending_page() -> impl IntoView {
    view! { <PendingPage/> }
}

#[cfg(any(not(feature = "hydrate"), feature = "lists-page"))]
fn diagnoses_page() -> impl IntoView {
    view! { <DiagnosesPage/> }
}

#[cfg(all(feature = "hydrate", not(feature = "lists-page")))]
fn pending_page() -> impl IntoView {}

#[cfg(all(feature = "hydrate", not(feature = "lists-page")))]
fn diagnoses_page() -> impl IntoView {}

/// What a renewed scope starts from.
#[derive(Debug, Clone)]
pub struct Seed {
    /// The view.
    pub view: ClusterView,
    /// The clock.
    pub now: i64,
    /// The connection.
    pub conn: Conn,
    /// Kiosk rotation.
    pub rotated: bool,
}

/// The root component; `boot` is the same on the server and in the browser.
#[component]
pub fn App(boot: Boot) -> impl IntoView {
    provide_context(boot.clone());
    let epoch = RwSignal::new(0u64);
    #[cfg(feature = "hydrate")]
    scope::set_epoch(epoch);
    let seed0 = Seed {
        now: parse_rfc3339(&boot.view.generated_at).unwrap_or(0),
        view: boot.view.clone(),
        conn: Conn::Initial,
        rotated: false,
    };
    let page = boot.page.clone();
    let kiosk = boot.kiosk;
    // A large site's overview, and a long pending or diagnoses list, are paged, rendered on the
    // server only.
    let paged = matches!(page, Page::Overview | Page::Pending | Page::Diagnoses) && !boot.hydrates();
    let server_boot = boot.clone();
    let body = move || {
        epoch.track();
        #[cfg(feature = "hydrate")]
        let seed = scope::take_seed().unwrap_or_else(|| seed0.clone());
        #[cfg(not(feature = "hydrate"))]
        let seed = seed0.clone();
        let live = Live {
            view: RwSignal::new(seed.view),
            now: RwSignal::new(seed.now),
            conn: RwSignal::new(seed.conn),
            rotated: RwSignal::new(seed.rotated),
        };
        #[cfg(feature = "hydrate")]
        scope::set_current(live);
        provide_context(live);
        let page = page.clone();
        let server_boot = server_boot.clone();
        let content = move || match &page {
            Page::Overview | Page::Pending | Page::Diagnoses if paged => EitherOf6::E(server_page(&page, &server_boot)),
            Page::Overview if kiosk && live.rotated.get() => EitherOf6::A(pending_page()),
            Page::Overview => EitherOf6::B(overview_page()),
            Page::Pending => EitherOf6::C(pending_page()),
            Page::Diagnoses => EitherOf6::D(diagnoses_page()),
            Page::History | Page::Fit | Page::Quotas | Page::Reports | Page::Node(_) => {
                EitherOf6::E(server_page(&page, &server_boot))
            }
            Page::NotFound => EitherOf6::F(view! { <NotFoundPage/> }),
        };
        view! {
            <Header/>
            <main id="main">{content}</main>
        }
    };
    #[cfg(feature = "hydrate")]
    crate::live::start(&boot);
    view! { <div class="app">{body}</div> }
}
