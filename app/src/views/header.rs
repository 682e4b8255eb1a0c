//! The header: brand, navigation and the status line (source, sync progress, staleness).

use leptos::prelude::*;

use crate::boot::{Boot, Page};
use crate::i18n::{elapsed, fill, Lang};
use crate::model::SourceMode;
use crate::time::{parse_rfc3339, Zone};

use super::app::{Conn, Live};

/// The state the status line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Following the cluster.
    Live,
    /// First sync not finished.
    Connecting,
    /// The cluster watch or the browser's connection is down: the last known state.
    Stale,
    /// A page that does not go live (history, fit): the state when it was rendered.
    Snapshot,
}

impl State {
    /// The `data-state` value (styles key on it).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Connecting => "connecting",
            Self::Stale => "stale",
            Self::Snapshot => "snapshot",
        }
    }

    /// The icon beside the sentence.
    pub fn icon(self) -> &'static str {
        match self {
            Self::Live => "●",
            Self::Connecting => "◌",
            Self::Snapshot => "◷",
            Self::Stale => "▲",
        }
    }
}

/// What the status line says, derived from the view and the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// Its state.
    pub state: State,
    /// The sentence.
    pub text: String,
}

/// Decides the status line. Staleness of the browser's own connection wins over the cluster's.
pub fn status(live: &Live, lang: Lang, zone: &Zone) -> Status {
    let t = lang.t();
    let now = live.now.get();
    let conn = live.conn.get();
    live.view.with(|v| {
        let ago = |s: i64| fill(t.status_since, &[&zone.clock(s), &elapsed(s, now, lang)]);
        if let Conn::Lost(s) = conn {
            return Status { state: State::Stale, text: fill(t.status_conn_lost, &[&ago(s)]) };
        }
        if let Some(s) = v.source.stale_since.as_deref().and_then(parse_rfc3339) {
            // The watch's error is the client library's own words, kept as they are.
            let err = v.source.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
            return Status { state: State::Stale, text: fill(t.status_watch_down, &[&ago(s), &err]) };
        }
        if !v.source.synced {
            let p = &v.source.progress;
            let (a, b, c) = (p.kinds_synced.to_string(), p.kinds_total.to_string(), p.objects.to_string());
            return Status { state: State::Connecting, text: fill(t.status_connecting, &[&a, &b, &c]) };
        }
        let updated = zone.clock(parse_rfc3339(&v.generated_at).unwrap_or(now));
        Status { state: State::Live, text: fill(t.status_live, &[&v.revision.to_string(), &updated]) }
    })
}

/// The header.
#[component]
pub fn Header() -> impl IntoView {
    let live = expect_context::<Live>();
    let boot = expect_context::<Boot>();
    let lang = boot.lang;
    let t = lang.t();
    let mode = move || live.view.with(|v| v.source.mode);
    let source = move || match mode() {
        SourceMode::Demo => t.source_demo.to_string(),
        SourceMode::Cluster => live.view.with(|v| fill(t.source_cluster, &[&v.source.server])),
    };
    let hydrates = boot.hydrates();
    let zone = boot.zone.clone();
    let again = if boot.refreshes() { t.status_refreshes } else { t.status_reload };
    let st = Memo::new(move |_| {
        let mut s = status(&live, lang, &zone);
        // A page that does not hydrate is a snapshot: say so rather than "Live".
        if !hydrates && s.state == State::Live {
            s = Status {
                state: State::Snapshot,
                text: live.view.with(|v| {
                    let at = zone.clock(parse_rfc3339(&v.generated_at).unwrap_or(0));
                    fill(t.status_snapshot, &[&v.revision.to_string(), &at, again])
                }),
            };
        }
        s
    });
    let pending = move || live.view.with(|v| v.totals.pending);
    let diags = move || live.view.with(|v| v.totals.diagnoses);
    let current = boot.page.clone();
    let chrome = !boot.embed && !boot.kiosk;
    let link = |path: &'static str, page: Page, label: &'static str| {
        let cls = if current == page { "nav-link current" } else { "nav-link" };
        (boot.href(path), cls, label)
    };
    let (o_href, o_cls, o_label) = link("/", Page::Overview, t.nav_overview);
    let (p_href, p_cls, _) = link("/pending", Page::Pending, "");
    let (d_href, d_cls, _) = link("/diagnoses", Page::Diagnoses, "");
    let (h_href, h_cls, h_label) = link("/history", Page::History, t.nav_history);
    let (f_href, f_cls, f_label) = link("/fit", Page::Fit, t.nav_fit);
    let (q_href, q_cls, q_label) = link("/quotas", Page::Quotas, t.nav_quotas);
    let (r_href, r_cls, r_label) = link("/reports", Page::Reports, t.nav_reports);
    // The other language: the same page and flags, with `?lang=` pinned.
    let other = Lang::ALL.into_iter().find(|l| *l != lang).unwrap_or_default();
    let switch = {
        let mut b = boot.clone();
        (b.lang, b.lang_pinned) = (other, true);
        b.href(&boot.page.path())
    };
    view! {
        <header class="top">
            <Show when=move || chrome>
                <nav class="nav" aria-label=t.nav_label>
                    <span class="brand">"gpudash"</span>
                    <a class=o_cls href=o_href.clone()>{o_label}</a>
                    <a class=p_cls href=p_href.clone()>{move || fill(t.nav_pending, &[&pending().to_string()])}</a>
                    <a class=d_cls href=d_href.clone()>{move || fill(t.nav_diagnoses, &[&diags().to_string()])}</a>
                    <a class=h_cls href=h_href.clone()>{h_label}</a>
                    <a class=q_cls href=q_href.clone()>{q_label}</a>
                    <a class=r_cls href=r_href.clone()>{r_label}</a>
                    <a class=f_cls href=f_href.clone()>{f_label}</a>
                    <a class="nav-link lang-switch" href=switch.clone() hreflang=other.code() lang=other.code() title=t.lang_label>{other.name()}</a>
                </nav>
            </Show>
            <div class="status" data-state=move || st.get().state.as_str() role="status" aria-live="polite">
                <span class="source" data-mode=move || if mode() == SourceMode::Demo { "demo" } else { "cluster" }>{source}</span>
                <span class="state-icon" aria-hidden="true">{move || st.get().state.icon()}</span>
                <span class="status-text">{move || st.get().text}</span>
            </div>
        </header>
    }
}
