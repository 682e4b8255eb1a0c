//! In the browser: the server-sent event stream that keeps the view live, the clock, and the
//! kiosk rotation. One EventSource per page for its whole life; it reconnects by itself.

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use crate::boot::Boot;
use crate::model::ClusterView;
use crate::views::{scope, Conn};

fn now_secs() -> i64 {
    (js_sys::Date::now() / 1000.0) as i64
}

/// Starts the stream, the clock and (in kiosk mode) the rotation.
pub fn start(boot: &Boot) {
    let Some(window) = web_sys::window() else {
        return;
    };
    // The page's language, not the browser's: the sentences in the view must match the page.
    // Nodes as their cards read them: the pages that show a node's pods are server-rendered.
    // In the browser's wire (gpudash_model::wire), not JSON.
    let url = format!("{}/api/v1/stream?lang={}&nodes=cards&wire=postcard", boot.base, boot.lang.code());

    // Clock: once a second, so ages and "stale since" move.
    let tick = Closure::<dyn FnMut()>::new(move || {
        let t = now_secs();
        scope::edit(|s| s.now = t, |l| l.now.set(t));
    });
    let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), 1000);
    tick.forget();

    if boot.kiosk && boot.rotate_seconds > 0 {
        // Each turn builds the scope again (see `scope`), so a screen left on for weeks does not
        // accumulate the views' bookkeeping.
        let rotate = Closure::<dyn FnMut()>::new(move || scope::renew(|s| s.rotated = !s.rotated));
        let ms = i32::try_from(boot.rotate_seconds.saturating_mul(1000)).unwrap_or(i32::MAX);
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(rotate.as_ref().unchecked_ref(), ms);
        rotate.forget();
    }

    start_stream(&url);
}

/// Opens the stream: full views as `message` events, deltas as `delta` events.
fn start_stream(url: &str) {
    let url2 = url.to_string();
    let Ok(es) = web_sys::EventSource::new(url) else {
        return;
    };
    // A connection's first full view replaces the view even at the same revision: the page's
    // boot carries only the lists it shows (`Boot::take_view`), and the deltas
    // that follow build on the whole view.
    let first = std::rc::Rc::new(std::cell::Cell::new(true));
    let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        if let Some(text) = e.data().as_string() {
            full_view(&text, &first);
        }
    });
    es.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    let es2 = es.clone();
    let on_delta = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        let Some(text) = e.data().as_string() else { return };
        if !delta(&text) {
            // Out of step (should not happen: the server sends deltas only on top of what it
            // sent this connection). Reconnect to get a full view.
            es2.close();
            start_stream(&url2);
        }
    });
    let _ = es.add_event_listener_with_callback("delta", on_delta.as_ref().unchecked_ref());
    on_delta.forget();
    let on_error = Closure::<dyn FnMut()>::new(lost);
    es.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
}

/// A full view from the stream: it replaces the view when it changed (or is the connection's
/// first), so an idle stream re-renders nothing.
fn full_view(text: &str, first: &std::cell::Cell<bool>) {
    let Some(v) = crate::wire::from_browser::<ClusterView>(text) else { return };
    let changed = scope::edit(
        |s| {
            s.conn = Conn::Live;
            s.view = v.clone();
            false
        },
        |l| {
            l.conn.set(Conn::Live);
            let changed = first.replace(false)
                || l.view.with_untracked(|cur| cur.revision != v.revision || cur.source != v.source);
            if changed {
                l.view.set(v.clone());
            }
            changed
        },
    );
    if changed == Some(true) {
        scope::updated();
    }
}

/// A delta from the stream, applied to the view; false when it does not apply (out of step).
/// A delta that does not parse is left alone.
fn delta(text: &str) -> bool {
    let Some(d) = crate::wire::from_browser::<crate::model::ViewDelta>(text) else { return true };
    let d = std::cell::RefCell::new(Some(d));
    let apply = |v: &mut ClusterView| d.borrow_mut().take().is_some_and(|d| d.apply(v));
    let applied = scope::edit(
        |s| {
            s.conn = Conn::Live;
            apply(&mut s.view)
        },
        |l| {
            l.conn.set(Conn::Live);
            let mut applied = false;
            l.view.update(|v| applied = apply(v));
            applied
        },
    )
    .unwrap_or(true);
    if applied {
        scope::updated();
    }
    applied
}

/// The stream broke: the page says since when it is lost (the first break, not each retry).
fn lost() {
    let lost = Conn::Lost(now_secs());
    scope::edit(
        |s| {
            if !matches!(s.conn, Conn::Lost(_)) {
                s.conn = lost;
            }
        },
        |l| {
            if !matches!(l.conn.get_untracked(), Conn::Lost(_)) {
                l.conn.set(lost);
            }
        },
    );
}
