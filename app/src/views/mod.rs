//! The Leptos views. They render the view model; they do not compute what the derivation should.

mod app;
mod cards;
// Pages that do not hydrate (`Page::hydrates`) stay out of the browser bundle.
#[cfg(not(feature = "hydrate"))]
mod fit;
// The fleet's page and the documents outside the app: server-rendered, never in the bundle.
#[cfg(not(feature = "hydrate"))]
pub mod fleet;
mod header;
#[cfg(not(feature = "hydrate"))]
mod history;
#[cfg(not(feature = "hydrate"))]
mod list;
#[cfg(not(feature = "hydrate"))]
mod node;
mod pages;
#[cfg(not(feature = "hydrate"))]
pub mod plain;
#[cfg(not(feature = "hydrate"))]
mod quotas;
#[cfg(not(feature = "hydrate"))]
mod reports;
#[cfg(not(feature = "hydrate"))]
mod sheet;

#[cfg(feature = "hydrate")]
pub use crate::scope;
#[cfg(not(feature = "hydrate"))]
pub use app::shell;
pub use app::{App, Conn, Live, Seed};
