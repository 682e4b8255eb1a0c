//! The fleet page: rendered by the app's Leptos views (`app::views::fleet`) from the
//! FleetView (the state, order and totals are decided in `view.rs`); here the status line's
//! words and the script that keeps the cards live (`fleet.js`: the stream swaps in new cards).

use app::i18n::{fill, Lang};
use app::time::Zone;

pub use app::views::fleet::{card, cards, Shown};

use crate::view::{FleetView, SiteState};

/// A moment in the reader's zone, with the zone's name (`22:34:21 JST`).
fn clock(rfc3339: &str, zone: &Zone) -> String {
    app::time::parse_rfc3339(rfc3339).map_or_else(|| rfc3339.to_string(), |t| zone.clock(t))
}

/// The line above the cards: how many sites are in each state, and as of when.
pub fn status_line(v: &FleetView, lang: Lang, zone: &Zone) -> String {
    let n = |s: SiteState| v.sites.iter().filter(|x| x.state == s).count().to_string();
    fill(
        lang.s().fleet_status,
        &[&n(SiteState::Live), &n(SiteState::Stale), &n(SiteState::Unreachable), &clock(&v.generated_at, zone)],
    )
}

/// The whole page, in `shown.lang`.
pub fn page(v: &FleetView, shown: &Shown) -> String {
    let title = fill(shown.lang.s().fleet_title, &[&v.sites.len().to_string()]);
    app::views::fleet::page(v, shown, &title, &status_line(v, shown.lang, &shown.zone))
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
    use crate::view::{Family, SiteTotals, SiteView};

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
            cut: None,
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
