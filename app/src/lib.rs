//! gpudash's browser-and-server crate: the view model shared with the browser, and the Leptos
//! views that render it. No kube, sqlx, tokio or plotters here: this crate builds to WASM.
#![recursion_limit = "512"]

pub mod boot;
pub mod i18n;
#[cfg(feature = "hydrate")]
mod live;
pub mod model;
#[cfg(feature = "hydrate")]
pub mod scope;
pub mod time;
pub mod units;
pub mod views;
