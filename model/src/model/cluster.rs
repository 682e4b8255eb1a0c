//! The whole view at one revision: where it comes from, its nodes, pending pods, diagnoses
//! and totals (`GET /api/v1/cluster`).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Diagnosis, NodeView, PendingPod, QuotaView};

/// Where the data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SourceMode {
    /// A real cluster.
    #[default]
    Cluster,
    /// The built-in simulator (`gpudash serve --demo`).
    Demo,
}

/// Progress of the first sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SyncProgress {
    /// Kinds whose first list is complete.
    pub kinds_synced: u32,
    /// Kinds watched.
    pub kinds_total: u32,
    /// Objects received so far.
    pub objects: u64,
}

/// The state of the connection to the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Source {
    /// Cluster or simulated.
    pub mode: SourceMode,
    /// Whether every watcher has completed its first list.
    pub synced: bool,
    /// When the watch went down (RFC 3339), or null while it is live.
    pub stale_since: Option<String>,
    /// The last watch error, if the watch is down.
    #[serde(default)]
    pub error: Option<String>,
    /// Where the cluster is (API server URL), for the status line.
    #[serde(default)]
    pub server: String,
    /// Progress of the first sync.
    #[serde(default)]
    pub progress: SyncProgress,
}

/// Totals for the top of the overview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Totals {
    /// Nodes.
    pub nodes: u32,
    /// Ready nodes.
    pub ready_nodes: u32,
    /// GPU units allocatable, all GPU resources together.
    pub gpu_allocatable: u64,
    /// GPU units allocated.
    pub gpu_allocated: u64,
    /// Pending pods.
    pub pending: u32,
    /// Critical diagnoses.
    pub critical: u32,
    /// Warning diagnoses.
    pub warnings: u32,
    /// Workloads a quota keeps from creating pods.
    #[serde(default)]
    pub blocked: u32,
    /// Diagnoses, every severity (the header's count: a page that does not list them is sent
    /// without the list).
    #[serde(default)]
    pub diagnoses: u32,
}

/// Everything the dashboard shows, at one revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClusterView {
    /// Increases with every change.
    pub revision: u64,
    /// When it was derived (RFC 3339).
    pub generated_at: String,
    /// Connection state.
    pub source: Source,
    /// Nodes, by name. Shared: a derivation reuses the views of nodes nothing touched, and
    /// comparing two views skips those by pointer.
    pub nodes: Vec<Arc<NodeView>>,
    /// Pending pods, longest waiting first.
    pub pending: Vec<PendingPod>,
    /// Diagnoses, most severe first. Shared: one that still holds is the same `Arc` from
    /// revision to revision (and on its node's card), so comparing and diffing skip it by pointer.
    pub diagnoses: Vec<Arc<Diagnosis>>,
    /// Workloads that cannot create their pods (a ResourceQuota refused them), shaped like
    /// pending pods: for the operator both are a model that is not running.
    #[serde(default)]
    pub blocked: Vec<PendingPod>,
    /// GPU-related ResourceQuota entries, by namespace (server-rendered `/quotas`: not read by
    /// the browser).
    #[serde(default)]
    #[cfg_attr(feature = "hydrate", serde(skip_deserializing))]
    pub quotas: Vec<QuotaView>,
    /// Totals.
    #[serde(default)]
    pub totals: Totals,
}

impl ClusterView {
    /// A copy with only the lists named (the pending list with the blocked workloads, the
    /// diagnoses, the quotas): what a page reads, without copying thousands of Pending pods
    /// into a page that shows none. The nodes are shared, not copied. Every field is named.
    pub fn lean(&self, (pending, diagnoses, quotas): (bool, bool, bool)) -> Self {
        let Self { revision, generated_at, source, nodes, pending: p, diagnoses: d, blocked, quotas: q, totals } = self;
        Self {
            revision: *revision,
            generated_at: generated_at.clone(),
            source: source.clone(),
            nodes: nodes.clone(),
            pending: if pending { p.clone() } else { Vec::new() },
            diagnoses: if diagnoses { d.clone() } else { Vec::new() },
            blocked: if pending { blocked.clone() } else { Vec::new() },
            quotas: if quotas { q.clone() } else { Vec::new() },
            totals: totals.clone(),
        }
    }

    /// The node named `name`, if the view has it (its page's).
    pub fn node(&self, name: &str) -> Option<&std::sync::Arc<NodeView>> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// A view written with each node as its card reads it ([`NodeView::card`]) — what the browser's
/// stream carries — without copying the nodes. Every field is named: one added to
/// `ClusterView` must be placed here too.
pub struct WithCards<'a>(pub &'a ClusterView);

impl Serialize for WithCards<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let cards: Vec<super::card::AsCard<'_>> = self.0.nodes.iter().map(|n| super::card::AsCard(n)).collect();
        write_view(self.0, &cards, s)
    }
}

/// A view written for the browser's wire ([`crate::wire`]): each node as [`NodeView::card`]
/// makes it (a copy: postcard is positional, so a card must be the whole struct, which
/// [`WithCards`]' lighter writers are not). The same JSON as [`WithCards`].
pub struct ForBrowser<'a>(pub &'a ClusterView);

impl Serialize for ForBrowser<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let cards: Vec<NodeView> = self.0.nodes.iter().map(|n| n.card()).collect();
        write_view(self.0, &cards, s)
    }
}

/// `view` with `nodes` in place of its nodes, its fields in declaration order (postcard reads
/// them by position).
fn write_view<S: serde::Serializer, N: Serialize>(view: &ClusterView, nodes: &N, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct as _;
    let ClusterView { revision, generated_at, source, nodes: _, pending, diagnoses, blocked, quotas, totals } = view;
    let mut m = s.serialize_struct("ClusterView", 9)?;
    m.serialize_field("revision", revision)?;
    m.serialize_field("generated_at", generated_at)?;
    m.serialize_field("source", source)?;
    m.serialize_field("nodes", nodes)?;
    m.serialize_field("pending", pending)?;
    m.serialize_field("diagnoses", diagnoses)?;
    m.serialize_field("blocked", blocked)?;
    m.serialize_field("quotas", quotas)?;
    m.serialize_field("totals", totals)?;
    m.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writing a view with cards writes the view made of `card()`s: the browser reads back
    /// exactly what `card()` holds.
    #[test]
    fn with_cards_writes_what_the_cards_are() {
        let node = NodeView {
            name: "orin-01".into(),
            ready: true,
            unified_memory: true,
            gpu_resources: vec![super::super::GpuResource {
                resource: "nvidia.com/gpu".into(),
                capacity: 4,
                holders: vec![super::super::Holder {
                    namespace: "ml".into(),
                    name: "m".into(),
                    count: 1,
                    since: Some("2026-12-05T08:00:00Z".into()),
                    runtime_class: Some("nvidia".into()),
                    workload: Some("Deployment/m".into()),
                    terminating: false,
                    share_permille: None,
                }],
                ..Default::default()
            }],
            pending_pods: 2,
            conditions: vec![super::super::ConditionView { type_: "Ready".into(), ..Default::default() }],
            unschedulable: true,
            arch: "arm64".into(),
            gpu_labels: vec![("nvidia.com/gpu.product".into(), "Orin".into())],
            labels: vec![("zone".into(), "a".into())],
            pods: vec![super::super::PodMemory { namespace: "ml".into(), name: "m".into(), ..Default::default() }],
            namespaces: vec!["ml".into()],
            default_runtime: Some("nvidia".into()),
            down: Some(super::super::NodeDown { status: "Unknown".into(), ..Default::default() }),
            problems: vec![
                Arc::new(Diagnosis { code: "gpu-node-down".into(), name: "orin-01".into(), ..Default::default() }),
                Arc::new(Diagnosis {
                    code: "device-plugin-missing".into(),
                    severity: super::super::Severity::Critical,
                    kind: "Node".into(),
                    name: "orin-01".into(),
                    message: "no device plugin".into(),
                    link: Some("/nodes/orin-01".into()),
                    ..Default::default()
                }),
            ],
            ..NodeView::default()
        };
        let view = ClusterView { revision: 9, nodes: vec![Arc::new(node.clone())], ..ClusterView::default() };
        let cards = ClusterView { nodes: vec![Arc::new(node.card())], ..view.clone() };
        let a = serde_json::to_string(&WithCards(&view)).unwrap_or_default();
        let read: ClusterView = serde_json::from_str(&a).unwrap_or_else(|e| panic!("{e}: {a}"));
        assert_eq!(read, cards);
        // A card's problems: the critical and warning ones, by code, severity and sentence.
        assert_eq!(read.nodes[0].problems.len(), 1, "{a}");
        assert!(a.contains(r#""holders":[{"namespace":"ml","name":"m","count":1}]"#), "{a}");
        assert!(a.contains(
            r#""problems":[{"code":"device-plugin-missing","severity":"critical","message":"no device plugin"}]"#
        ));
        assert!(node.card().pods.is_empty() && node.card().gpu_labels.is_empty() && !node.card().labels.is_empty());
    }
}
