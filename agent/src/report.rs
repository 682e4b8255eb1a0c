//! What the agent serves at `GET /v1/report`: for each source (the kubelet, tegrastats,
//! dcgm-exporter) the latest reading, when it was taken and why the last attempt failed. A
//! source keeps its last good reading after a failure, with its time: gpudash decides from
//! `seen_at` whether it is stale, and never reads a failure as zero.

use serde::{Deserialize, Serialize};

use crate::{dcgm, gpumem, podresources, tegrastats};

/// The report's format version (bumped on incompatible change).
pub const VERSION: u32 = 1;

/// One source's latest reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct Reading<T> {
    /// The latest good reading.
    #[serde(default = "Option::default")]
    pub value: Option<T>,
    /// When it was taken (Unix seconds).
    #[serde(default)]
    pub seen_at: Option<u64>,
    /// Why the latest attempt failed (cleared by the next good one).
    #[serde(default)]
    pub error: Option<String>,
}

impl<T> Default for Reading<T> {
    fn default() -> Self {
        Self { value: None, seen_at: None, error: None }
    }
}

impl<T> Reading<T> {
    /// A good reading at `now`.
    pub fn set(&mut self, value: T, now: u64) {
        self.value = Some(value);
        self.seen_at = Some(now);
        self.error = None;
    }

    /// A failed attempt: the last good reading stays, with its time.
    pub fn fail(&mut self, why: impl ToString) {
        self.error = Some(why.to_string());
    }

    /// An attempt's outcome: a good reading at `now`, or why it failed.
    pub fn record<E: ToString>(&mut self, got: Result<T, E>, now: u64) {
        match got {
            Ok(v) => self.set(v, now),
            Err(e) => self.fail(e),
        }
    }
}

/// The whole report. A source the agent was not asked to read is `null`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// [`VERSION`].
    pub version: u32,
    /// The node the agent runs on (`NODE_NAME` from the downward API, or `--node`).
    pub node: Option<String>,
    /// When the report was made (Unix seconds).
    pub generated_at: u64,
    /// The kubelet's pod-resources API: devices handed to pods, and allocatable.
    pub kubelet: Option<Reading<podresources::Allocation>>,
    /// The latest `tegrastats` line (Jetson boards).
    pub tegrastats: Option<Reading<tegrastats::Sample>>,
    /// dcgm-exporter's per-GPU use (discrete GPUs).
    pub dcgm: Option<Reading<Vec<dcgm::GpuUse>>>,
    /// GPU memory per pod and process (nvmap's client table on Jetson boards of the nvgpu
    /// stack), with the board's `NvMapMemUsed`.
    pub gpu_memory: Option<Reading<gpumem::GpuMemory>>,
    /// The GPU's load from devfreq, percent (boards whose tegrastats prints no GR3D: Thor).
    pub devfreq_busy: Option<Reading<f32>>,
}
