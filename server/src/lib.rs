//! gpudash: watches a K3s cluster and shows what Kubernetes hides about its GPUs.

// The pure core, under the names the site has always used for it.
pub use gpudash_core::{agent, derive, dra, fit, pod, quantity};

pub mod auth;
pub mod cli;
pub mod db;
pub mod demo_agents;
pub mod error;
pub mod fleet;
pub mod heartbeat;
pub mod history;
pub mod http;
pub mod metrics;
pub mod publish;
pub mod startup;
pub mod watchers;
