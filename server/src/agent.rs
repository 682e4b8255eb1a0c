//! What gpudash reads of a gpudash-agent's report (`GET /v1/report`, format version 1): the
//! kubelet's device map, the board's tegrastats sample and dcgm-exporter's per-GPU use. Only
//! these fields are declared; the rest of the report is skipped while parsing.

use serde::Deserialize;

/// The report format gpudash reads.
pub const REPORT_VERSION: u32 = 1;

/// One source's latest reading (see the agent's `report` module).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct Reading<T> {
    /// The latest good reading.
    #[serde(default = "Option::default")]
    pub value: Option<T>,
    /// When it was taken (Unix seconds, the node's clock).
    #[serde(default)]
    pub seen_at: Option<u64>,
    /// Why the latest attempt failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// Device IDs of one resource.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Devices {
    /// `nvidia.com/gpu`, …
    pub resource: String,
    /// The IDs as the device plugin named them (`GPU-…::2`, `MIG-…`, `tegra`).
    pub ids: Vec<String>,
}

/// The devices a pod was handed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PodDevices {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Per resource.
    pub devices: Vec<Devices>,
}

/// The kubelet's pod-resources answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Allocation {
    /// Every healthy device, per resource.
    #[serde(default)]
    pub allocatable: Vec<Devices>,
    /// Pods holding devices.
    #[serde(default)]
    pub pods: Vec<PodDevices>,
}

/// A tegrastats sample (Jetson).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Tegra {
    /// Board RAM in use (shared by CPU and GPU), bytes.
    pub ram_used_bytes: u64,
    /// Board RAM the kernel manages, bytes.
    pub ram_total_bytes: u64,
    /// GR3D busy, percent.
    #[serde(default)]
    pub gpu_busy_percent: Option<u8>,
}

/// One discrete GPU's use from dcgm-exporter.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GpuUse {
    /// Index on the node.
    #[serde(default)]
    pub index: String,
    /// `GPU-…` UUID.
    #[serde(default)]
    pub uuid: Option<String>,
    /// Utilisation, percent.
    #[serde(default)]
    pub busy_percent: Option<f64>,
    /// Framebuffer used, bytes.
    #[serde(default)]
    pub memory_used_bytes: Option<u64>,
}

/// A report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Report {
    /// Format version.
    pub version: u32,
    /// The node the agent says it runs on.
    #[serde(default)]
    pub node: Option<String>,
    /// The kubelet's map (null when the agent was told not to read it).
    #[serde(default)]
    pub kubelet: Option<Reading<Allocation>>,
    /// tegrastats (null off Jetson).
    #[serde(default)]
    pub tegrastats: Option<Reading<Tegra>>,
    /// dcgm-exporter (null when not asked for).
    #[serde(default)]
    pub dcgm: Option<Reading<Vec<GpuUse>>>,
}

/// Why a report cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// Not JSON of the report's shape.
    #[error("not a gpudash-agent report: {0}")]
    Shape(String),
    /// A format this gpudash does not read.
    #[error("report format {0} (this gpudash reads format {REPORT_VERSION}): upgrade gpudash or the agent")]
    Version(u32),
}

/// Parses a report's JSON.
pub fn parse(body: &[u8]) -> Result<Report, ReportError> {
    let r: Report = serde_json::from_slice(body).map_err(|e| ReportError::Shape(e.to_string()))?;
    if r.version != REPORT_VERSION {
        return Err(ReportError::Version(r.version));
    }
    Ok(r)
}

/// What gpudash knows of one node's agent: its latest good report and when it was had, or why
/// the last pull failed. The derivation decides from `last_ok` whether it is stale.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSeen {
    /// The node.
    pub node: String,
    /// The agent pod (`namespace/name`).
    pub pod: String,
    /// The latest good report.
    pub report: Option<Report>,
    /// When it was pulled.
    pub last_ok: Option<jiff::Timestamp>,
    /// Why the latest pull failed.
    pub error: Option<String>,
}

/// The replica a device ID names: `GPU-…::3` → (`GPU-…`, Some(3)); a whole device → (id, None).
pub fn split_replica(id: &str) -> (&str, Option<u32>) {
    match id.rsplit_once("::") {
        Some((gpu, r)) => match r.parse() {
            Ok(n) => (gpu, Some(n)),
            Err(_) => (id, None),
        },
        None => (id, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_parse_and_bad_ones_are_said() {
        let body = br#"{"version":1,"node":"n","generated_at":5,"kubelet":{"value":{"allocatable":[{"resource":"nvidia.com/gpu","ids":["GPU-a::0","GPU-a::1"]}],"pods":[{"namespace":"ml","name":"p","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-a::1"]}]}]},"seen_at":4,"error":null},"tegrastats":null,"dcgm":{"value":null,"seen_at":null,"error":"refused"},"extra":{}}"#;
        let r = parse(body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            r.kubelet.and_then(|k| k.value).map(|a| a.pods[0].devices[0].ids.clone()),
            Some(vec!["GPU-a::1".into()])
        );
        assert_eq!(r.dcgm.and_then(|d| d.error).as_deref(), Some("refused"));
        assert!(matches!(parse(br#"{"version":2}"#), Err(ReportError::Version(2))));
        assert!(matches!(parse(b"<html>"), Err(ReportError::Shape(_))));
        assert_eq!(split_replica("GPU-a::12"), ("GPU-a", Some(12)));
        assert_eq!(split_replica("tegra"), ("tegra", None));
        assert_eq!(split_replica("MIG-x"), ("MIG-x", None));
    }
}
