//! gpudash's node agent: what a node's GPUs are doing and who holds them, read-only — the
//! kubelet's pod-resources API ([`podresources`]: the exact device IDs each pod was handed),
//! `tegrastats` on Jetson boards ([`tegrastats`]) and the node-local dcgm-exporter on discrete
//! GPUs ([`dcgm`]), served as one JSON [`report`].

pub mod dcgm;
pub mod podresources;
pub mod report;
pub mod tegrastats;
