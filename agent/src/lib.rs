//! gpudash's node agent (in progress, issue #16): reads what a node's GPUs are doing, read-only
//! — `tegrastats` on Jetson boards ([`tegrastats`]), the node-local dcgm-exporter on discrete
//! GPUs ([`dcgm`]). The pod-resources client, the HTTP endpoint and the binary come next.

pub mod dcgm;
pub mod tegrastats;
