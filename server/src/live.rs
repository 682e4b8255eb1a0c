//! The derivation loop: wakes on any change, coalesces a burst into one derivation, and
//! publishes a revisioned snapshot (the view and its JSON, serialised once) to every reader.

use std::sync::Arc;
use std::time::Duration;

use app::model::ClusterView;
use tokio::sync::watch;

use crate::derive::{derive, Options};
use crate::watch::Stores;

/// One published revision.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The view.
    pub view: ClusterView,
    /// `view` as JSON, made on first use and shared by every stream client and API request
    /// (when every client is up to date, only deltas are ever serialised).
    json: std::sync::OnceLock<Arc<str>>,
    /// The change from the previous revision, as JSON: (previous revision, delta).
    pub delta: Option<(u64, Arc<str>)>,
}

impl Snapshot {
    /// Wraps a view, serialising it once.
    pub fn new(view: ClusterView) -> Self {
        Self { view, json: std::sync::OnceLock::new(), delta: None }
    }

    /// The full view as JSON.
    pub fn json(&self) -> Arc<str> {
        self.json.get_or_init(|| serde_json::to_string(&self.view).unwrap_or_else(|_| "{}".into()).into()).clone()
    }
}

/// How long to wait after the first change of a burst before deriving.
pub const COALESCE: Duration = Duration::from_millis(15);

/// Runs forever: derive on change, publish when the view differs.
pub async fn run(stores: Stores, opts: Options, tx: watch::Sender<Arc<Snapshot>>) {
    let mut revision = 0u64;
    loop {
        stores.state.notify.notified().await;
        tokio::time::sleep(COALESCE).await;
        let inputs = stores.inputs();
        let source = stores.state.source();
        let mut view = derive(&inputs, &opts, source, revision, jiff::Timestamp::now());
        // Compare ignoring revision and time, without cloning the whole view: borrow the
        // current revision's stamps for the comparison, then put the new ones back.
        let changed = {
            let cur = tx.borrow();
            let generated = std::mem::replace(&mut view.generated_at, cur.view.generated_at.clone());
            view.revision = cur.view.revision;
            let changed = view != cur.view;
            view.generated_at = generated;
            changed
        };
        if changed {
            revision += 1;
            view.revision = revision;
            let prev = tx.borrow().clone();
            let delta = app::model::ViewDelta::between(&prev.view, &view);
            let mut snap = Snapshot::new(view);
            snap.delta = serde_json::to_string(&delta).ok().map(|d| (prev.view.revision, d.into()));
            tx.send_replace(Arc::new(snap));
        }
    }
}
