//! The fleet page (`gpudash fleet`) and its site cards, rendered on the server — the fleet has
//! no browser bundle: `fleet.js` swaps in the cards its stream sends, rendered by [`card`].
//! They render fields of [`FleetView`]; the states, order and totals are the fleet's
//! (`gpudash_fleet::view`). `?kiosk=1` (large, dark, no links) and `?embed=1` (no page chrome)
//! as on a site.

use leptos::prelude::*;

use crate::i18n::{fill, Lang};
use crate::model::fleet::{FleetView, SiteState, SiteView};
use crate::time::Zone;

/// How the page is shown.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The fleet's path prefix.
    pub base: String,
    /// Large, dark, without links.
    pub kiosk: bool,
    /// Without the page's chrome (inside a portal).
    pub embed: bool,
    /// The charts' range (`24h`).
    pub range: &'static str,
    /// The reader's language.
    pub lang: Lang,
    /// The reader's zone.
    pub zone: Zone,
}

/// A moment in the reader's zone, with the zone's name (`22:34:21 JST`).
fn clock(rfc3339: &str, zone: &Zone) -> String {
    crate::time::parse_rfc3339(rfc3339).map_or_else(|| rfc3339.to_string(), |t| zone.clock(t))
}

/// One site's card.
#[component]
fn SiteCard(site: SiteView, kiosk: bool, lang: Lang, zone: Zone) -> impl IntoView {
    let t = lang.s();
    let (class, badge, state) = match (site.state, site.stale_since.as_deref()) {
        (SiteState::Live, _) => ("badge ok", t.fleet_live.to_string(), "live"),
        (SiteState::Stale, Some(at)) => ("badge warn", fill(t.fleet_stale_since, &[&clock(at, &zone)]), "stale"),
        (SiteState::Stale, None) => ("badge warn", t.fleet_stale.to_string(), "stale"),
        (SiteState::Unreachable, Some(at)) => {
            ("badge bad", fill(t.fleet_unreachable_since, &[&clock(at, &zone)]), "unreachable")
        }
        (SiteState::Unreachable, None) => ("badge bad", t.fleet_unreachable.to_string(), "unreachable"),
    };
    let title = if kiosk {
        site.name.clone().into_any()
    } else {
        view! { <a href=format!("{}/", site.url)>{site.name.clone()}</a> }.into_any()
    };
    let totals = match &site.totals {
        None => view! { <p class="muted">{t.fleet_no_view}</p> }.into_any(),
        Some(x) => {
            let families = site.families.iter().map(|f| {
                let held = format!("{}/{}", f.held, f.total);
                view! { <li><span class="mono">{f.family.clone()}</span>" "<b>{held}</b>" "{t.fleet_held}</li> }
            });
            view! {
                <dl class="site-totals">
                    <div><dt>{t.fleet_nodes_ready}</dt><dd class="nodes">{format!("{}/{}", x.nodes_ready, x.nodes)}</dd></div>
                    <div><dt>{t.fleet_gpu_held}</dt><dd class="gpus">{format!("{}/{}", x.gpu_allocated, x.gpu_capacity)}</dd></div>
                    <div><dt>{t.fleet_pending}</dt><dd class="pending">{x.pending.to_string()}</dd></div>
                    <div><dt>{t.fleet_critical}</dt><dd class="critical">{x.critical.to_string()}</dd></div>
                    <div><dt>{t.fleet_warnings}</dt><dd class="warning">{x.warning.to_string()}</dd></div>
                </dl>
                <ul class="families">{families.collect_view()}</ul>
            }
            .into_any()
        }
    };
    // The site's own error text (a connection's causes) is the machine's words, marked as English.
    let error = match (&site.error, site.state) {
        (Some(e), SiteState::Stale | SiteState::Unreachable) => {
            Some(view! { <p class="note" lang="en">{e.clone()}</p> })
        }
        _ => None,
    };
    let cut = site.cut.clone().map(|c| view! { <p class="note" lang="en">{c}</p> });
    view! {
        <article class="card site" data-site=site.name.clone() data-state=state data-revision=site.revision.map(|r| r.to_string()).unwrap_or_default()>
            <header class="card-head"><h2>{title}</h2><span class=class>{badge}</span></header>
            {totals}
            {error}
            {cut}
        </article>
    }
}

/// Renders `view` to HTML outside any reactive runtime of a page.
fn html(view: impl FnOnce() -> AnyView) -> String {
    Owner::new().with(|| view().to_html())
}

/// One site's card as HTML (what the stream sends for a card that changed).
pub fn card(site: &SiteView, kiosk: bool, lang: Lang, zone: &Zone) -> String {
    let (site, zone) = (site.clone(), zone.clone());
    html(move || view! { <SiteCard site kiosk lang zone/> }.into_any())
}

/// Every card, in the view's order.
pub fn cards(v: &FleetView, kiosk: bool, lang: Lang, zone: &Zone) -> String {
    v.sites.iter().map(|s| card(s, kiosk, lang, zone)).collect()
}

/// The whole page. `title` and `status` (the line above the cards) are the fleet's words for
/// its counts.
pub fn page(v: &FleetView, shown: &Shown, title: &str, status: &str) -> String {
    let Shown { base, kiosk, embed, range, lang, zone } = shown.clone();
    let t = lang.s();
    let class = match (kiosk, embed) {
        (true, _) => "kiosk dark",
        (false, true) => "embed",
        _ => "",
    };
    let header = (!kiosk && !embed).then(|| {
        view! {
            <header class="top"><nav class="nav">
                <a class="brand" href=format!("{base}/")>{t.fleet_brand}</a>
                <a class="nav-link" href=format!("{base}/api/v1/fleet")>"JSON"</a>
                <a class="nav-link" href=format!("{base}/metrics")>{t.fleet_metrics}</a>
            </nav></header>
        }
    });
    // The kiosk shows the cards alone; elsewhere each site's history follows them.
    let charts = (!kiosk && !v.sites.is_empty()).then(|| {
        let figures = v.sites.iter().map(|s| {
            let src = format!("{base}/charts/site.svg?site={}&range={range}&lang={}", crate::boot::percent_encode(&s.name), lang.code());
            view! { <figure class="panel chart"><img src=src alt=fill(t.fleet_chart_alt, &[&s.name])/></figure> }
        });
        view! { <h2 class="page-title">{t.fleet_history}</h2><section class="charts">{figures.collect_view()}</section> }
    });
    let title = title.to_string();
    let cards =
        v.sites.iter().map(|s| view! { <SiteCard site=s.clone() kiosk lang zone=zone.clone()/> }).collect_view();
    let status = status.to_string();
    let doc = html(move || {
        view! {
            <!DOCTYPE html>
            <html lang=lang.code() class=class>
                <head>
                    <meta charset="utf-8"/>
                    <meta name="viewport" content="width=device-width, initial-scale=1"/>
                    <title>{t.fleet_brand}</title>
                    <link rel="stylesheet" href=format!("{base}/pkg/gpudash.css")/>
                    <link rel="stylesheet" href=format!("{base}/pkg/pages.css")/>
                    <script src=format!("{base}/zone.js") data-zone=zone.name.clone()></script>
                    <script src=format!("{base}/fleet.js") defer data-base=base.clone() data-kiosk=kiosk.to_string() data-lang=lang.code()></script>
                </head>
                <body><div class="app">
                    {header}
                    <main>
                        <h1 class="page-title">{title}</h1>
                        <p class="status" id="fleet-status">{status}</p>
                        <section id="sites" class="cards">{cards}</section>
                        {charts}
                    </main>
                </div></body>
            </html>
        }
        .into_any()
    });
    doc
}
