//! The Leptos views. They render the view model; they do not compute what the derivation should.

mod app;
mod cards;
mod fit;
mod header;
mod history;
mod pages;

pub use app::{shell, App, Conn, Live};
