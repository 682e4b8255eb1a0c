//! The stores the watchers fill and the derivation reads: every object of a kind, each behind
//! an `Arc` that stays the same until the object changes (the derivation's "unchanged" is a
//! pointer comparison).
//!
//! Why not kube-rs' reflector: its writer takes each watch event by reference and clones the
//! object into its store — on the first list at 1,000 nodes 30,000 pods copied and the decoded
//! ones dropped, a tenth of the CPU the list was read with (docs/benchmarks.md, "Twenty-fourth
//! round"). This writer takes the event: the object decoded is the object stored. Objects are
//! keyed by namespace and name as the reflector keys them, without a copy of either (the table
//! hashes the object's own). A list's objects are gathered aside and take the store's place at
//! its end, as the reflector's are: a relist never shows a kind half listed.

use std::sync::{Arc, PoisonError, RwLock};

use hashbrown::hash_table::{Entry, HashTable};
use kube::runtime::watcher::{self, Event};
use kube::Resource;

use super::Seen;

type Table<K> = HashTable<Arc<K>>;

/// Every object of a kind, as the watch last told it; clones share it.
pub struct Store<K>(Arc<RwLock<Table<K>>>);

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<K> Store<K> {
    /// Every object, in the table's order: the same from one call to the next while no object
    /// is added or removed (a changed object keeps its place).
    pub fn state(&self) -> Vec<Arc<K>> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect()
    }
}

/// Feeds a [`Store`] from a watch's events.
pub struct Writer<K> {
    store: Store<K>,
    /// The list under way, if one is.
    listing: Option<Table<K>>,
    hasher: foldhash::fast::RandomState,
    /// What an object goes through before it is stored (stripping what is never read).
    prepare: fn(&mut K),
}

/// An empty store and its writer; `prepare` is applied to every object the writer takes.
pub fn store<K>(prepare: fn(&mut K)) -> (Store<K>, Writer<K>) {
    let store = Store(Arc::new(RwLock::new(Table::new())));
    (store.clone(), Writer { store, listing: None, hasher: foldhash::fast::RandomState::default(), prepare })
}

fn name_of<K: Resource>(o: &K) -> (&str, &str) {
    let m = o.meta();
    (m.namespace.as_deref().unwrap_or(""), m.name.as_deref().unwrap_or(""))
}

/// An object's place in a table: the hash of its namespace and name.
fn hash_of<K: Resource>(hasher: &foldhash::fast::RandomState, o: &K) -> u64 {
    std::hash::BuildHasher::hash_one(hasher, name_of(o))
}

impl<K: Resource + Clone + PartialEq> Writer<K> {
    /// Takes in one item of the watch and says what it was.
    pub fn apply(&mut self, item: Result<Event<K>, watcher::Error>) -> Seen {
        match item {
            Ok(Event::Init) => {
                self.listing = Some(Table::new());
                Seen::Init
            }
            Ok(Event::InitApply(mut o)) => {
                (self.prepare)(&mut o);
                let listing = self.listing.get_or_insert_with(Table::new);
                // A list names an object once; were one named twice, the last stands.
                let _old = put(listing, Arc::new(o), &self.hasher);
                Seen::InitApply
            }
            Ok(Event::InitDone) => {
                let listed = self.listing.take().unwrap_or_default();
                // The objects gone with the old table are let go outside the lock.
                let _old =
                    std::mem::replace(&mut *self.store.0.write().unwrap_or_else(PoisonError::into_inner), listed);
                Seen::InitDone
            }
            Ok(Event::Apply(mut o)) => {
                (self.prepare)(&mut o);
                let new = Arc::new(o);
                let old =
                    put(&mut self.store.0.write().unwrap_or_else(PoisonError::into_inner), new.clone(), &self.hasher);
                // Compared with the object it replaced, outside the lock.
                if old.is_some_and(|old| same_but_version(&*old, &*new)) {
                    Seen::Same
                } else {
                    Seen::Change
                }
            }
            Ok(Event::Delete(o)) => {
                let (hash, key) = (hash_of(&self.hasher, &o), name_of(&o));
                let mut table = self.store.0.write().unwrap_or_else(PoisonError::into_inner);
                let _gone = table.find_entry(hash, |x| name_of(&**x) == key).ok().map(|e| e.remove().0);
                drop(table);
                Seen::Change
            }
            Err(e) => Seen::Error(e),
        }
    }
}

/// Puts `o` in `table` in the place of the object of the same name, if any (returned).
fn put<K: Resource>(table: &mut Table<K>, o: Arc<K>, hasher: &foldhash::fast::RandomState) -> Option<Arc<K>> {
    let (hash, key) = (hash_of(hasher, &*o), name_of(&*o));
    match table.entry(hash, |x| name_of(&**x) == key, |x| hash_of(hasher, &**x)) {
        Entry::Occupied(mut e) => Some(std::mem::replace(e.get_mut(), o)),
        Entry::Vacant(e) => {
            e.insert(o);
            None
        }
    }
}

/// Whether two versions of an object are the same but for their resourceVersion (after
/// stripping: a node's heartbeat time, managed fields and annotations are gone already).
fn same_but_version<K: Resource + Clone + PartialEq>(old: &K, new: &K) -> bool {
    if old.meta().resource_version == new.meta().resource_version {
        return old == new;
    }
    let (mut a, mut b) = (old.clone(), new.clone());
    a.meta_mut().resource_version = None;
    b.meta_mut().resource_version = None;
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn cm(ns: &str, name: &str, version: &str, value: &str) -> ConfigMap {
        let mut c = ConfigMap::default();
        c.metadata.namespace = Some(ns.into());
        c.metadata.name = Some(name.into());
        c.metadata.resource_version = Some(version.into());
        c.data = Some([("v".to_string(), value.to_string())].into());
        c
    }

    fn names(s: &Store<ConfigMap>) -> Vec<String> {
        let mut v: Vec<String> = s
            .state()
            .iter()
            .map(|c| {
                format!("{}/{}={}", name_of(&**c).0, name_of(&**c).1, c.data.as_ref().map_or("", |d| d["v"].as_str()))
            })
            .collect();
        v.sort();
        v
    }

    fn mark(c: &mut ConfigMap) {
        c.metadata.labels = Some([("prepared".to_string(), "yes".to_string())].into());
    }

    #[test]
    fn a_list_takes_the_stores_place_at_its_end_and_objects_are_prepared() {
        let (s, mut w) = store(mark);
        assert!(matches!(w.apply(Ok(Event::Init)), Seen::Init));
        assert!(matches!(w.apply(Ok(Event::InitApply(cm("a", "x", "1", "1")))), Seen::InitApply));
        // Same name in another namespace is another object.
        w.apply(Ok(Event::InitApply(cm("b", "x", "2", "1"))));
        assert!(s.state().is_empty(), "half a list is not shown");
        assert!(matches!(w.apply(Ok(Event::InitDone)), Seen::InitDone));
        assert_eq!(names(&s), ["a/x=1", "b/x=1"]);
        assert!(s.state().iter().all(|c| c.metadata.labels.is_some()), "prepared before storing");
        // A relist: what it does not name is gone at its end, not before.
        w.apply(Ok(Event::Init));
        w.apply(Ok(Event::InitApply(cm("a", "x", "3", "2"))));
        assert_eq!(names(&s), ["a/x=1", "b/x=1"]);
        w.apply(Ok(Event::InitDone));
        assert_eq!(names(&s), ["a/x=2"]);
    }

    #[test]
    fn an_update_replaces_its_object_in_place_and_says_whether_anything_but_the_version_changed() {
        let (s, mut w) = store(mark);
        w.apply(Ok(Event::Init));
        for i in 0..100 {
            w.apply(Ok(Event::InitApply(cm("ns", &format!("o{i}"), "1", "0"))));
        }
        w.apply(Ok(Event::InitDone));
        let before = s.state();
        assert!(matches!(w.apply(Ok(Event::Apply(cm("ns", "o7", "2", "0")))), Seen::Same));
        assert!(matches!(w.apply(Ok(Event::Apply(cm("ns", "o7", "3", "9")))), Seen::Change));
        let after = s.state();
        assert_eq!(after.len(), 100);
        // Every other object is the same Arc, in the same place; the changed one is new there.
        let moved: Vec<usize> = (0..100).filter(|&i| !Arc::ptr_eq(&before[i], &after[i])).collect();
        assert_eq!(moved.len(), 1);
        assert_eq!(name_of(&*after[moved[0]]), ("ns", "o7"));
        assert_eq!(after[moved[0]].data.as_ref().map(|d| d["v"].clone()), Some("9".to_string()));
        // New objects and deletions, also before any list.
        assert!(matches!(w.apply(Ok(Event::Apply(cm("ns", "new", "4", "1")))), Seen::Change));
        assert!(matches!(w.apply(Ok(Event::Delete(cm("ns", "o7", "5", "9")))), Seen::Change));
        assert!(matches!(w.apply(Ok(Event::Delete(cm("ns", "never", "6", "9")))), Seen::Change));
        let now = names(&s);
        assert_eq!(now.len(), 100);
        assert!(now.contains(&"ns/new=1".to_string()) && !now.iter().any(|n| n.starts_with("ns/o7=")));
        let (fresh, mut w2) = store(mark);
        w2.apply(Ok(Event::Apply(cm("", "cluster-scoped", "1", "1"))));
        assert_eq!(names(&fresh), ["/cluster-scoped=1"]);
        assert!(matches!(w2.apply(Err(watcher::Error::NoResourceVersion)), Seen::Error(_)));
    }
}
