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
/// revision already says it (see [`diagnose::OfView`]) and is left as it is. The pending pods
/// share the list's diagnoses (one `Arc` each): they let go of them while the list is stamped,
/// so that each is stamped in place, and share the stamped ones again — holding on would copy
/// every new diagnosis a pending pod has (10,000 flood pods: ~15 MiB, kept for good).
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
    let held = let_go(diagnoses, pending);
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
    for (p, held) in pending.iter_mut().zip(held) {
        p.problems = held
            .into_iter()
            .map(|h| match h {
                Held::Listed(i) => Arc::clone(&diagnoses[i]),
                Held::Own(mut d) => {
                    if let Some((_, first, _)) =
                        since.open.get(&hasher.hash_one(diag_id(&d))).filter(|(k, _, _)| same_id(k, diag_id(&d)))
                    {
                        give(&mut d, first);
                    }
                    d
                }
            })
            .collect();
    }
}

/// A pending pod's diagnosis while the list is stamped: the list's own (by its place there),
/// or one the list does not have.
enum Held {
    Listed(usize),
    Own(Arc<gpudash_model::model::Diagnosis>),
}

/// Takes every pending pod's diagnoses, dropping the pod's hold on the ones `diagnoses` has
/// (found by address): what each pod held, in its order.
fn let_go(diagnoses: &[Arc<gpudash_model::model::Diagnosis>], pending: &mut [PendingPod]) -> Vec<Vec<Held>> {
    let at: std::collections::HashMap<*const gpudash_model::model::Diagnosis, usize> =
        diagnoses.iter().enumerate().map(|(i, d)| (Arc::as_ptr(d), i)).collect();
    pending
        .iter_mut()
        .map(|p| {
            std::mem::take(&mut p.problems)
                .into_iter()
                .map(|d| at.get(&Arc::as_ptr(&d)).map_or(Held::Own(d), |&i| Held::Listed(i)))
                .collect()
        })
        .collect()
}
