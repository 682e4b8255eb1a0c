//! The browser entry point: reads the boot state the server embedded in the page and hydrates
//! the server-rendered document with the same state.
#![recursion_limit = "512"]

use app::boot::Boot;
use app::views::App;
use wasm_bindgen::prelude::wasm_bindgen;

/// Called by Leptos' hydration script once the WASM module is loaded.
#[wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Pages that do not hydrate carry no boot state (and do not load this module).
    let Some(boot) = web_sys_boot() else { return };
    leptos::mount::hydrate_body(move || leptos::prelude::view! { <App boot/> });
    // A marker for tests and for operators' devtools: hydration finished without a panic.
    if let Some(html) = leptos::prelude::document().document_element() {
        let _ = html.set_attribute("data-hydrated", "true");
    }
    // The module's linear memory, for devtools and the kiosk soak test: it only ever grows, so
    // its size over weeks on a wall screen shows whether the views leak.
    let _ = js_sys::Reflect::set(&leptos::prelude::window(), &"gpudashWasmMemory".into(), &wasm_bindgen::memory());
}

fn web_sys_boot() -> Option<Boot> {
    let doc = leptos::prelude::document();
    let text = doc.get_element_by_id("gd-boot")?.text_content()?;
    app::wire::from_browser(&text)
}
