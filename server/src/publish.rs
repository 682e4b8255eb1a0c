//! The derivation loop: wakes on any change, coalesces a burst into one derivation, and
//! publishes a revisioned snapshot (the view and its JSON, serialised once) to every reader.

use std::sync::Arc;
use std::time::Duration;

use app::i18n::Lang;
use app::model::ClusterView;
use tokio::sync::watch;

use crate::derive::{derive_forked, Cache, Fork, Options};
use crate::watchers::Stores;

/// One published revision.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The view.
    pub view: ClusterView,
    /// `view` as JSON (or the browser's wire) in each [`Form`] (its sentences written in the
    /// form's language), made on first use and shared by every stream client and API request
    /// (when every client is up to date, only deltas are ever serialised).
    json: [std::sync::OnceLock<Arc<str>>; FORMS],
    /// `view` as one server-sent event per form, made on first use and shared.
    frame: [std::sync::OnceLock<bytes::Bytes>; FORMS],
    /// That event compressed ([`deflate_piece`]), made on first use and shared.
    piece: [std::sync::OnceLock<bytes::Bytes>; FORMS],
    /// The changes that led here, oldest first: (the revision each applies to, the delta).
    /// Consecutive, ending at this revision; at most [`RECENT`]. A client that skipped
    /// revisions (it was slow to read) catches up with these instead of the whole view.
    pub recent: Arc<std::collections::VecDeque<(u64, Arc<Delta>)>>,
}

/// How a view is written for a reader: the language of its sentences, and whether its nodes
/// are whole (the API, kubectl-style clients, the fleet) or as the browser's live views read
/// them ([`app::model::NodeView::card`]: without the memory table by pod and the GPU labels,
/// which only the server-rendered node page shows — most of the bytes at 1,000 nodes), and
/// whether in JSON or in the browser's wire (`gpudash_model::wire`: the bundle's, nodes as
/// cards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// The sentences' language.
    pub lang: Lang,
    /// Nodes as cards.
    pub cards: bool,
    /// In the browser's wire (implies `cards`).
    pub browser: bool,
}

/// How many forms there are.
pub const FORMS: usize = 6;

impl Form {
    /// Whole nodes in `lang`.
    pub fn whole(lang: Lang) -> Self {
        Self { lang, cards: false, browser: false }
    }

    /// Every form.
    pub fn all() -> [Self; FORMS] {
        [
            (Lang::En, false, false),
            (Lang::Ja, false, false),
            (Lang::En, true, false),
            (Lang::Ja, true, false),
            (Lang::En, true, true),
            (Lang::Ja, true, true),
        ]
        .map(|(lang, cards, browser)| Self { lang, cards, browser })
    }

    /// Its place in per-form arrays.
    pub fn index(self) -> usize {
        self.lang as usize + 2 * usize::from(self.cards) + 2 * usize::from(self.browser)
    }

    /// `value` written in this form (JSON, or the browser's wire as base64 text).
    fn write<T: serde::Serialize>(self, value: &T) -> Option<String> {
        if self.browser {
            app::wire::to_browser(self.lang, value).ok()
        } else {
            app::i18n::to_json(self.lang, value).ok()
        }
    }
}

/// One revision's change, serialised as a server-sent `delta` event in a [`Form`] when that
/// form is first asked for — at once, on the derivation's thread, for the forms whose clients
/// are connected; later, once and shared, for a form whose first client arrives.
#[derive(Debug)]
pub struct Delta {
    delta: app::model::ViewDelta,
    frames: [std::sync::OnceLock<Option<bytes::Bytes>>; FORMS],
    pieces: [std::sync::OnceLock<Option<bytes::Bytes>>; FORMS],
}

impl Delta {
    fn new(delta: app::model::ViewDelta) -> Self {
        Self { delta, frames: Default::default(), pieces: Default::default() }
    }

    /// The event compressed ([`deflate_piece`]), made once and shared.
    pub fn piece(&self, form: Form) -> Option<bytes::Bytes> {
        self.pieces[form.index()].get_or_init(|| self.frame(form).map(|f| deflate_piece(&f))).clone()
    }

    /// The delta as an event in `form` (None only if it cannot be serialised).
    pub fn frame(&self, form: Form) -> Option<bytes::Bytes> {
        self.frames[form.index()]
            .get_or_init(|| {
                let text = if form.cards {
                    let mut d = self.delta.clone();
                    d.nodes_changed = d.nodes_changed.iter().map(|n| Arc::new(n.card())).collect();
                    form.write(&d)
                } else {
                    form.write(&self.delta)
                };
                text.map(|d| sse_frame(Some("delta"), self.delta.revision, &d))
            })
            .clone()
    }

    /// Whether it has been serialised in `form`.
    pub fn serialised(&self, form: Form) -> bool {
        self.frames[form.index()].get().is_some()
    }
}

/// Open stream clients per [`Form`] (`Form::index`): the derivation serialises each delta in
/// the forms someone is reading, not in all.
pub type Readers = Arc<[std::sync::atomic::AtomicU64; FORMS]>;

pub use gpudash_web::wire::{
    deflate_piece, keep_alive_piece, sse_frame, Inflate, InflateError, GZIP_HEADER, KEEP_ALIVE,
};

/// What to send a stream client.
pub enum CatchUp<'a> {
    /// It is up to date.
    Nothing,
    /// These deltas, in order: (the revision each applies to, the delta).
    Deltas(std::iter::Skip<std::collections::vec_deque::Iter<'a, (u64, Arc<Delta>)>>),
    /// The whole view.
    Full,
}

/// How many deltas a snapshot keeps for clients that fell behind.
pub const RECENT: usize = 64;

impl Snapshot {
    /// Wraps a view, serialising it once.
    pub fn new(view: ClusterView) -> Self {
        Self {
            view,
            json: Default::default(),
            frame: Default::default(),
            piece: Default::default(),
            recent: Arc::default(),
        }
    }

    /// The full view's event compressed ([`deflate_piece`]), made once and shared.
    pub fn piece(&self, form: Form) -> bytes::Bytes {
        self.piece[form.index()].get_or_init(|| deflate_piece(&self.frame(form))).clone()
    }

    /// What a client that has revision `sent` (0: nothing yet) needs to reach this one.
    pub fn catch_up(&self, sent: u64) -> CatchUp<'_> {
        if sent != 0 && sent == self.view.revision {
            return CatchUp::Nothing;
        }
        match self.recent.iter().position(|(base, _)| *base == sent) {
            Some(i) if sent != 0 => CatchUp::Deltas(self.recent.iter().skip(i)),
            _ => CatchUp::Full,
        }
    }

    /// The full view as one server-sent event (shared: cloning `Bytes` copies nothing).
    pub fn frame(&self, form: Form) -> bytes::Bytes {
        self.frame[form.index()].get_or_init(|| sse_frame(None, self.view.revision, &self.json(form))).clone()
    }

    /// The full view as JSON in `form`.
    pub fn json(&self, form: Form) -> Arc<str> {
        self.json[form.index()]
            .get_or_init(|| {
                let text = if form.browser {
                    form.write(&app::model::ForBrowser(&self.view))
                } else if form.cards {
                    // Written from the nodes as they are: no copy of the view.
                    form.write(&app::model::WithCards(&self.view))
                } else {
                    form.write(&self.view)
                };
                text.unwrap_or_else(|| "{}".into()).into()
            })
            .clone()
    }
}

/// The least time between the starts of two derivations. A change after a quiet spell is
/// derived at once; changes that come while one derivation runs, or within this time of its
/// start, are taken together by the next (a burst costs a few derivations, not one per event).
pub const COALESCE: Duration = Duration::from_millis(15);

/// The least time between two derivations while a kind is on its first list. Until every
/// kind has synced a view tells little more than how far the lists have come (and node views
/// built before the sync are not kept past it), so deriving on every page or item of the pods'
/// list (tens of times a second at 30,000 pods) only took the CPU the list was read with. The
/// end of the lists is derived at once; a kind the API server refuses is not waited for.
pub const COALESCE_LISTING: Duration = Duration::from_millis(500);

/// The snapshot after `prev` for `view` (whose revision is `prev`'s plus one): the delta from
/// `prev` joins the recent ones, serialised now in the forms in `now` (those being read).
pub fn next_snapshot(prev: &Snapshot, view: ClusterView, now: [bool; FORMS]) -> Snapshot {
    let delta = Arc::new(Delta::new(app::model::ViewDelta::between(&prev.view, &view)));
    let mut recent = (*prev.recent).clone();
    let ok = Form::all().into_iter().filter(|f| now[f.index()]).all(|f| delta.frame(f).is_some());
    if ok {
        recent.push_back((prev.view.revision, delta));
    } else {
        recent.clear();
    }
    while recent.len() > RECENT {
        recent.pop_front();
    }
    let mut snap = Snapshot::new(view);
    snap.recent = Arc::new(recent);
    snap
}

/// The derivation's second thread: what it can split (the nodes' views to rebuild, when there
/// are many: the first derivation after the lists rebuilds all of them) runs half on a scoped
/// thread, half on the derivation's own. The core starts no thread; this lends it one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads;

impl Fork for Threads {
    fn join<A: Send, B: Send>(&self, a: impl Fn() -> A + Sync, b: impl Fn() -> B + Sync) -> (A, B) {
        std::thread::scope(|s| {
            let other = std::thread::Builder::new().name("gpudash-derive".into()).spawn_scoped(s, &a);
            let b = b();
            let a = match other {
                Ok(h) => h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No thread to be had: in turn.
                Err(_) => a(),
            };
            (a, b)
        })
    }
}

/// One revision's work, off the async workers: the derivation, the comparison with the view
/// published (`cur`), and the next snapshot (its delta serialised in both languages) when the
/// view changed. Returns the snapshot to publish, if any, and how long the derivation took.
fn revise(
    inputs: &crate::derive::Inputs,
    opts: &Options,
    source: app::model::Source,
    cur: &Snapshot,
    cache: &mut Cache,
    read: [bool; FORMS],
) -> (Option<Snapshot>, Duration) {
    let started = std::time::Instant::now();
    let mut view = derive_forked(inputs, opts, source, cur.view.revision, jiff::Timestamp::now(), cache, &Threads);
    let took = started.elapsed();
    // Compare ignoring revision and time, without cloning the whole view: borrow the current
    // revision's stamps for the comparison, then put the new ones back.
    let generated = std::mem::replace(&mut view.generated_at, cur.view.generated_at.clone());
    view.revision = cur.view.revision;
    let changed = view != cur.view;
    view.generated_at = generated;
    if !changed {
        return (None, took);
    }
    view.revision = cur.view.revision + 1;
    (Some(next_snapshot(cur, view, read)), took)
}

/// Derives on change and publishes when the view differs, until `stop` is set. Each revision's
/// derivation and serialisation run on a blocking thread (tens of milliseconds at 1,000 nodes),
/// never on the async workers that answer requests and feed the streams.
pub async fn run(
    stores: Stores,
    opts: Options,
    tx: watch::Sender<Arc<Snapshot>>,
    mut stop: watch::Receiver<bool>,
    mut cache: Cache,
    readers: Readers,
) {
    let opts = Arc::new(opts);
    let mut started: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            () = stores.state.notify.notified() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        // Rate-limited, not delayed: wait only while the last derivation began within COALESCE
        // (a lone change is on its way at once; it used to wait COALESCE every time).
        if let Some(at) = started {
            if !stores.state.listing() {
                tokio::time::sleep_until(at + COALESCE).await;
            } else {
                // Cut short when the lists end: that view is on its way at once.
                let until = at + COALESCE_LISTING;
                while stores.state.listing() {
                    tokio::select! {
                        () = tokio::time::sleep_until(until) => break,
                        () = stores.state.notify.notified() => {}
                        _ = stop.wait_for(|s| *s) => return,
                    }
                }
            }
        }
        started = Some(tokio::time::Instant::now());
        let inputs = stores.inputs();
        let source = stores.state.source();
        let cur = tx.borrow().clone();
        let opts = opts.clone();
        let mut job_cache = std::mem::take(&mut cache);
        let revision = cur.view.revision + 1;
        let read = Form::all().map(|f| readers[f.index()].load(std::sync::atomic::Ordering::Relaxed) > 0);
        let job = tokio::task::spawn_blocking(move || {
            let span = tracing::debug_span!("derive", revision, changed = tracing::field::Empty);
            let _enter = span.enter();
            let (next, took) = revise(&inputs, &opts, source, &cur, &mut job_cache, read);
            span.record("changed", next.is_some());
            (next, took, job_cache)
        });
        match job.await {
            Ok((next, took, kept)) => {
                cache = kept;
                crate::metrics::DERIVE_MICROS
                    .store(u64::try_from(took.as_micros()).unwrap_or(u64::MAX), std::sync::atomic::Ordering::Relaxed);
                if let Some(snap) = next {
                    let _publish = tracing::debug_span!("publish", revision).entered();
                    tx.send_replace(Arc::new(snap));
                }
            }
            // A panic in the derivation: said, the memo started afresh, the last view kept.
            Err(e) => tracing::error!(error = %e, "the derivation failed; the last view stays published"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::model::{NodeView, ViewDelta};

    #[test]
    fn the_second_thread_runs_half_and_the_view_is_the_one_derived_in_turn() {
        let (a, b) = Threads.join(
            || std::thread::current().name().map(str::to_string),
            || std::thread::current().name().map(str::to_string),
        );
        assert_eq!(a.as_deref(), Some("gpudash-derive"));
        assert_ne!(a, b);
        // Enough nodes to split: each with a GPU, a pod holding it and one waiting for one.
        let node = |i: usize| {
            let n = serde_json::json!({"metadata": {"name": format!("jetson-{i:03}"), "labels": {"nvidia.com/gpu.present": "true"}},
                "status": {"allocatable": {"nvidia.com/gpu": "1", "memory": "8Gi"}, "capacity": {"nvidia.com/gpu": "1"},
                    "conditions": [{"type": "Ready", "status": "True"}]}});
            std::sync::Arc::new(serde_json::from_value::<k8s_openapi::api::core::v1::Node>(n).unwrap_or_default())
        };
        let pod = |i: usize, node: Option<String>| {
            let p = serde_json::json!({"metadata": {"name": format!("infer-{i}"), "namespace": "vision", "uid": format!("u{i}"),
                "creationTimestamp": "2026-12-01T00:00:00Z"},
                "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
                "status": {"phase": if node.is_some() { "Running" } else { "Pending" }}});
            std::sync::Arc::new(crate::pod::Pod::from_json_stripped(p.to_string().as_bytes()).unwrap_or_default())
        };
        let count = 2 * crate::derive::SPLIT_FROM + 3;
        let inputs = crate::derive::Inputs {
            nodes: (0..count).map(node).collect(),
            pods: (0..count).map(|i| pod(i, Some(format!("jetson-{i:03}")))).chain([pod(count, None)]).collect(),
            ..crate::derive::Inputs::default()
        };
        let source = app::model::Source { synced: true, ..app::model::Source::default() };
        let now = jiff::Timestamp::UNIX_EPOCH;
        let opts = Options::default();
        let in_turn = crate::derive::derive_cached(&inputs, &opts, source.clone(), 1, now, &mut Cache::default());
        let forked = derive_forked(&inputs, &opts, source, 1, now, &mut Cache::default(), &Threads);
        assert_eq!(forked.nodes.len(), count);
        assert_eq!(forked.totals.gpu_allocated, count as u64);
        assert!(!forked.pending.is_empty(), "the waiting pod is diagnosed");
        assert_eq!(forked, in_turn);
    }

    fn view(rev: u64, nodes: &[(&str, bool)]) -> ClusterView {
        ClusterView {
            revision: rev,
            nodes: nodes
                .iter()
                .map(|(n, r)| std::sync::Arc::new(NodeView { name: (*n).into(), ready: *r, ..NodeView::default() }))
                .collect(),
            ..ClusterView::default()
        }
    }

    #[test]
    fn every_form_has_its_own_place() {
        let places: Vec<usize> = Form::all().iter().map(|f| f.index()).collect();
        assert_eq!(places, (0..FORMS).collect::<Vec<_>>());
        let browser = Form { lang: Lang::Ja, cards: true, browser: true };
        assert!(Form::all().contains(&browser));
        // The browser's form is base64 text (postcard), not JSON: one SSE data line.
        let snap = Snapshot::new(view(7, &[("a", true)]));
        let text = snap.json(browser);
        assert!(!text.is_empty() && text.bytes().all(|c| c.is_ascii_alphanumeric() || b"+/=".contains(&c)), "{text}");
        assert!(app::wire::unbase64(&text).is_some_and(|b| b.len() > 4));
    }

    #[test]
    fn a_client_that_skipped_revisions_catches_up_with_the_deltas_it_missed() {
        let mut snap = Snapshot::new(view(1, &[("a", true)]));
        let mut views = vec![snap.view.clone()];
        for rev in 2..=(RECENT as u64 + 10) {
            let v = view(rev, &[("a", rev % 2 == 0), ("b", rev % 3 == 0)]);
            views.push(v.clone());
            snap = next_snapshot(&snap, v, [true, false, false, false, false, false]);
        }
        let last = snap.view.revision;
        assert!(matches!(snap.catch_up(last), CatchUp::Nothing));
        assert!(matches!(snap.catch_up(0), CatchUp::Full), "a new client gets the whole view");
        assert!(matches!(snap.catch_up(1), CatchUp::Full), "beyond the recent deltas: the whole view");
        // A client at some recent revision applies the deltas in order and reaches the latest.
        let from = last - 5;
        let CatchUp::Deltas(ds) = snap.catch_up(from) else { panic!("expected deltas from {from}") };
        let mut v = views[(from - 1) as usize].clone();
        let mut n = 0;
        for (base, delta) in ds {
            assert_eq!(*base, v.revision);
            // Serialised in English as it was made (English is being read); Japanese on demand.
            assert!(delta.serialised(Form::whole(Lang::En)) && !delta.serialised(Form::whole(Lang::Ja)));
            let ja = delta.frame(Form::whole(Lang::Ja)).unwrap_or_default();
            assert!(ja.starts_with(format!("event: delta\nid: {}\n", base + 1).as_bytes()));
            let frame = delta.frame(Form::whole(Lang::En)).unwrap_or_default();
            let text = String::from_utf8_lossy(&frame);
            let (head, data) = text.split_once("data: ").unwrap_or_default();
            assert_eq!(head, format!("event: delta\nid: {}\n", base + 1));
            let d: ViewDelta = serde_json::from_str(data.trim_end()).unwrap_or_default();
            assert!(d.apply(&mut v));
            n += 1;
        }
        assert_eq!(n, 5);
        assert_eq!(v, snap.view);
    }
}
