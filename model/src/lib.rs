//! gpudash's view model and its catalogues: the types the derivation (`gpudash-core`) makes and
//! the views (`app`) render, the sentences in English and Japanese, times and units as shown.
//! No Leptos, async runtime or I/O: the pure core depends on this crate, not on the UI's, so
//! editing a view rebuilds no derivation and the wall "the core has no runtime" is kept by the
//! dependency tree (`tests/tests/walls.rs`). With `hydrate` (the browser's build), codes and
//! sentences are the strings they render as.

pub mod i18n;
pub mod model;
pub mod time;
pub mod units;
pub mod url;
pub mod wire;
