//! Building blocks: the replica-slot grid, the memory bars, and the node card.

use leptos::either::Either;
use leptos::prelude::*;

use crate::boot::{percent_encode, Boot};
use crate::model::{GpuResource, MemoryView, NodeView, Sharing};
use crate::time::bytes;

/// What a slot of the grid is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotState {
    /// Held by a pod.
    Held,
    /// Held beyond allocatable (the device plugin shrank under running pods).
    Over,
    /// Held by a pod that is being deleted.
    Terminating,
    /// Free.
    Free,
    /// Out of service: the device plugin found the GPU unhealthy.
    Out,
    /// A pod sure to use the GPU without the scheduler counting it.
    Outside,
    /// A pod that may use the GPU without the scheduler counting it.
    Maybe,
}

/// One cell of a slot grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Pod holding it (`namespace/name`), or None when free or out of service.
    pub holder: Option<(String, String)>,
    /// What the slot is.
    pub state: SlotState,
}

/// Lays out the units of a resource as cells: holders first (each for its count), then free
/// up to allocatable, then out of service up to capacity.
pub fn cells(g: &GpuResource) -> Vec<Cell> {
    let mut out: Vec<Cell> = Vec::new();
    let alloc = g.allocatable.min(4096) as usize;
    for h in &g.holders {
        for _ in 0..h.count.min(4096) {
            let state = if out.len() >= alloc {
                SlotState::Over
            } else if h.terminating {
                SlotState::Terminating
            } else {
                SlotState::Held
            };
            out.push(Cell { holder: Some((h.namespace.clone(), h.name.clone())), state });
        }
    }
    let held = out.len();
    for _ in held..alloc {
        out.push(Cell { holder: None, state: SlotState::Free });
    }
    let total = g.capacity.min(4096) as usize;
    for _ in out.len().max(alloc)..total {
        out.push(Cell { holder: None, state: SlotState::Out });
    }
    out
}

/// The caption of a resource: what the grid shows.
pub fn caption(g: &GpuResource) -> String {
    let mut held = format!("{}/{} held", g.allocated, g.allocatable);
    if g.out_of_service > 0 {
        held.push_str(&format!(" · {} out of service", g.out_of_service));
    }
    match (g.sharing, g.physical_gpus) {
        (Sharing::Mig, _) => format!("MIG slices · {held}"),
        (Sharing::TimeSlicing | Sharing::Mps, Some(p)) => {
            let mode = if g.sharing == Sharing::Mps { "MPS" } else { "time-slicing" };
            format!("{p} GPU{} × {} {mode} replicas · {held}", if p == 1 { "" } else { "s" }, g.replicas_per_gpu)
        }
        (Sharing::TimeSlicing | Sharing::Mps, None) => {
            format!("shared, GPU count unknown · {held}")
        }
        (Sharing::None, Some(p)) => {
            format!("{p} whole GPU{} · {held}", if p == 1 { "" } else { "s" })
        }
        (Sharing::None, None) => format!("{} units, GPU count unknown · {held}", g.capacity),
    }
}

/// The grid of replica slots of one GPU resource.
#[component]
pub fn SlotGrid(g: GpuResource) -> impl IntoView {
    let cells = cells(&g);
    let cap = caption(&g);
    let rows: Vec<Vec<Cell>> = match (g.placement_known, g.physical_gpus, g.sharing) {
        (true, Some(p), Sharing::TimeSlicing | Sharing::Mps) if p > 0 => {
            cells.chunks(usize::try_from(g.replicas_per_gpu.max(1)).unwrap_or(1)).map(<[Cell]>::to_vec).collect()
        }
        _ => vec![cells],
    };
    let unknown = !g.placement_known;
    let count_unknown = g.physical_gpus.is_none() && g.sharing == Sharing::None;
    let profile = g.resource.strip_prefix("nvidia.com/mig-").map(str::to_string);
    let sharing = match g.sharing {
        Sharing::None => "none",
        Sharing::TimeSlicing => "time-slicing",
        Sharing::Mps => "mps",
        Sharing::Mig => "mig",
    };
    let labelled: Vec<(String, Vec<Cell>)> = rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let label = if count_unknown {
                "units".to_string()
            } else if unknown {
                "replicas (GPU unknown)".to_string()
            } else if profile.is_some() {
                "slices".to_string()
            } else {
                format!("GPU {i}")
            };
            (label, row)
        })
        .collect();
    let note = match (count_unknown, unknown) {
        (true, _) => Some("No GPU feature-discovery labels: whole GPUs or time-slicing replicas cannot be told apart."),
        (false, true) => Some("Kubernetes does not report which physical GPU each replica is on; placement shown as unknown."),
        _ => None,
    };
    view! {
        <div class="gpu" data-resource=g.resource.clone() data-sharing=sharing>
            <div class="gpu-head">
                <span class="gpu-resource">{g.resource.clone()}</span>
                {g.product.clone().map(|p| view! { <span class="gpu-product">{p}</span> })}
                <span class="gpu-caption">{cap}</span>
            </div>
            {slot_rows(labelled, profile)}
            {note.map(|t| view! { <p class="note">{t}</p> })}
        </div>
    }
}

/// Labelled rows of slots (one per physical GPU, or one for all); the one place slots are drawn,
/// for GPU resources and for the pods that use a GPU outside the scheduler.
fn slot_rows(rows: Vec<(String, Vec<Cell>)>, profile: Option<String>) -> impl IntoView {
    rows.into_iter()
        .map(|(label, row)| {
            let profile = profile.clone();
            view! {
                <div class="slot-row">
                    <span class="slot-row-label">{label}</span>
                    <ul class="slots">
                        {row.into_iter().map(|c| {
                            let name = c.holder.as_ref().map(|h| h.1.clone()).unwrap_or_default();
                            let (cls, text) = match c.state {
                                SlotState::Over => ("slot held over", format!("⚠ {name}")),
                                SlotState::Terminating => ("slot held terminating", format!("◌ {name}")),
                                SlotState::Held => ("slot held", name),
                                SlotState::Free => ("slot free", "free".to_string()),
                                SlotState::Out => ("slot out", "✖ out of service".to_string()),
                                SlotState::Outside => ("slot held outside", name),
                                SlotState::Maybe => ("slot held outside maybe", format!("? {name}")),
                            };
                            let full = c.holder.as_ref().map(|(ns, n)| format!("{ns}/{n}")).unwrap_or_else(|| text.clone());
                            let prof = profile.clone();
                            view! {
                                <li class=cls aria-label=full>
                                    {prof.map(|p| view! { <span class="slot-profile">{p}</span> })}
                                    <span class="slot-name">{text}</span>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                </div>
            }
        })
        .collect_view()
}

fn pct(v: u64, scale: u64) -> String {
    if scale == 0 {
        return "0%".into();
    }
    format!("{}%", crate::time::tenths(v.min(scale).saturating_mul(100), scale))
}

/// The memory bars: use, requests and limits against the board (or node) total.
#[component]
pub fn MemoryBars(m: MemoryView, unified: bool) -> impl IntoView {
    let board = if m.allocatable_bytes > 0 { m.allocatable_bytes } else { m.capacity_bytes };
    let over = m.limits_bytes > board && board > 0;
    let title = if unified { "Unified memory (CPU + GPU)" } else { "Memory" };
    let row = move |label: &'static str, v: Option<u64>, cls: &'static str| {
        let (width, text) = match v {
            Some(v) => (pct(v, board), format!("{} ({})", bytes(v), pct(v, board))),
            None => ("0%".to_string(), "unknown (no metrics)".to_string()),
        };
        let style = format!("width: {width}");
        view! {
            <div class=format!("mem-row {cls}")>
                <span class="mem-label">{label}</span>
                <span class="mem-track"><span class="mem-fill" style=style></span></span>
                <span class="mem-value">{text}</span>
            </div>
        }
    };
    let unbounded = m.unbounded_containers;
    view! {
        <div class="memory" data-over=over.to_string()>
            <div class="mem-title">{title} " · " {bytes(board)} " allocatable"</div>
            {row("used", m.used_bytes, "used")}
            {row("requests", Some(m.requested_bytes), "requests")}
            {row("limits", Some(m.limits_bytes), if over { "limits over" } else { "limits" })}
            {over.then(|| view! { <p class="warn">"⚠ Limits exceed the board by " {bytes(m.limits_bytes - board)}</p> })}
            {(unbounded > 0).then(|| view! { <p class="note">{unbounded} " container(s) without a memory limit (unbounded)"</p> })}
        </div>
    }
}

/// One node's card on the overview.
#[component]
pub fn NodeCard(node: std::sync::Arc<NodeView>) -> impl IntoView {
    let boot = expect_context::<Boot>();
    let href = boot.href(&format!("/nodes/{}", percent_encode(&node.name)));
    let pressures: Vec<String> =
        node.conditions.iter().filter(|c| c.bad && c.type_ != "Ready").map(|c| c.type_.clone()).collect();
    let ready = node.ready;
    let pending = node.pending_pods;
    let gpus = node.gpu_resources.clone();
    let no_gpu = gpus.is_empty();
    let live = expect_context::<super::app::Live>();
    let name = node.name.clone();
    let platform = match &node.default_runtime {
        Some(r) => format!("{} · default runtime {r}", node.arch),
        None => node.arch.clone(),
    };
    let outside = (!node.gpu_users_outside.is_empty()).then(|| {
        node.gpu_users_outside
            .iter()
            .map(|u| Cell {
                holder: Some((u.namespace.clone(), u.name.clone())),
                state: if u.sure { SlotState::Outside } else { SlotState::Maybe },
            })
            .collect::<Vec<_>>()
    });
    let problems: Vec<(&str, &str, String, String)> = live.view.with_untracked(|v| {
        v.diagnoses
            .iter()
            .filter(|d| d.kind == "Node" && d.name == name && d.severity != crate::model::Severity::Info)
            .map(|d| {
                let (cls, icon) = match d.severity {
                    crate::model::Severity::Critical => ("sev critical", "✖ "),
                    _ => ("sev warning", "⚠ "),
                };
                (cls, icon, d.code.clone(), d.message.clone())
            })
            .collect()
    });
    view! {
        <article class="card node" data-node=node.name.clone() data-ready=ready.to_string()>
            <header class="card-head">
                <h2><a href=href>{node.name.clone()}</a></h2>
                <span class=if ready { "badge ok" } else { "badge bad" }>{if ready { "✓ Ready" } else { "✗ Not ready" }}</span>
                {pressures.into_iter().map(|p| view! { <span class="badge bad">"⚠ " {p}</span> }).collect_view()}
                {node.unschedulable.then(|| view! { <span class="badge warn">"⊘ Cordoned"</span> })}
                {node.unified_memory.then(|| view! { <span class="badge info">"unified memory"</span> })}
                <span class="badge plain">{platform}</span>
                {(pending > 0).then(|| view! { <span class="badge warn pending-count">"◔ " {pending} " pending"</span> })}
            </header>
            {if no_gpu {
                Either::Left(view! { <p class="muted">"No GPU resources advertised"</p> })
            } else {
                Either::Right(gpus.into_iter().map(|g| view! { <SlotGrid g/> }).collect_view())
            }}
            {outside.map(|cells| slot_rows(vec![("GPU used outside the scheduler".to_string(), cells)], None))}
            <MemoryBars m=node.memory.clone() unified=node.unified_memory/>
            {problems.into_iter().map(|(cls, icon, code, msg)| view! {
                <p class="node-problem"><span class=cls>{icon} {code}</span> " " {msg}</p>
            }).collect_view()}
        </article>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Holder;

    fn res(cap: u64, holders: &[(&str, u64)]) -> GpuResource {
        GpuResource {
            resource: "nvidia.com/gpu".into(),
            capacity: cap,
            allocatable: cap,
            allocated: holders.iter().map(|h| h.1).sum(),
            holders: holders
                .iter()
                .map(|(n, c)| Holder { namespace: "ml".into(), name: (*n).into(), count: *c, ..Holder::default() })
                .collect(),
            physical_gpus: Some(1),
            replicas_per_gpu: cap,
            sharing: Sharing::TimeSlicing,
            placement_known: true,
            ..GpuResource::default()
        }
    }

    #[test]
    fn cells_fill_holders_first_then_free() {
        let c = cells(&res(4, &[("a", 1), ("b", 2)]));
        let names: Vec<Option<&str>> = c.iter().map(|c| c.holder.as_ref().map(|h| h.1.as_str())).collect();
        assert_eq!(names, vec![Some("a"), Some("b"), Some("b"), None]);
    }

    #[test]
    fn holders_beyond_allocatable_are_marked_over() {
        let c = cells(&res(1, &[("a", 1), ("b", 1)]));
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].state, c[1].state), (SlotState::Held, SlotState::Over));
    }

    #[test]
    fn units_out_of_service_are_drawn_out_not_free() {
        let mut g = res(2, &[("a", 1)]);
        g.allocatable = 1;
        g.out_of_service = 1;
        let c = cells(&g);
        assert_eq!(c.iter().map(|c| c.state).collect::<Vec<_>>(), vec![SlotState::Held, SlotState::Out]);
        assert!(caption(&g).ends_with("1/1 held · 1 out of service"), "{}", caption(&g));
    }

    #[test]
    fn captions_say_the_layout() {
        assert_eq!(caption(&res(4, &[("a", 1)])), "1 GPU × 4 time-slicing replicas · 1/4 held");
    }
}
