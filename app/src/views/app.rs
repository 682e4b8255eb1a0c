//! The document shell, the root component, and the live state every view reads.

use leptos::either::EitherOf8;
use leptos::prelude::*;

use crate::boot::{Boot, Page, Theme};
use crate::model::ClusterView;
use crate::time::parse_rfc3339;

use super::header::Header;
use super::pages::{DiagnosesPage, NodePage, NotFoundPage, OverviewPage, PendingPage};

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
pub fn shell(options: leptos::config::LeptosOptions, boot: Boot) -> impl IntoView {
    let hydrates = boot.page.hydrates();
    let json = if hydrates { boot.to_embedded_json() } else { String::new() };
    let theme = match boot.theme {
        Theme::Auto => "auto",
        Theme::Light => "light",
        Theme::Dark => "dark",
    };
    let class =
        format!("theme-{theme}{}{}", if boot.kiosk { " kiosk" } else { "" }, if boot.embed { " embed" } else { "" });
    let root = boot.base.clone();
    let css = format!("{}/pkg/gpudash.css", boot.base);
    let title = match &boot.page {
        Page::Node(n) => format!("{n} · gpudash"),
        Page::Pending => "Pending pods · gpudash".to_string(),
        Page::Diagnoses => "Diagnoses · gpudash".to_string(),
        Page::History => "History · gpudash".to_string(),
        Page::Fit => "Will it fit? · gpudash".to_string(),
        _ => "gpudash".to_string(),
    };
    view! {
        <!DOCTYPE html>
        <html lang="en" class=class>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <title>{title}</title>
                <link rel="stylesheet" href=css/>
                {hydrates.then(|| view! {
                    <script type="application/json" id="gd-boot" inner_html=json></script>
                    <HydrationScripts options root=root/>
                })}
            </head>
            <body>
                <App boot/>
            </body>
        </html>
    }
}

/// `/history` (server only: charts are images, the page does not hydrate).
#[cfg(not(feature = "hydrate"))]
fn history_page() -> impl IntoView {
    view! { <super::history::HistoryPage/> }
}

/// The browser never hydrates `/history` ([`Page::hydrates`]), so the bundle leaves it out.
#[cfg(feature = "hydrate")]
fn history_page() -> impl IntoView {}

/// `/fit` (server only: a form that posts; the page does not hydrate).
#[cfg(not(feature = "hydrate"))]
fn fit_page() -> impl IntoView {
    view! { <super::fit::FitPage/> }
}

/// The browser never hydrates `/fit` ([`Page::hydrates`]), so the bundle leaves it out.
#[cfg(feature = "hydrate")]
fn fit_page() -> impl IntoView {}

/// The root component; `boot` is the same on the server and in the browser.
#[component]
pub fn App(boot: Boot) -> impl IntoView {
    let now0 = parse_rfc3339(&boot.view.generated_at).unwrap_or(0);
    let live = Live {
        view: RwSignal::new(boot.view.clone()),
        now: RwSignal::new(now0),
        conn: RwSignal::new(Conn::Initial),
        rotated: RwSignal::new(false),
    };
    provide_context(live);
    provide_context(boot.clone());
    #[cfg(feature = "hydrate")]
    crate::live::start(&boot, live);
    let page = boot.page.clone();
    let kiosk = boot.kiosk;
    let content = move || match &page {
        Page::Overview if kiosk && live.rotated.get() => EitherOf8::A(view! { <PendingPage/> }),
        Page::Overview => EitherOf8::B(view! { <OverviewPage/> }),
        Page::Node(n) => EitherOf8::C(view! { <NodePage name=n.clone()/> }),
        Page::Pending => EitherOf8::D(view! { <PendingPage/> }),
        Page::Diagnoses => EitherOf8::E(view! { <DiagnosesPage/> }),
        Page::History => EitherOf8::F(history_page()),
        Page::Fit => EitherOf8::G(fit_page()),
        Page::NotFound => EitherOf8::H(view! { <NotFoundPage/> }),
    };
    view! {
        <div class="app">
            <Header/>
            <main id="main">{content}</main>
        </div>
    }
}
