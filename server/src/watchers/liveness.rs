//! Watch health: which kinds have finished their first list, when each last heard from the API
//! server, and since when the view is stale. The derivation reads it into `source`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::runtime::watcher;
use tokio::sync::Notify;

use crate::derive::{NodeMetrics, PodMetrics};
use app::model::{Source, SourceMode, SyncProgress};

/// One watched kind's health.
#[derive(Debug, Clone, Default)]
pub(crate) struct KindState {
    name: &'static str,
    /// The API resource its watch reads (its plural: `events`), as the heartbeat layer names
    /// requests; two kinds may watch one resource with other selectors (events: the warnings,
    /// and the scheduler's Normal `Preempted` ones).
    resource: &'static str,
    synced: bool,
    seen: u64,
    stale_since: Option<jiff::Timestamp>,
    error: Option<String>,
    /// When the API server last sent anything for this kind (see [`crate::heartbeat`]).
    heard: Option<(Instant, jiff::Timestamp)>,
    /// Set while the kind's watch has been silent for longer than the stall limit: the time it
    /// was last heard from.
    silent_since: Option<jiff::Timestamp>,
}

impl KindState {
    /// What the API server's answer or words for its resource mean for this kind; whether
    /// anything changed.
    fn hear(&mut self, signal: crate::heartbeat::Signal) -> bool {
        match signal {
            crate::heartbeat::Signal::Spoke => {
                self.heard = Some((Instant::now(), jiff::Timestamp::now()));
                let back = self.silent_since.take().is_some();
                if back {
                    tracing::info!(kind = self.name, "watch is receiving again");
                }
                back
            }
            // A watch re-opened after a failure: the server is back, and the stream replays
            // what changed since the last version seen (or says 410, and the kind relists).
            crate::heartbeat::Signal::Answered => {
                let back = self.synced && self.error.take().is_some();
                if back {
                    tracing::info!(kind = self.name, "watch re-opened");
                    self.stale_since = None;
                }
                back
            }
        }
    }
}

/// The latest metrics.k8s.io lists (None: not available).
pub(crate) type SharedMetrics = Arc<Mutex<(Option<Arc<Vec<NodeMetrics>>>, Option<Arc<Vec<PodMetrics>>>)>>;

/// What the watchers report; read to build the status line.
#[derive(Debug)]
pub struct WatchState {
    kinds: Mutex<Vec<KindState>>,
    /// Woken on every change; the derivation loop coalesces.
    pub notify: Arc<Notify>,
    mode: SourceMode,
    server: String,
    /// A watch silent for longer than this is stalled.
    pub(crate) stall_after: Duration,
}

/// What a watcher saw, reduced to what the state needs.
pub(crate) enum Seen {
    Init,
    InitApply,
    InitDone,
    Change,
    /// An update that left what gpudash reads as it was (a node's heartbeat, a resourceVersion):
    /// heard, but nothing to derive.
    Same,
    Error(watcher::Error),
}

impl WatchState {
    /// The state for a source; `stall_after` is how long a watch may stay silent.
    pub fn new(mode: SourceMode, server: String, stall_after: Duration) -> Arc<Self> {
        Arc::new(Self { kinds: Mutex::new(Vec::new()), notify: Arc::new(Notify::new()), mode, server, stall_after })
    }

    /// The API server answered or spoke for `resource` (its plural name): every kind that
    /// watches it hears it.
    pub(crate) fn heard(&self, resource: &str, signal: crate::heartbeat::Signal) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = false;
        for k in kinds.iter_mut().filter(|k| k.resource == resource) {
            changed |= k.hear(signal);
        }
        drop(kinds);
        if changed {
            self.notify.notify_one();
        }
    }

    /// Marks kinds whose watch has been silent for longer than the limit.
    pub(crate) fn check_silence(&self) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = false;
        for k in kinds.iter_mut().filter(|k| k.synced && k.silent_since.is_none()) {
            if let Some((at, ts)) = k.heard.filter(|(at, _)| at.elapsed() > self.stall_after) {
                tracing::warn!(
                    kind = k.name,
                    silent_s = at.elapsed().as_secs(),
                    "watch stalled: nothing from the API server"
                );
                k.silent_since = Some(ts);
                changed = true;
            }
        }
        drop(kinds);
        if changed {
            self.notify.notify_one();
        }
    }

    pub(crate) fn register(&self, name: &'static str) -> usize {
        self.register_on(name, name)
    }

    /// Registers a kind named `name` whose watch reads the API resource `resource`.
    pub(crate) fn register_on(&self, name: &'static str, resource: &'static str) -> usize {
        let mut k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        k.push(KindState { name, resource, ..KindState::default() });
        k.len() - 1
    }

    pub(crate) fn on(&self, idx: usize, seen: Seen) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let Some(k) = kinds.get_mut(idx) else { return };
        match seen {
            Seen::Init => k.seen = 0,
            Seen::InitApply => k.seen += 1,
            Seen::InitDone => {
                k.synced = true;
                k.stale_since = None;
                k.error = None;
                k.silent_since = None;
            }
            Seen::Change => {
                k.seen += 1;
                if k.synced {
                    k.stale_since = None;
                    k.error = None;
                }
            }
            Seen::Same => {
                // Only a recovery is news for the view.
                let recovered = k.synced && (k.stale_since.is_some() || k.error.is_some());
                if recovered {
                    k.stale_since = None;
                    k.error = None;
                } else {
                    return;
                }
            }
            Seen::Error(e) => {
                let e = e.to_string();
                if k.error.is_none() {
                    tracing::warn!(kind = k.name, error = %e, "watch failed; retrying with backoff");
                }
                k.stale_since.get_or_insert_with(jiff::Timestamp::now);
                k.error = Some(e);
            }
        }
        drop(kinds);
        self.notify.notify_one();
    }

    /// Whether every kind finished its first list.
    pub fn synced(&self) -> bool {
        let k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        !k.is_empty() && k.iter().all(|k| k.synced)
    }

    /// Whether a kind is still on its first list: not synced and not failing (a kind the API
    /// server refuses is not waited for).
    pub fn listing(&self) -> bool {
        let k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        !k.is_empty() && k.iter().any(|k| !k.synced && k.error.is_none())
    }

    /// The source block of the ClusterView.
    pub fn source(&self) -> Source {
        let k = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        let stale = k.iter().flat_map(|k| [k.stale_since, k.silent_since]).flatten().min();
        let silent = |k: &KindState| {
            k.silent_since.map(|_| {
                format!(
                    "{}: watch stalled — nothing from the API server for over {} s",
                    k.name,
                    self.stall_after.as_secs()
                )
            })
        };
        Source {
            mode: self.mode,
            synced: !k.is_empty() && k.iter().all(|k| k.synced),
            stale_since: stale.map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string()),
            error: k.iter().find_map(|k| k.error.as_ref().map(|e| format!("{}: {e}", k.name)).or_else(|| silent(k))),
            server: self.server.clone(),
            progress: SyncProgress {
                kinds_synced: u32::try_from(k.iter().filter(|k| k.synced).count()).unwrap_or(0),
                kinds_total: u32::try_from(k.len()).unwrap_or(0),
                objects: k.iter().map(|k| k.seen).sum(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_listing_until_it_syncs_or_fails() {
        let st = WatchState::new(SourceMode::Cluster, String::new(), Duration::from_secs(30));
        assert!(!st.listing(), "no kind: nothing to wait for");
        let (nodes, events) = (st.register("nodes"), st.register("events"));
        assert!(st.listing());
        st.on(nodes, Seen::InitDone);
        assert!(st.listing(), "events still on their first list");
        let refused = kube::runtime::watcher::Error::InitialListFailed(kube::Error::Service("403 forbidden".into()));
        st.on(events, Seen::Error(refused));
        assert!(!st.listing(), "a refused kind is not waited for");
        assert!(!st.synced());
        st.on(events, Seen::InitDone);
        assert!(!st.listing() && st.synced());
    }

    #[test]
    fn two_watches_of_one_resource_both_hear_the_api_server_come_back() {
        // The warnings and the scheduler's Preempted events are two watches of `events`: after an
        // API server restart the heartbeat names the resource, and both must stop being stale
        // (the preemptions' watch kept the view stale for good before).
        let st = WatchState::new(SourceMode::Cluster, String::new(), Duration::from_secs(30));
        let (events, preemptions) = (st.register("events"), st.register_on("preemptions", "events"));
        for k in [events, preemptions] {
            st.on(k, Seen::InitDone);
            let gone = kube::runtime::watcher::Error::WatchFailed(kube::Error::Service("connect".into()));
            st.on(k, Seen::Error(gone));
        }
        assert!(st.source().stale_since.is_some(), "both failed");
        st.heard("events", crate::heartbeat::Signal::Answered);
        let s = st.source();
        assert!(s.stale_since.is_none() && s.error.is_none(), "both heard the server answer: {s:?}");
    }
}
