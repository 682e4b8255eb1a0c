//! The fleet's view, derived from each site's last view and its connection (pure: states in,
//! view out): a card per site, sorted by trouble — unreachable, stale, then the most critical,
//! warning and pending first.

use std::time::Duration;

use app::model::{ClusterView, Sharing};

pub use app::model::fleet::{Family, FleetView, SiteState, SiteTotals, SiteView};

/// What the fleet knows of one site.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Its last view (deltas applied).
    pub view: Option<std::sync::Arc<ClusterView>>,
    /// Its stream is open.
    pub connected: bool,
    /// When it last sent anything (events or keep-alives).
    pub last_contact: Option<jiff::Timestamp>,
    /// Since when it has not been live.
    pub down_since: Option<jiff::Timestamp>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    /// What the fleet did not keep of the last view.
    pub cut: Option<String>,
}

/// Limits of a site's silence.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Silent longer than this (or disconnected): stale.
    pub stale_after: Duration,
    /// Not heard from for longer than this: unreachable.
    pub unreachable_after: Duration,
}

fn ts(t: jiff::Timestamp) -> String {
    gpudash_core::derive::ts(&t)
}

/// The family a GPU resource belongs to.
fn family(resource: &str, sharing: Sharing) -> String {
    if sharing == Sharing::Mig || resource.starts_with("nvidia.com/mig-") {
        "nvidia.com/mig".into()
    } else if resource == "nvidia.com/gpu.shared" {
        "nvidia.com/gpu".into()
    } else {
        resource.to_string()
    }
}

fn totals(v: &ClusterView) -> (SiteTotals, Vec<Family>) {
    let mut fam: Vec<Family> = Vec::new();
    for g in v.nodes.iter().flat_map(|n| &n.gpu_resources) {
        let f = family(&g.resource, g.sharing);
        match fam.iter_mut().find(|x| x.family == f) {
            Some(x) => {
                x.held += g.allocated;
                x.total += g.capacity;
            }
            None => fam.push(Family { family: f, held: g.allocated, total: g.capacity }),
        }
    }
    fam.sort_by(|a, b| a.family.cmp(&b.family));
    let t = SiteTotals {
        nodes: v.totals.nodes,
        nodes_ready: v.totals.ready_nodes,
        gpu_capacity: fam.iter().map(|f| f.total).sum(),
        gpu_allocated: v.totals.gpu_allocated,
        pending: v.totals.pending,
        critical: v.totals.critical,
        warning: v.totals.warnings,
    };
    (t, fam)
}

/// One site's state now.
pub fn state(k: &Known, now: jiff::Timestamp, limits: Limits) -> (SiteState, Option<jiff::Timestamp>) {
    let silent = |since: jiff::Timestamp| now.duration_since(since).unsigned_abs();
    let site_stale = k.view.as_ref().and_then(|v| v.source.stale_since.as_deref()).and_then(|s| s.parse().ok());
    let heard_recently = k.last_contact.is_some_and(|t| silent(t) <= limits.stale_after);
    if k.connected && heard_recently && k.view.is_some() {
        return match site_stale {
            // The site answers but its own cluster watch is stale: its view is old.
            Some(since) => (SiteState::Stale, Some(since)),
            None => (SiteState::Live, None),
        };
    }
    let since = k.down_since.or(k.last_contact);
    match (since, &k.view) {
        (_, None) => (SiteState::Unreachable, since),
        (Some(s), Some(_)) if silent(s) > limits.unreachable_after => (SiteState::Unreachable, Some(s)),
        (s, Some(_)) => (SiteState::Stale, s.or(Some(now))),
    }
}

/// The fleet view from every site's name, URL and what is known of it.
pub fn fleet(sites: &[(String, String, Known)], now: jiff::Timestamp, limits: Limits) -> FleetView {
    let mut out: Vec<SiteView> = sites
        .iter()
        .map(|(name, url, k)| {
            let (state, since) = state(k, now, limits);
            let (totals, families) = match &k.view {
                Some(v) => {
                    let (t, f) = totals(v);
                    (Some(t), f)
                }
                None => (None, Vec::new()),
            };
            SiteView {
                name: name.clone(),
                url: url.clone(),
                state,
                stale_since: since.map(ts),
                revision: k.view.as_ref().map(|v| v.revision),
                totals,
                families,
                error: k.error.clone(),
                cut: k.cut.clone(),
            }
        })
        .collect();
    let rank = |s: &SiteView| match s.state {
        SiteState::Unreachable => 0,
        SiteState::Stale => 1,
        SiteState::Live => 2,
    };
    out.sort_by(|a, b| {
        let t = |s: &SiteView| s.totals.clone().unwrap_or_default();
        rank(a)
            .cmp(&rank(b))
            .then_with(|| t(b).critical.cmp(&t(a).critical))
            .then_with(|| t(b).warning.cmp(&t(a).warning))
            .then_with(|| t(b).pending.cmp(&t(a).pending))
            .then_with(|| a.name.cmp(&b.name))
    });
    FleetView { generated_at: ts(now), sites: out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn limits() -> Limits {
        Limits { stale_after: Duration::from_secs(30), unreachable_after: Duration::from_secs(120) }
    }

    fn at(s: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + s).unwrap_or_default()
    }

    fn view(critical: u32, pending: u32) -> Arc<ClusterView> {
        let mut v = ClusterView { revision: 7, ..ClusterView::default() };
        v.totals.critical = critical;
        v.totals.pending = pending;
        v.totals.nodes = 3;
        Arc::new(v)
    }

    #[test]
    fn live_stale_and_unreachable_by_contact_and_sorted_by_trouble() {
        let live = Known { view: Some(view(0, 1)), connected: true, last_contact: Some(at(95)), ..Known::default() };
        let troubled =
            Known { view: Some(view(2, 0)), connected: true, last_contact: Some(at(99)), ..Known::default() };
        let dropped = Known {
            view: Some(view(0, 0)),
            connected: false,
            last_contact: Some(at(50)),
            down_since: Some(at(60)),
            ..Known::default()
        };
        let gone = Known {
            view: Some(view(5, 5)),
            connected: false,
            last_contact: Some(at(-100)),
            down_since: Some(at(-90)),
            ..Known::default()
        };
        let never = Known { error: Some("connection refused".into()), ..Known::default() };
        let sites: Vec<(String, String, Known)> =
            [("a", live), ("b", troubled), ("c", dropped), ("d", gone), ("e", never)]
                .into_iter()
                .map(|(n, k)| (n.to_string(), format!("http://{n}"), k))
                .collect();
        let f = fleet(&sites, at(100), limits());
        let order: Vec<(&str, SiteState)> = f.sites.iter().map(|s| (s.name.as_str(), s.state)).collect();
        assert_eq!(
            order,
            [
                ("d", SiteState::Unreachable),
                ("e", SiteState::Unreachable),
                ("c", SiteState::Stale),
                ("b", SiteState::Live),
                ("a", SiteState::Live)
            ]
        );
        let c = &f.sites[2];
        assert_eq!(c.stale_since.as_deref(), Some(ts(at(60)).as_str()));
        assert_eq!(c.totals.as_ref().map(|t| t.nodes), Some(3), "a stale site keeps its last totals");
        assert_eq!(f.sites[1].totals, None, "never seen: no totals, not zeros");
        // A site whose own cluster watch is stale is stale, since then.
        let mut v = ClusterView::default();
        v.source.stale_since = Some(ts(at(80)));
        let k = Known { view: Some(Arc::new(v)), connected: true, last_contact: Some(at(99)), ..Known::default() };
        assert_eq!(state(&k, at(100), limits()), (SiteState::Stale, Some(at(80))));
    }
}
