//! A node as its card reads it: the overview's and the stream's form of a [`NodeView`], all but
//! what only the server-rendered node page shows.

use serde::Serialize;

use super::node::{ConditionView, GpuResource, GpuUser, Holder, MemoryView, NodeView};
use super::{Diagnosis, Severity};

/// A node written as its card reads it ([`NodeView::card`]: the same JSON) without copying it.
/// Every field is named, so a field added to `NodeView` must be placed here too.
pub struct AsCard<'a>(pub &'a NodeView);

impl Serialize for AsCard<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let NodeView {
            name,
            ready,
            unified_memory,
            memory,
            gpu_resources,
            pending_pods,
            conditions,
            unschedulable,
            arch,
            gpu_labels: _,
            labels,
            pods: _,
            namespaces,
            default_runtime,
            gpu_users_outside,
            #[cfg(not(feature = "hydrate"))]
            gpu_users_outside_more,
            down,
            agent,
            problems,
        } = self.0;
        let none: [(); 0] = [];
        let mut m = s.serialize_struct("NodeView", 19)?;
        m.serialize_field("name", name)?;
        m.serialize_field("ready", ready)?;
        m.serialize_field("unified_memory", unified_memory)?;
        m.serialize_field("memory", &card_memory(memory))?;
        let resources: Vec<ResourceCard<'_>> = gpu_resources.iter().map(ResourceCard).collect();
        m.serialize_field("gpu_resources", &resources)?;
        m.serialize_field("pending_pods", pending_pods)?;
        m.serialize_field("conditions", &card_conditions(conditions))?;
        m.serialize_field("unschedulable", unschedulable)?;
        m.serialize_field("arch", arch)?;
        m.serialize_field("gpu_labels", &none)?;
        m.serialize_field("labels", labels)?;
        m.serialize_field("pods", &none)?;
        m.serialize_field("namespaces", namespaces)?;
        m.serialize_field("default_runtime", default_runtime)?;
        #[cfg(not(feature = "hydrate"))]
        let more = *gpu_users_outside_more;
        #[cfg(feature = "hydrate")]
        let more = 0;
        let (listed, more) = card_outside(gpu_users_outside, more);
        m.serialize_field("gpu_users_outside", listed)?;
        m.serialize_field("gpu_users_outside_more", &more)?;
        m.serialize_field("down", down)?;
        m.serialize_field("agent", agent)?;
        let shown: Vec<ProblemCard<'_>> =
            problems.iter().filter(|d| d.severity != Severity::Info).map(|d| ProblemCard(d)).collect();
        m.serialize_field("problems", &shown)?;
        m.end()
    }
}

/// A holder as a card reads it: who, and how many units (its slots are laid out already;
/// since when, its runtime class and workload are the node page's).
struct HolderCard<'a>(&'a Holder);

impl Serialize for HolderCard<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut m = s.serialize_struct("Holder", 3)?;
        m.serialize_field("namespace", &self.0.namespace)?;
        m.serialize_field("name", &self.0.name)?;
        m.serialize_field("count", &self.0.count)?;
        m.end()
    }
}

/// A problem as a card reads it: its code, severity and sentence (the card shows critical and
/// warning ones; the object is the card's node, its link and time are the diagnoses page's).
struct ProblemCard<'a>(&'a Diagnosis);

impl Serialize for ProblemCard<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut m = s.serialize_struct("Diagnosis", 3)?;
        m.serialize_field("code", &self.0.code)?;
        m.serialize_field("severity", &self.0.severity)?;
        m.serialize_field("message", &self.0.message)?;
        m.end()
    }
}

/// The pods using a GPU outside the scheduler that a card lists; the node page lists them all
/// (on a K3s board whose default runtime is NVIDIA's, every pod on it may be one).
pub const CARD_OUTSIDE: usize = 6;

/// A card's share of the pods using a GPU outside the scheduler: the first [`CARD_OUTSIDE`],
/// and how many more.
fn card_outside(all: &[GpuUser], more: u32) -> (&[GpuUser], u32) {
    let listed = &all[..all.len().min(CARD_OUTSIDE)];
    (listed, more.saturating_add(u32::try_from(all.len() - listed.len()).unwrap_or(u32::MAX)))
}

/// A node's memory as its card reads it: without the board's split and measured free memory
/// (the node page's).
fn card_memory(m: &MemoryView) -> MemoryView {
    MemoryView { split: None, board_free_bytes: None, ..m.clone() }
}

/// Conditions as a card reads them: the bad ones, by type and status (the healthy ones, the
/// reasons and the messages are the node page's; the card has `ready` of its own).
fn card_conditions(c: &[ConditionView]) -> Vec<ConditionView> {
    c.iter().filter(|c| c.bad).map(|c| ConditionView { reason: None, message: None, ..c.clone() }).collect()
}

/// A GPU resource as a card reads it: all but its DRA devices' table (the node page's).
struct ResourceCard<'a>(&'a GpuResource);

impl Serialize for ResourceCard<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let GpuResource {
            resource,
            product,
            physical_gpus,
            replicas_per_gpu,
            sharing,
            capacity,
            allocatable,
            allocated,
            holders,
            placement_known,
            out_of_service,
            slots,
            rows,
            devices: _,
            profile,
        } = self.0;
        let none: [(); 0] = [];
        let mut m = s.serialize_struct("GpuResource", 15)?;
        m.serialize_field("resource", resource)?;
        m.serialize_field("product", product)?;
        m.serialize_field("physical_gpus", physical_gpus)?;
        m.serialize_field("replicas_per_gpu", replicas_per_gpu)?;
        m.serialize_field("sharing", sharing)?;
        m.serialize_field("capacity", capacity)?;
        m.serialize_field("allocatable", allocatable)?;
        m.serialize_field("allocated", allocated)?;
        let holders: Vec<HolderCard<'_>> = holders.iter().map(HolderCard).collect();
        m.serialize_field("holders", &holders)?;
        m.serialize_field("placement_known", placement_known)?;
        m.serialize_field("out_of_service", out_of_service)?;
        m.serialize_field("slots", slots)?;
        m.serialize_field("rows", rows)?;
        m.serialize_field("devices", &none)?;
        match profile {
            Some(p) => m.serialize_field("profile", p)?,
            None => m.skip_field("profile")?,
        }
        m.end()
    }
}

impl NodeView {
    /// The node as the browser's live views read it: all but the memory table by pod, the GPU
    /// labels, the DRA devices' table, the board's split and the conditions' words, which only
    /// the server-rendered node page shows (at
    /// 1,000 nodes of 30 pods those are most of the stream's bytes). [`AsCard`] writes the
    /// same without the copy.
    pub fn card(&self) -> NodeView {
        let holder = |h: &Holder| Holder {
            namespace: h.namespace.clone(),
            name: h.name.clone(),
            count: h.count,
            ..Holder::default()
        };
        let gpu_resources = self
            .gpu_resources
            .iter()
            .map(|g| GpuResource { devices: Vec::new(), holders: g.holders.iter().map(holder).collect(), ..g.clone() })
            .collect();
        NodeView {
            gpu_labels: Vec::new(),
            pods: Vec::new(),
            gpu_resources,
            memory: card_memory(&self.memory),
            conditions: card_conditions(&self.conditions),
            gpu_users_outside: card_outside(&self.gpu_users_outside, 0).0.to_vec(),
            #[cfg(not(feature = "hydrate"))]
            gpu_users_outside_more: card_outside(&self.gpu_users_outside, self.gpu_users_outside_more).1,
            problems: self
                .problems
                .iter()
                .filter(|d| d.severity != Severity::Info)
                .map(|d| {
                    let (code, severity, message) = (d.code.clone(), d.severity, d.message.clone());
                    std::sync::Arc::new(Diagnosis { code, severity, message, ..Diagnosis::default() })
                })
                .collect(),
            ..self.clone()
        }
    }
}
