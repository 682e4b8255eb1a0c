//! gpudash: watches a K3s cluster and shows what Kubernetes hides about its GPUs.

pub mod agent;
pub mod auth;
pub mod cli;
pub mod db;
pub mod demo_agents;
pub mod derive;
pub mod dra;
pub mod error;
pub mod fit;
pub mod fleet;
pub mod heartbeat;
pub mod history;
pub mod http;
pub mod metrics;
pub mod pod;
pub mod publish;
pub mod quantity;
pub mod startup;
pub mod watchers;
