//! gpudash's browser-and-server crate: the Leptos views that render the view model, and what a
//! page boots from. The view model and the catalogues are `gpudash-model`'s (re-exported here
//! under their old paths). No kube, sqlx, tokio or plotters here: this crate builds to WASM.
#![recursion_limit = "512"]
// A bundle with one page's views leaves the other pages' helpers unused.
#![cfg_attr(all(feature = "hydrate", not(all(feature = "overview-page", feature = "lists-page"))), allow(dead_code))]

pub mod boot;
#[cfg(feature = "hydrate")]
mod live;
#[cfg(feature = "hydrate")]
pub mod scope;
pub mod views;

pub use gpudash_model::{i18n, model, time, units, wire};
// The server's: a sentence in both languages (the browser receives one).
#[cfg(not(feature = "hydrate"))]
pub use gpudash_model::{say, sentences};
