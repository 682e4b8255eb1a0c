//! Work the derivation may have done at once. The derivation starts no thread (the core does
//! no I/O and owns no thread, docs/design.md); a caller with a core to spare lends it through
//! [`Fork`] (the server does, for a derivation that rebuilds many nodes' views: the first
//! after the lists, while the other core has nothing to do). Without one, [`InTurn`] does the
//! work in turn. Either way the result is the same: the parts are independent and joined in
//! their order.

/// Runs two pieces of work, at once where the implementation can.
pub trait Fork: Sync {
    /// Runs `a` and `b`, each once to its end, and returns their results. A panic in either
    /// is carried on to the caller. (`Fn`, not `FnOnce`: an implementation that could not
    /// have `a` run elsewhere can still run it itself.)
    fn join<A: Send, B: Send>(&self, a: impl Fn() -> A + Sync, b: impl Fn() -> B + Sync) -> (A, B);

    /// From how many items work is split: below, a thread costs more than what it would take
    /// over (a derivation under churn rebuilds a few nodes' views, the first one all of them).
    fn split_from(&self) -> usize {
        SPLIT_FROM
    }
}

/// One thread: `a`, then `b`.
#[derive(Debug, Clone, Copy, Default)]
pub struct InTurn;

impl Fork for InTurn {
    fn join<A: Send, B: Send>(&self, a: impl Fn() -> A + Sync, b: impl Fn() -> B + Sync) -> (A, B) {
        let a = a();
        (a, b())
    }
}

/// From how many items work is split by default ([`Fork::split_from`]).
pub const SPLIT_FROM: usize = 64;

/// `f` on each of `items`, the results in the items' order: in two halves through `fork` when
/// there are enough of them ([`Fork::split_from`]), else in turn.
pub(crate) fn map_split<T: Sync, R: Send>(fork: &impl Fork, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() < fork.split_from().max(2) {
        return items.iter().map(&f).collect();
    }
    let (x, y) = items.split_at(items.len() / 2);
    let (mut done, rest) = fork.join(|| x.iter().map(&f).collect::<Vec<R>>(), || y.iter().map(&f).collect::<Vec<R>>());
    done.extend(rest);
    done
}

/// For tests: splits from two items and runs the second half first (results must not depend
/// on when a half runs).
#[cfg(test)]
pub(crate) struct Backwards;

#[cfg(test)]
impl Fork for Backwards {
    fn join<A: Send, B: Send>(&self, a: impl Fn() -> A + Sync, b: impl Fn() -> B + Sync) -> (A, B) {
        let b = b();
        (a(), b)
    }

    fn split_from(&self) -> usize {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_are_joined_in_the_items_order_whichever_ran_first() {
        let items: Vec<u32> = (0..1000).collect();
        let order = std::sync::Mutex::new(Vec::new());
        let out = map_split(&Backwards, &items, |i| {
            order.lock().unwrap_or_else(|e| e.into_inner()).push(*i);
            i * 2
        });
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        // It did split: the second half ran first.
        assert_eq!(order.lock().unwrap_or_else(|e| e.into_inner()).first(), Some(&500));
        // One item: in turn, whatever the fork; below the default, in turn too.
        let one = std::sync::Mutex::new(Vec::new());
        let seen = |i: &u32| one.lock().unwrap_or_else(|e| e.into_inner()).push(*i);
        let _ = map_split(&Backwards, &items[..1], seen);
        let _ = map_split(&InTurn, &items[..SPLIT_FROM - 1], seen);
        let seen = one.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert_eq!(seen[..2], [0, 0]);
        assert!(seen[1..].is_sorted(), "in order");
    }
}
