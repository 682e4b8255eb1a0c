//! gpudash: watches a K3s cluster and shows what Kubernetes hides about its GPUs.

// The pure core, under the names the site has always used for it.
pub use gpudash_core::{agent, derive, dra, fit, pod, quantity};
// What the site serves with, shared with the fleet.
pub use gpudash_web::{auth, error};
// The fleet service, behind `gpudash fleet`.
pub use gpudash_fleet as fleet;

pub mod cli;
pub mod db;
pub mod demo_agents;
pub mod heartbeat;
pub mod history;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod publish;
pub mod startup;
pub mod watchers;
