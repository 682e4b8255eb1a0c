//! Renewing the live scope (the browser only).
//!
//! Leptos 0.8 keeps two kinds of bookkeeping for as long as a signal or owner lives: every
//! effect that ever read a signal stays in that signal's subscriber set after the effect is
//! dropped, and every row a `<For>` ever created stays in its parent owner's child list. On a
//! page that lives for weeks (a kiosk) under churn, both grow without bound — measured at
//! ~1.3 KB/s on the pending page with 20 changes/s. So the signals the views read, and every
//! owner below them, belong to a scope that is dropped and built again (same DOM, rebuilt in
//! place) on each kiosk rotation and every [`RENEW_EVERY`] updates; dropping it frees that
//! bookkeeping. Only the stream, the clock and the rotation (in [`crate::live`]) outlive it,
//! writing into whichever scope is current.

use std::cell::{Cell, RefCell};

use leptos::prelude::*;

use crate::views::{Live, Seed};

/// Updates applied before the scope is renewed.
pub const RENEW_EVERY: u32 = 200;

thread_local! {
    static CURRENT: Cell<Option<Live>> = const { Cell::new(None) };
    static SEED: RefCell<Option<Seed>> = const { RefCell::new(None) };
    static EPOCH: Cell<Option<RwSignal<u64>>> = const { Cell::new(None) };
    static UPDATES: Cell<u32> = const { Cell::new(0) };
}

pub(crate) fn set_epoch(e: RwSignal<u64>) {
    EPOCH.with(|c| c.set(Some(e)));
}

pub(crate) fn set_current(l: Live) {
    CURRENT.with(|c| c.set(Some(l)));
}

pub(crate) fn take_seed() -> Option<Seed> {
    SEED.with(|s| s.borrow_mut().take())
}

/// The current scope's signals.
pub fn current() -> Option<Live> {
    CURRENT.with(Cell::get)
}

/// Rebuilds the scope from the current values, changed by `edit`.
pub fn renew(edit: impl FnOnce(&mut Seed)) {
    let (Some(live), Some(epoch)) = (current(), EPOCH.with(Cell::get)) else { return };
    // A renewal already under way has the newest state in its seed.
    let pending = SEED.with(|s| s.borrow_mut().take());
    let mut seed = pending.unwrap_or_else(|| Seed {
        view: live.view.get_untracked(),
        now: live.now.get_untracked(),
        conn: live.conn.get_untracked(),
        rotated: live.rotated.get_untracked(),
    });
    edit(&mut seed);
    SEED.with(|s| *s.borrow_mut() = Some(seed));
    UPDATES.with(|u| u.set(0));
    epoch.update(|e| *e += 1);
}

/// Counts an applied update; renews the scope every [`RENEW_EVERY`].
pub fn updated() {
    let n = UPDATES.with(|u| {
        u.set(u.get() + 1);
        u.get()
    });
    if n >= RENEW_EVERY {
        renew(|_| {});
    }
}

/// Changes the state: the pending seed while a renewal is under way (the new scope is
/// built from it on the next tick), else the current scope's signals.
pub fn edit<R>(on_seed: impl FnOnce(&mut Seed) -> R, on_live: impl FnOnce(Live) -> R) -> Option<R> {
    let pending = SEED.with(|s| s.borrow().is_some());
    if pending {
        return SEED.with(|s| s.borrow_mut().as_mut().map(on_seed));
    }
    current().map(on_live)
}
