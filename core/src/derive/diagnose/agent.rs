//! The node agent's diagnoses: a GPU node without an agent while others have one
//! (`agent-missing`), an agent that went silent (`agent-stale`), and time-slice contention as
//! measured (`gpu-time-slice-contention` from the GPU's busy percentage, where an agent
//! reports it).

use gpudash_model::model::{Code, Diagnosis, Kind, NodeView, Severity, Sharing};

use super::agent_said as said;
use gpudash_model::i18n::Said;

use super::{diag, Ctx};

/// `agent-missing` and `agent-stale`. Nothing is said where no agent runs at all: the agent
/// is optional, and a cluster without it shows what the API says.
pub(super) fn agent_missing_or_stale(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    if cx.inputs.agents.is_empty() {
        return;
    }
    for v in cx.nodes.iter().filter(|v| v.down.is_none()) {
        let name = v.name.as_str();
        match &v.agent {
            None if !v.gpu_resources.is_empty() => out.push(diag(
                Code::AgentMissing,
                Severity::Info,
                Kind::Node,
                None,
                name,
                said::no_gpudash_agent_runs_which(&name),
            )),
            Some(a) if a.stale => {
                let since: Said = a.seen_at.as_deref().map_or_else(said::never_answered, |t| said::last_heard_at(&t));
                let why = a.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default();
                out.push(diag(
                    Code::AgentStale,
                    Severity::Info,
                    Kind::Node,
                    None,
                    name,
                    said::gpudash_agent_silent_gpu_use(&name, &since, &why),
                ));
            }
            _ => {}
        }
    }
}

/// The GPU busy percentage at which pods sharing it by time-slicing wait for each other.
const CONTENDED_PERCENT: u32 = 90;

/// Measured contention on one node: `Some(found)` when a fresh agent measured the resource's
/// GPUs (then the heuristic is not used), `None` when it did not.
pub(super) fn measured(view: &NodeView, g: &gpudash_model::model::GpuResource, out: &mut Vec<Diagnosis>) -> bool {
    let fresh = view.agent.as_ref().is_some_and(|a| !a.stale);
    if !fresh || !matches!(g.sharing, Sharing::TimeSlicing | Sharing::Mps) || g.devices.is_empty() {
        return false;
    }
    if g.devices.iter().any(|d| d.busy_percent.is_none()) {
        return false;
    }
    let name = view.name.as_str();
    for (i, d) in g.devices.iter().enumerate() {
        let (Some(busy), holders) = (d.busy_percent, d.holders.len()) else { continue };
        if holders > 1 && busy >= CONTENDED_PERCENT {
            let pods: Vec<String> = d.holders.iter().map(|h| format!("{}/{}", h.namespace, h.name)).collect();
            out.push(diag(Code::GpuTimeSliceContention, Severity::Warning, Kind::Node, None, name, {
                let (r, pods) = (&g.resource, pods.join(", "));
                said::gpu_busy_shared_time_slicing(&i, &r, &name, &busy, &holders, &pods)
            }));
        }
    }
    true
}
