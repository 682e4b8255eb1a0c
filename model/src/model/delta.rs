//! The live stream's delta protocol: what changed between two revisions, lists sent as runs
//! the receiver already has plus new items, and row fingerprints.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{ClusterView, Diagnosis, NodeView, PendingPod, Source, Totals};

/// What changed between two revisions: what the live stream sends after the first full view,
/// so that a change on one node costs one node's worth of bytes, not the whole cluster's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ViewDelta {
    /// The revision this applies to.
    pub base: u64,
    /// The revision it produces.
    pub revision: u64,
    /// As in [`ClusterView`].
    pub generated_at: String,
    /// Replaced whole.
    pub source: Source,
    /// Replaced whole.
    pub totals: Totals,
    /// The pending list, from the previous one.
    pub pending: Vec<Piece<PendingPod>>,
    /// The diagnoses, from the previous list.
    pub diagnoses: Vec<Piece<Arc<Diagnosis>>>,
    /// Nodes added or changed.
    pub nodes_changed: Vec<Arc<NodeView>>,
    /// Nodes removed, by name.
    pub nodes_removed: Vec<String>,
    /// Replaced whole (a short list).
    #[serde(default)]
    pub blocked: Vec<PendingPod>,
    /// Replaced whole (not read by the browser).
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub quotas: Vec<super::QuotaView>,
}

impl ViewDelta {
    /// The delta from `old` to `new` (both with nodes sorted by name).
    pub fn between(old: &ClusterView, new: &ClusterView) -> Self {
        let mut changed = Vec::new();
        let mut removed = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < old.nodes.len() || j < new.nodes.len() {
            match (old.nodes.get(i), new.nodes.get(j)) {
                (Some(a), Some(b)) if a.name == b.name => {
                    if a != b {
                        changed.push(b.clone());
                    }
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.name < b.name => {
                    removed.push(a.name.clone());
                    i += 1;
                }
                (_, Some(b)) => {
                    changed.push(b.clone());
                    j += 1;
                }
                (Some(a), None) => {
                    removed.push(a.name.clone());
                    i += 1;
                }
                (None, None) => break,
            }
        }
        Self {
            base: old.revision,
            revision: new.revision,
            generated_at: new.generated_at.clone(),
            source: new.source.clone(),
            totals: new.totals.clone(),
            pending: Piece::diff(&old.pending, &new.pending, |p| fingerprint(&(&p.namespace, &p.name))),
            diagnoses: Piece::diff(&old.diagnoses, &new.diagnoses, |d| {
                fingerprint(&(d.code.as_str(), d.kind.as_str(), d.namespace.as_deref(), d.name.as_str()))
            }),
            nodes_changed: changed,
            nodes_removed: removed,
            blocked: new.blocked.clone(),
            quotas: new.quotas.clone(),
        }
    }

    /// Applies to `view`; false (and `view` untouched) when `view` is not at `base`.
    pub fn apply(self, view: &mut ClusterView) -> bool {
        if view.revision != self.base {
            return false;
        }
        let (Some(pending), Some(diagnoses)) =
            (Piece::rebuild(&view.pending, self.pending), Piece::rebuild(&view.diagnoses, self.diagnoses))
        else {
            return false;
        };
        view.nodes.retain(|n| !self.nodes_removed.contains(&n.name));
        for n in self.nodes_changed {
            match view.nodes.binary_search_by(|x| x.name.cmp(&n.name)) {
                Ok(i) => view.nodes[i] = n,
                Err(i) => view.nodes.insert(i, n),
            }
        }
        view.revision = self.revision;
        view.generated_at = self.generated_at;
        view.source = self.source;
        view.totals = self.totals;
        view.pending = pending;
        view.diagnoses = diagnoses;
        view.blocked = self.blocked;
        view.quotas = self.quotas;
        true
    }
}

/// A fingerprint of a value, for keying rows: two rows with the same fingerprint are taken to
/// be the same (FNV-1a over the value's `Hash`; small enough for the browser bundle).
pub fn fingerprint<T: std::hash::Hash + ?Sized>(t: &T) -> u64 {
    struct Fnv(u64);
    impl std::hash::Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    t.hash(&mut h);
    std::hash::Hasher::finish(&h)
}

/// One piece of a list sent as a change to the previous list: a run of items the receiver
/// already has, or a new item. A list of a few hundred diagnoses that did not change travels
/// as one `{"Keep":[0,200]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece<T> {
    /// `len` items from position `from` of the previous list.
    Keep(u32, u32),
    /// An item the previous list does not have (as it is now).
    Put(T),
}

impl<T: Clone + PartialEq> Piece<T> {
    /// The pieces that turn `old` into `new`; `key` identifies an item across the two (a
    /// fingerprint is enough: an item is kept only when it also equals the old one). An item
    /// equal to the one after the last kept is kept without being keyed, so a list where one
    /// item changed costs one comparison per item (a pointer comparison for `Arc`s) and the
    /// keys of the old list are taken only when something moved.
    pub fn diff<K: std::hash::Hash + Eq>(old: &[T], new: &[T], key: impl Fn(&T) -> K) -> Vec<Self> {
        let mut index: Option<std::collections::HashMap<K, usize>> = None;
        let mut out: Vec<Self> = Vec::new();
        let mut next = 0;
        for t in new {
            let at = if old.get(next) == Some(t) {
                Some(next)
            } else {
                let index = index.get_or_insert_with(|| old.iter().enumerate().map(|(i, t)| (key(t), i)).collect());
                index.get(&key(t)).copied().filter(|&i| old[i] == *t)
            };
            if let Some(i) = at {
                next = i + 1;
            }
            match (at.and_then(|i| u32::try_from(i).ok()), out.last_mut()) {
                (Some(i), Some(Self::Keep(from, len))) if *from + *len == i => *len += 1,
                (Some(i), _) => out.push(Self::Keep(i, 1)),
                (None, _) => out.push(Self::Put(t.clone())),
            }
        }
        out
    }

    /// Builds the new list from the previous one; `None` when a piece points outside it.
    pub fn rebuild(old: &[T], pieces: Vec<Self>) -> Option<Vec<T>> {
        let mut out = Vec::with_capacity(old.len());
        for p in pieces {
            match p {
                Self::Keep(from, len) => {
                    let (from, len) = (from as usize, len as usize);
                    out.extend_from_slice(old.get(from..from.checked_add(len)?)?);
                }
                Self::Put(t) => out.push(t),
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ReasonCount, Totals};

    fn node(name: &str, ready: bool) -> Arc<NodeView> {
        Arc::new(NodeView { name: name.into(), ready, ..NodeView::default() })
    }

    #[test]
    fn a_delta_turns_the_old_view_into_the_new_one() {
        let old = ClusterView {
            revision: 4,
            nodes: vec![node("a", true), node("b", true), node("d", true)],
            ..ClusterView::default()
        };
        let new = ClusterView {
            revision: 5,
            nodes: vec![node("a", true), node("b", false), node("c", true)],
            totals: Totals { nodes: 3, ..Totals::default() },
            ..ClusterView::default()
        };
        let d = ViewDelta::between(&old, &new);
        assert_eq!(d.nodes_changed.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(), vec!["b", "c"]);
        assert_eq!(d.nodes_removed, vec!["d"]);
        let mut v = old.clone();
        assert!(d.clone().apply(&mut v));
        assert_eq!(v, new);
        assert!(!d.apply(&mut v), "a delta applies only to its base revision");
    }

    fn pod(name: &str, reason: &str) -> PendingPod {
        PendingPod {
            namespace: "ml".into(),
            name: name.into(),
            reasons: vec![ReasonCount { reason: reason.into(), nodes: Some(1), verbatim: false }],
            ..PendingPod::default()
        }
    }

    #[test]
    fn lists_travel_as_kept_runs_and_new_items() {
        let old = vec![pod("a", "x"), pod("b", "x"), pod("c", "x"), pod("d", "x")];
        // b changed, c removed, e added, order otherwise kept.
        let new = vec![pod("a", "x"), pod("b", "y"), pod("d", "x"), pod("e", "x")];
        let pieces = Piece::diff(&old, &new, |p| p.name.clone());
        assert_eq!(
            pieces,
            vec![Piece::Keep(0, 1), Piece::Put(pod("b", "y")), Piece::Keep(3, 1), Piece::Put(pod("e", "x"))]
        );
        assert_eq!(Piece::rebuild(&old, pieces), Some(new.clone()));
        let same = Piece::diff(&new, &new, |p| p.name.clone());
        assert_eq!(same, vec![Piece::Keep(0, 4)]);
        // A piece outside the receiver's list is refused, not a panic.
        assert_eq!(Piece::rebuild(&old, vec![Piece::<PendingPod>::Keep(3, 2)]), None);
        assert_eq!(Piece::rebuild(&old, vec![Piece::<PendingPod>::Keep(u32::MAX, u32::MAX)]), None);
    }

    #[test]
    fn a_delta_carries_list_changes_and_refuses_a_wrong_base_list() {
        let old = ClusterView { revision: 1, pending: vec![pod("a", "x"), pod("b", "x")], ..ClusterView::default() };
        let new = ClusterView { revision: 2, pending: vec![pod("b", "x"), pod("c", "x")], ..ClusterView::default() };
        let d = ViewDelta::between(&old, &new);
        let mut v = old.clone();
        assert!(d.clone().apply(&mut v));
        assert_eq!(v, new);
        let mut short = ClusterView { revision: 1, ..ClusterView::default() };
        assert!(!d.apply(&mut short), "a delta whose runs do not fit the receiver's list is refused");
        assert!(short.pending.is_empty());
    }
}
