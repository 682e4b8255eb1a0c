//! gpudash's browser-and-server crate: the view model shared with the browser, and the Leptos
//! views that render it.

pub mod model;
