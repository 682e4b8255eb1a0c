//! gpudash's node agent: what a node's GPUs are doing and who holds them, read-only — the
//! kubelet's pod-resources API ([`kubelet`]: the exact device IDs each pod was handed),
//! `tegrastats` on Jetson boards ([`tegrastats`]), GPU memory per process and pod from nvmap
//! ([`gpumem`]) and the node-local dcgm-exporter on discrete
//! GPUs ([`dcgm`]), served as one JSON [`report`]. The report's types are the wire format
//! gpudash reads too (it links this crate without the `kubelet` feature: no gRPC in it).

pub mod dcgm;
pub mod gpumem;
#[cfg(feature = "kubelet")]
pub mod kubelet;
#[cfg(feature = "kubelet")]
pub mod nvml;
pub mod podresources;
pub mod report;
pub mod tegrastats;
