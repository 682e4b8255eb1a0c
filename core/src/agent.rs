//! A gpudash-agent's report as gpudash reads it: the agent crate's own report types (one wire
//! format for both ends; the agent crate is linked without its gRPC client), its version
//! checked, and what gpudash knows of each node's agent between pulls.

pub use gpudash_agent::dcgm::GpuUse;
pub use gpudash_agent::podresources::Allocation;
pub use gpudash_agent::report::Report;

/// The report format gpudash reads.
pub const REPORT_VERSION: u32 = gpudash_agent::report::VERSION;

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
        let r = parse(body).unwrap();
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
