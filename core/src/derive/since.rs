//! Since when each diagnosis has held: kept across revisions for the open ones, carried over a
//! restart from history.

use std::sync::Arc;

use gpudash_model::model::{PendingPod, Source};

use super::{ts, Cache, Map};

/// A diagnosis' identity: code, kind, namespace, name.
pub type DiagKey = (String, String, String, String);

/// The identity of a diagnosis, as history keys it.
pub fn diag_key(d: &gpudash_model::model::Diagnosis) -> DiagKey {
    (d.code.to_string(), d.kind.to_string(), d.namespace.clone().unwrap_or_default(), d.name.clone())
}

/// Since when each open diagnosis has held, by a hash of its identity (the identity kept too,
/// and compared: a diagnosis that goes on costs a lookup, no copy of its names), with the
/// revision that last found it.
#[derive(Debug, Default)]
pub(super) struct Since {
    pub(super) open: Map<u64, (DiagKey, String, u64)>,
    run: u64,
}

/// The identity of a diagnosis, borrowed.
fn diag_id(d: &gpudash_model::model::Diagnosis) -> (&str, &str, &str, &str) {
    (d.code.as_str(), d.kind.as_str(), d.namespace.as_deref().unwrap_or(""), d.name.as_str())
}

fn same_id(k: &DiagKey, id: (&str, &str, &str, &str)) -> bool {
    (k.0.as_str(), k.1.as_str(), k.2.as_str(), k.3.as_str()) == id
}

/// Gives a diagnosis the time it has held since; one that goes on says it already, and is not
/// copied.
fn give(d: &mut Arc<gpudash_model::model::Diagnosis>, first: &str) {
    if d.since.as_deref() != Some(first) {
        Arc::make_mut(d).since = Some(first.to_string());
    }
}

/// Gives each diagnosis the time since when it has held, and keeps the times of the open ones
/// for the next run; the pending pods' copies get the same. A diagnosis kept from the last
/// revision already says it (see [`diagnose::OfView`]) and is left as it is.
pub(super) fn stamp(
    diagnoses: &mut [Arc<gpudash_model::model::Diagnosis>],
    pending: &mut [PendingPod],
    source: &Source,
    now: &jiff::Timestamp,
    cache: &mut Cache,
) {
    use std::hash::BuildHasher as _;
    let carried = if source.synced { cache.carried.take() } else { None };
    let now_text = ts(now);
    let since = &mut cache.since;
    since.run += 1;
    let run = since.run;
    let hasher = foldhash::fast::FixedState::default();
    for d in diagnoses.iter_mut() {
        let id = diag_id(d);
        let h = hasher.hash_one(id);
        match since.open.get_mut(&h) {
            Some((k, first, seen)) if same_id(k, id) => {
                *seen = run;
                give(d, first);
            }
            // Another identity under the same hash (or none): this one starts now, or when
            // history last saw it raised.
            _ => {
                let key = diag_key(d);
                let first = carried.as_ref().and_then(|c| c.get(&key)).cloned().unwrap_or_else(|| now_text.clone());
                give(d, &first);
                since.open.entry(h).or_insert_with(|| (key, first, run));
            }
        }
    }
    since.open.retain(|_, (_, _, seen)| *seen == run);
    for p in pending.iter_mut() {
        for d in &mut p.problems {
            if let Some((_, first, _)) =
                since.open.get(&hasher.hash_one(diag_id(d))).filter(|(k, _, _)| same_id(k, diag_id(d)))
            {
                give(d, first);
            }
        }
    }
}
