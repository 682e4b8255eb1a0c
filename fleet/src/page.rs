//! The fleet page, rendered on the server from the FleetView (it renders fields; the state,
//! order and totals are decided in `view.rs`): a card per site linking to the site's own
//! gpudash, history charts per site; `fleet.js` swaps in new cards as the stream sends them.
//! `?kiosk=1` (large, dark, no links) and `?embed=1` (no page chrome) as on a site.

use app::i18n::{fill, Lang};
use app::time::Zone;

use crate::view::{FleetView, SiteState, SiteView};

/// HTML-escapes text for element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A moment in the reader's zone, with the zone's name (`22:34:21 JST`).
fn clock(rfc3339: &str, zone: &Zone) -> String {
    app::time::parse_rfc3339(rfc3339).map_or_else(|| rfc3339.to_string(), |t| zone.clock(t))
}

/// One site's card, in `lang`, its times in `zone`.
pub fn card(s: &SiteView, kiosk: bool, lang: Lang, zone: &Zone) -> String {
    let t = lang.s();
    let (cls, badge) = match (s.state, s.stale_since.as_deref()) {
        (SiteState::Live, _) => ("badge ok", t.fleet_live.to_string()),
        (SiteState::Stale, Some(at)) => ("badge warn", fill(t.fleet_stale_since, &[&clock(at, zone)])),
        (SiteState::Stale, None) => ("badge warn", t.fleet_stale.to_string()),
        (SiteState::Unreachable, Some(at)) => ("badge bad", fill(t.fleet_unreachable_since, &[&clock(at, zone)])),
        (SiteState::Unreachable, None) => ("badge bad", t.fleet_unreachable.to_string()),
    };
    let state = match s.state {
        SiteState::Live => "live",
        SiteState::Stale => "stale",
        SiteState::Unreachable => "unreachable",
    };
    let title = if kiosk { esc(&s.name) } else { format!(r#"<a href="{}/">{}</a>"#, esc(&s.url), esc(&s.name)) };
    let body = match &s.totals {
        None => format!(r#"<p class="muted">{}</p>"#, t.fleet_no_view),
        Some(x) => {
            let families: String = s
                .families
                .iter()
                .map(|f| {
                    format!(
                        r#"<li><span class="mono">{}</span> <b>{}/{}</b> {}</li>"#,
                        esc(&f.family),
                        f.held,
                        f.total,
                        t.fleet_held
                    )
                })
                .collect();
            format!(
                concat!(
                    r#"<dl class="site-totals"><div><dt>{}</dt><dd class="nodes">{}/{}</dd></div>"#,
                    r#"<div><dt>{}</dt><dd class="gpus">{}/{}</dd></div><div><dt>{}</dt><dd class="pending">{}</dd></div>"#,
                    r#"<div><dt>{}</dt><dd class="critical">{}</dd></div><div><dt>{}</dt><dd class="warning">{}</dd></div>"#,
                    r#"</dl><ul class="families">{families}</ul>"#
                ),
                t.fleet_nodes_ready,
                x.nodes_ready,
                x.nodes,
                t.fleet_gpu_held,
                x.gpu_allocated,
                x.gpu_capacity,
                t.fleet_pending,
                x.pending,
                t.fleet_critical,
                x.critical,
                t.fleet_warnings,
                x.warning,
                families = families,
            )
        }
    };
    // The site's own error text (a connection's causes) is the machine's words, marked as English.
    let error = match (&s.error, s.state) {
        (Some(e), SiteState::Stale | SiteState::Unreachable) => format!(r#"<p class="note" lang="en">{}</p>"#, esc(e)),
        _ => String::new(),
    };
    format!(
        r#"<article class="card site" data-site="{}" data-state="{state}" data-revision="{}"><header class="card-head"><h2>{title}</h2><span class="{cls}">{}</span></header>{body}{error}</article>"#,
        esc(&s.name),
        s.revision.map(|r| r.to_string()).unwrap_or_default(),
        esc(&badge),
    )
}

/// The line above the cards: how many sites are in each state, and as of when.
pub fn status_line(v: &FleetView, lang: Lang, zone: &Zone) -> String {
    let n = |s: SiteState| v.sites.iter().filter(|x| x.state == s).count().to_string();
    fill(
        lang.s().fleet_status,
        &[&n(SiteState::Live), &n(SiteState::Stale), &n(SiteState::Unreachable), &clock(&v.generated_at, zone)],
    )
}

/// The cards alone (what the stream sends).
pub fn cards(v: &FleetView, kiosk: bool, lang: Lang, zone: &Zone) -> String {
    v.sites.iter().map(|s| card(s, kiosk, lang, zone)).collect()
}

/// The whole page, in `lang`.
pub fn page(v: &FleetView, base: &str, kiosk: bool, embed: bool, range: &str, lang: Lang, zone: &Zone) -> String {
    let t = lang.s();
    let html_class = match (kiosk, embed) {
        (true, _) => "kiosk dark",
        (false, true) => "embed",
        _ => "",
    };
    let brand = t.fleet_brand;
    let header = if kiosk || embed {
        String::new()
    } else {
        format!(
            concat!(
                r#"<header class="top"><nav class="nav"><a class="brand" href="{base}/">{brand}</a>"#,
                r#"<a class="nav-link" href="{base}/api/v1/fleet">JSON</a>"#,
                r#"<a class="nav-link" href="{base}/metrics">{}</a></nav></header>"#
            ),
            t.fleet_metrics,
            base = base,
            brand = brand,
        )
    };
    let charts: String = if kiosk {
        String::new()
    } else {
        v.sites
            .iter()
            .map(|s| {
                let n = esc(&s.name);
                let alt = esc(&fill(t.fleet_chart_alt, &[&s.name]));
                let src = format!("{base}/charts/site.svg?site={n}&amp;range={range}&amp;lang={}", lang.code());
                format!(r#"<figure class="panel chart"><img src="{src}" alt="{alt}"/></figure>"#)
            })
            .collect::<String>()
    };
    // The kiosk shows the cards alone; elsewhere each site's history follows them.
    let charts = if charts.is_empty() {
        String::new()
    } else {
        format!(r#"<h2 class="page-title">{}</h2><section class="charts">{charts}</section>"#, t.fleet_history)
    };
    let code = lang.code();
    format!(
        concat!(
            r#"<!doctype html><html lang="{code}" class="{html_class}"><head><meta charset="utf-8">"#,
            r#"<meta name="viewport" content="width=device-width, initial-scale=1"><title>{brand}</title>"#,
            r#"<link rel="stylesheet" href="{base}/pkg/gpudash.css"><link rel="stylesheet" href="{base}/pkg/pages.css">"#,
            r#"<script src="{base}/zone.js" data-zone="{zone}"></script>"#,
            r#"<script src="{base}/fleet.js" defer data-base="{base}" data-kiosk="{kiosk}" data-lang="{code}"></script>"#,
            r#"</head><body><div class="app">{header}<main><h1 class="page-title">{}</h1>"#,
            r#"<p class="status" id="fleet-status">{}</p><section id="sites" class="cards">{}</section>{charts}</main>"#,
            r#"</div></body></html>"#
        ),
        esc(&fill(t.fleet_title, &[&v.sites.len().to_string()])),
        esc(&status_line(v, lang, zone)),
        cards(v, kiosk, lang, zone),
        code = code,
        html_class = html_class,
        brand = brand,
        base = base,
        kiosk = kiosk,
        header = header,
        charts = charts,
        zone = esc(&zone.name),
    )
}

/// The script that keeps the cards live (no framework: a stream; the whole list at first, then
/// each changed card swapped in and the cards moved when the order changes).
pub const SCRIPT: &str = r#"(function(){var s=document.currentScript,b=s.dataset.base||"",k=s.dataset.kiosk==="true";
var es=new EventSource(b+"/api/v1/fleet/stream?lang="+(s.dataset.lang||"en")+(k?"&kiosk=1":""));
function site(n){var c=document.getElementById("sites");if(!c){return null;}
for(var i=0;i<c.children.length;i++){if(c.children[i].dataset.site===n){return c.children[i];}}return null;}
es.addEventListener("cards",function(e){var el=document.getElementById("sites");if(el){el.innerHTML=e.data;}});
es.addEventListener("card",function(e){var t=document.createElement("template");t.innerHTML=e.data;
var n=t.content.firstElementChild;var o=n&&site(n.dataset.site);if(o){o.replaceWith(n);}});
es.addEventListener("order",function(e){var c=document.getElementById("sites");
if(c){JSON.parse(e.data).forEach(function(n){var x=site(n);if(x){c.appendChild(x);}});}});
es.addEventListener("status",function(e){var el=document.getElementById("fleet-status");if(el){el.textContent=e.data;}});})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Family, SiteTotals};

    #[test]
    fn cards_render_fields_escaped_and_say_their_state() {
        let s = SiteView {
            name: "plant-a".into(),
            url: "https://a.example/gpu".into(),
            state: SiteState::Stale,
            stale_since: Some("2026-12-03T10:00:05Z".into()),
            revision: Some(9),
            totals: Some(SiteTotals {
                nodes: 3,
                nodes_ready: 2,
                gpu_capacity: 8,
                gpu_allocated: 5,
                pending: 1,
                critical: 0,
                warning: 2,
            }),
            families: vec![Family { family: "<script>".into(), held: 5, total: 8 }],
            error: Some("cannot connect: refused".into()),
        };
        let html = card(&s, false, Lang::En, &Zone::default());
        assert!(html.contains(r#"data-state="stale""#) && html.contains("stale since 10:00:05 UTC"));
        // A reader in Tokyo reads the same moment in JST.
        let tokyo = Zone { name: "Asia/Tokyo".into(), spans: vec![(i64::MIN, 9 * 3600, "JST".into())] };
        assert!(card(&s, false, Lang::Ja, &tokyo).contains("19:00:05 JST から更新なし"));
        assert!(html.contains(r#"<a href="https://a.example/gpu/">plant-a</a>"#));
        assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"), "{html}");
        assert!(html.contains(r#"<dd class="nodes">2/3</dd>"#) && html.contains(r#"<dd class="pending">1</dd>"#));
        assert!(!card(&s, true, Lang::En, &Zone::default()).contains("<a href"), "kiosk: no links");
        let never = SiteView { totals: None, state: SiteState::Unreachable, stale_since: None, ..s };
        assert!(card(&never, false, Lang::En, &Zone::default()).contains("No view from this site yet"));
        assert!(card(&never, false, Lang::Ja, &Zone::default()).contains("このサイトからのビューはまだありません"));
    }
}
