//! Building blocks: the replica-slot grid, the memory bars, and the node card.

use leptos::either::Either;
use leptos::prelude::*;

use crate::boot::{percent_encode, Boot};
use crate::i18n::{fill, Say, T};
use crate::model::{GpuResource, MemoryView, NodeView, Severity, Sharing, Slot, SlotState};
use crate::units::{bytes, percent};

/// One drawn slot: its class, its label (a MIG profile, a share), its text, and the full name
/// for screen readers.
type Cell = (&'static str, Option<String>, String, String);

/// A slot of a GPU resource, as the derivation laid it out.
fn cell(g: &GpuResource, s: &Slot, t: &T, lang: crate::i18n::Lang) -> Cell {
    let holder = s.holder.and_then(|i| g.holders.get(i as usize));
    let name = holder.map(|h| h.name.clone()).unwrap_or_default();
    let (cls, text) = match s.state {
        SlotState::Over => ("slot held over", format!("⚠ {name}")),
        SlotState::Terminating => ("slot held terminating", format!("◌ {name}")),
        SlotState::Held => ("slot held", name),
        SlotState::Free => ("slot free", t.slot_free.to_string()),
        SlotState::Out => ("slot out", t.slot_out.to_string()),
    };
    let full = holder.map(|h| format!("{}/{}", h.namespace, h.name)).unwrap_or_else(|| text.clone());
    let label = s.label.as_ref().map(|l| l.say(lang).to_string());
    let profile = label.clone().or_else(|| g.profile.clone());
    let text = if holder.is_none() && s.label.is_some() && s.state != SlotState::Free { String::new() } else { text };
    let full = match &label {
        Some(l) => format!("{l} {full}"),
        None => full,
    };
    (cls, profile, text, full)
}

/// The caption of a resource: what the grid shows.
pub fn caption(g: &GpuResource, t: &T) -> String {
    let mut held = fill(t.caption_held, &[&g.allocated.to_string(), &g.allocatable.to_string()]);
    if g.out_of_service > 0 {
        held.push_str(&fill(t.caption_out, &[&g.out_of_service.to_string()]));
    }
    match (g.sharing, g.physical_gpus) {
        (Sharing::Mig, _) => fill(t.caption_mig, &[&held]),
        (Sharing::TimeSlicing | Sharing::Mps | Sharing::Vgpu, Some(p)) => {
            let mode = match g.sharing {
                Sharing::Mps => "MPS",
                Sharing::Vgpu => "HAMi vGPU",
                _ => t.caption_time_slicing,
            };
            let tpl = if p == 1 { t.caption_shared } else { t.caption_shared_n };
            fill(tpl, &[&p.to_string(), &g.replicas_per_gpu.to_string(), mode, &held])
        }
        (Sharing::TimeSlicing | Sharing::Mps | Sharing::Vgpu, None) => fill(t.caption_shared_unknown, &[&held]),
        (Sharing::None, Some(p)) => {
            fill(if p == 1 { t.caption_whole } else { t.caption_whole_n }, &[&p.to_string(), &held])
        }
        (Sharing::None, None) => fill(t.caption_units, &[&g.capacity.to_string(), &held]),
        (Sharing::Dra, _) => fill(t.caption_dra, &[&g.allocated.to_string(), &g.capacity.to_string()]),
    }
}

/// The grid of replica slots of one GPU resource.
#[component]
pub fn SlotGrid(g: GpuResource) -> impl IntoView {
    let lang = expect_context::<Boot>().lang;
    let t = lang.t();
    let cap = caption(&g, t);
    let rows: Vec<Vec<Cell>> = g.slots.iter().map(|row| row.iter().map(|sl| cell(&g, sl, t, lang)).collect()).collect();
    let unknown = !g.placement_known;
    let count_unknown = g.physical_gpus.is_none() && g.sharing == Sharing::None;
    let mig = g.resource.starts_with("nvidia.com/mig-");
    let sharing = match g.sharing {
        Sharing::None => "none",
        Sharing::TimeSlicing => "time-slicing",
        Sharing::Mps => "mps",
        Sharing::Mig => "mig",
        Sharing::Dra => "dra",
        Sharing::Vgpu => "vgpu",
    };
    let labelled: Vec<(String, Vec<Cell>)> = rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let label = if let Some(r) = g.rows.get(i) {
                r.say(lang).to_string()
            } else if count_unknown {
                t.row_units.to_string()
            } else if unknown {
                t.row_unknown.to_string()
            } else if mig {
                t.row_slices.to_string()
            } else {
                fill(t.row_gpu, &[&i.to_string()])
            };
            (label, row)
        })
        .collect();
    let note = match (count_unknown, unknown) {
        (true, _) => Some(t.note_no_labels),
        (false, true) => Some(t.note_placement_unknown),
        _ => None,
    };
    view! {
        <div class="gpu" data-resource=g.resource.clone() data-sharing=sharing>
            <div class="gpu-head">
                <span class="gpu-resource">{g.resource.clone()}</span>
                {g.product.clone().map(|p| view! { <span class="gpu-product">{p}</span> })}
                <span class="gpu-caption">{cap}</span>
            </div>
            {slot_rows(labelled)}
            {note.map(|t| view! { <p class="note">{t}</p> })}
        </div>
    }
}

/// Labelled rows of slots (one per physical GPU, or one for all); the one place slots are drawn,
/// for GPU resources and for the pods that use a GPU outside the scheduler.
fn slot_rows(rows: Vec<(String, Vec<Cell>)>) -> impl IntoView {
    rows.into_iter()
        .map(|(label, row)| {
            view! {
                <div class="slot-row">
                    <span class="slot-row-label">{label}</span>
                    <ul class="slots">
                        {row.into_iter().map(|(cls, prof, text, full)| {
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

/// The memory bars: use, requests and limits against the board (or node) total.
#[component]
pub fn MemoryBars(m: MemoryView, unified: bool) -> impl IntoView {
    let t = expect_context::<Boot>().lang.t();
    let over = m.overcommit_bytes > 0;
    let title = if unified { t.mem_unified } else { t.mem_memory };
    let row = move |label: &'static str, v: Option<(u64, u32)>, cls: &'static str| {
        let (width, text) = match v {
            Some((v, p)) => (percent(p), format!("{} ({})", bytes(v), percent(p))),
            None => ("0%".to_string(), t.mem_unknown.to_string()),
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
            <div class="mem-title">{fill(t.mem_allocatable, &[title, &bytes(m.board_bytes)])}</div>
            {row(t.mem_used, m.used_bytes.zip(m.used_permille), "used")}
            {row(t.mem_requests, Some((m.requested_bytes, m.requested_permille)), "requests")}
            {row(t.mem_limits, Some((m.limits_bytes, m.limits_permille)), if over { "limits over" } else { "limits" })}
            {m.board_used_bytes.zip(m.board_used_permille).map(|v| row(t.mem_board, Some(v), "board"))}
            {over.then(|| view! { <p class="warn">{fill(t.mem_over, &[&bytes(m.overcommit_bytes)])}</p> })}
            {(unbounded > 0).then(|| view! { <p class="note">{fill(t.mem_unbounded, &[&unbounded.to_string()])}</p> })}
        </div>
    }
}

/// One node's card on the overview.
#[component]
pub fn NodeCard(node: std::sync::Arc<NodeView>) -> impl IntoView {
    let boot = expect_context::<Boot>();
    let lang = boot.lang;
    let t = lang.t();
    let href = boot.href(&format!("/nodes/{}", percent_encode(&node.name)));
    let pressures: Vec<String> =
        node.conditions.iter().filter(|c| c.bad && c.type_ != "Ready").map(|c| c.type_.clone()).collect();
    let ready = node.ready;
    let pending = node.pending_pods;
    let gpus = node.gpu_resources.clone();
    let no_gpu = gpus.is_empty();
    let platform = match &node.default_runtime {
        Some(r) => fill(t.card_default_runtime, &[&node.arch, r]),
        None => node.arch.clone(),
    };
    let outside = (!node.gpu_users_outside.is_empty()).then(|| {
        node.gpu_users_outside
            .iter()
            .map(|u| -> Cell {
                let full = format!("{}/{}", u.namespace, u.name);
                if u.sure {
                    ("slot held outside", None, u.name.clone(), full)
                } else {
                    ("slot held outside maybe", None, format!("? {}", u.name), full)
                }
            })
            .collect::<Vec<_>>()
    });
    let agent = node.agent.as_ref().map(|a| match (a.stale, &a.seen_at) {
        (false, _) => (false, t.card_agent_ok.to_string()),
        (true, Some(at)) => {
            let when = crate::time::parse_rfc3339(at).map_or_else(|| at.clone(), |s| boot.zone.clock(s));
            (true, fill(t.card_agent_silent, &[&when]))
        }
        (true, None) => (true, t.card_agent_never.to_string()),
    });
    let problems: Vec<(&str, &str, String, String)> = node
        .problems
        .iter()
        .filter_map(|d| {
            let (cls, icon) = match d.severity {
                Severity::Critical => ("sev critical", "✖ "),
                Severity::Warning => ("sev warning", "⚠ "),
                Severity::Info => return None,
            };
            Some((cls, icon, d.code.to_string(), d.message.say(lang).to_string()))
        })
        .collect();
    view! {
        <article class="card node" data-node=node.name.clone() data-ready=ready.to_string()>
            <header class="card-head">
                <h2><a href=href>{node.name.clone()}</a></h2>
                <span class=if ready { "badge ok" } else { "badge bad" }>{if ready { t.card_ready } else { t.card_not_ready }}</span>
                {pressures.into_iter().map(|p| view! { <span class="badge bad">"⚠ " {p}</span> }).collect_view()}
                {node.unschedulable.then(|| view! { <span class="badge warn">{t.card_cordoned}</span> })}
                {node.unified_memory.then(|| view! { <span class="badge info">{t.card_unified}</span> })}
                <span class="badge plain">{platform}</span>
                {(pending > 0).then(|| view! { <span class="badge warn pending-count">{fill(t.card_pending, &[&pending.to_string()])}</span> })}
                {agent.map(|(stale, text)| view! { <span class=if stale { "badge warn agent" } else { "badge plain \
                    agent" } data-stale=stale.to_string()>{text}</span> })}
            </header>
            {if no_gpu {
                Either::Left(view! { <p class="muted">{t.card_no_gpu}</p> })
            } else {
                Either::Right(gpus.into_iter().map(|g| view! { <SlotGrid g/> }).collect_view())
            }}
            {outside.map(|cells| slot_rows(vec![(t.card_outside.to_string(), cells)]))}
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
    use crate::i18n::Lang;
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
    fn a_slot_shows_its_holder_by_index_and_its_state() {
        let g = res(4, &[("a", 1), ("b", 2)]);
        let held = cell(&g, &Slot { state: SlotState::Over, holder: Some(1), label: None }, &T::EN, Lang::En);
        assert_eq!(held, ("slot held over", None, "⚠ b".to_string(), "ml/b".to_string()));
        let out = cell(&g, &Slot { state: SlotState::Out, holder: None, label: None }, &T::EN, Lang::En);
        assert_eq!(out.0, "slot out");
        // A holder index from a newer server that is out of range draws an empty name, no panic.
        assert_eq!(cell(&g, &Slot { state: SlotState::Held, holder: Some(9), label: None }, &T::EN, Lang::En).2, "");
        // A DRA slot shows what it is (a MIG profile, a share) and, held by no pod, its claim.
        let mig =
            cell(&g, &Slot { state: SlotState::Free, holder: None, label: Some("1g.10gb".into()) }, &T::EN, Lang::En);
        assert_eq!((mig.1.as_deref(), mig.2.as_str()), (Some("1g.10gb"), "free"));
        let orphan = cell(
            &g,
            &Slot { state: SlotState::Held, holder: None, label: Some("claim ml/x · no pod".into()) },
            &T::EN,
            Lang::En,
        );
        assert_eq!((orphan.1.as_deref(), orphan.2.as_str()), (Some("claim ml/x · no pod"), ""));
    }

    #[test]
    fn captions_say_the_layout() {
        assert_eq!(caption(&res(4, &[("a", 1)]), &T::EN), "1 GPU × 4 time-slicing replicas · 1/4 held");
        let mut g = res(2, &[("a", 1)]);
        g.allocatable = 1;
        g.out_of_service = 1;
        g.sharing = Sharing::None;
        g.physical_gpus = Some(2);
        assert_eq!(caption(&g, &T::EN), "2 whole GPUs · 1/1 held · 1 out of service");
        g.sharing = Sharing::Dra;
        assert_eq!(caption(&g, &T::EN), "DRA devices · 1/2 allocated");
        assert_eq!(caption(&g, &T::JA), "DRA デバイス · 1/2 割り当て済み");
        assert_eq!(caption(&res(4, &[("a", 1)]), &T::JA), "GPU 1 基 × タイムスライス 4 レプリカ · 1/4 使用中");
    }

    #[test]
    fn percentages_are_formatted_from_thousandths() {
        assert_eq!(percent(0), "0.0%");
        assert_eq!(percent(123), "12.3%");
        assert_eq!(percent(1000), "100.0%");
    }
}
