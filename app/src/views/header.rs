//! The header: brand, navigation and the status line (source, sync progress, staleness).

use leptos::prelude::*;

use crate::boot::{Boot, Page};
use crate::model::SourceMode;
use crate::time::{clock, human_duration, parse_rfc3339};

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
pub fn status(live: &Live) -> Status {
    let now = live.now.get();
    let conn = live.conn.get();
    live.view.with(|v| {
        let ago = |t: i64| format!("since {} ({} ago)", clock(t), human_duration(now - t));
        if let Conn::Lost(t) = conn {
            return Status {
                state: State::Stale,
                text: format!("Stale {} — connection to gpudash lost, reconnecting…", ago(t)),
            };
        }
        if let Some(t) = v.source.stale_since.as_deref().and_then(parse_rfc3339) {
            let err = v.source.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
            return Status {
                state: State::Stale,
                text: format!("Stale {} — the cluster watch is down{err}; showing the last known state", ago(t)),
            };
        }
        if !v.source.synced {
            let p = &v.source.progress;
            return Status {
                state: State::Connecting,
                text: format!(
                    "Connecting… first sync {}/{} kinds, {} objects",
                    p.kinds_synced, p.kinds_total, p.objects
                ),
            };
        }
        Status {
            state: State::Live,
            text: format!(
                "Live · revision {} · updated {}",
                v.revision,
                clock(parse_rfc3339(&v.generated_at).unwrap_or(now))
            ),
        }
    })
}

/// The header.
#[component]
pub fn Header() -> impl IntoView {
    let live = expect_context::<Live>();
    let boot = expect_context::<Boot>();
    let mode = move || live.view.with(|v| v.source.mode);
    let source = move || match mode() {
        SourceMode::Demo => "SIMULATED cluster (demo)".to_string(),
        SourceMode::Cluster => live.view.with(|v| format!("cluster {}", v.source.server)),
    };
    let hydrates = boot.page.hydrates();
    let again = if matches!(boot.page, Page::Node(_)) { "refreshes every 15 s" } else { "reload for the latest" };
    let st = Memo::new(move |_| {
        let mut s = status(&live);
        // A page that does not hydrate is a snapshot: say so rather than "Live".
        if !hydrates && s.state == State::Live {
            s = Status {
                state: State::Snapshot,
                text: live.view.with(|v| {
                    format!(
                        "Snapshot · revision {} · as of {} ({again})",
                        v.revision,
                        clock(parse_rfc3339(&v.generated_at).unwrap_or(0))
                    )
                }),
            };
        }
        s
    });
    let pending = move || live.view.with(|v| v.totals.pending);
    let diags = move || live.view.with(|v| v.diagnoses.len());
    let current = boot.page.clone();
    let chrome = !boot.embed && !boot.kiosk;
    let link = |path: &'static str, page: Page, label: &'static str| {
        let cls = if current == page { "nav-link current" } else { "nav-link" };
        (boot.href(path), cls, label)
    };
    let (o_href, o_cls, o_label) = link("/", Page::Overview, "Overview");
    let (p_href, p_cls, _) = link("/pending", Page::Pending, "Pending");
    let (d_href, d_cls, _) = link("/diagnoses", Page::Diagnoses, "Diagnoses");
    let (h_href, h_cls, h_label) = link("/history", Page::History, "History");
    let (f_href, f_cls, f_label) = link("/fit", Page::Fit, "Will it fit?");
    let (q_href, q_cls, q_label) = link("/quotas", Page::Quotas, "Quotas");
    view! {
        <header class="top">
            <Show when=move || chrome>
                <nav class="nav" aria-label="Pages">
                    <span class="brand">"gpudash"</span>
                    <a class=o_cls href=o_href.clone()>{o_label}</a>
                    <a class=p_cls href=p_href.clone()>"Pending (" {pending} ")"</a>
                    <a class=d_cls href=d_href.clone()>"Diagnoses (" {diags} ")"</a>
                    <a class=h_cls href=h_href.clone()>{h_label}</a>
                    <a class=q_cls href=q_href.clone()>{q_label}</a>
                    <a class=f_cls href=f_href.clone()>{f_label}</a>
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
