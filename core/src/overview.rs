//! The overview of a large site, one page at a time ([`gpudash_model::model::Sheet`]): which nodes need
//! attention, in what order the cards come, and how every node is counted by GPU product.

use std::collections::BTreeMap;
use std::sync::Arc;

use gpudash_model::model::{ClusterView, NodeGroup, NodeView, Severity, Sheet};

/// Cards on one page of the server-rendered overview.
pub const PAGE_CARDS: usize = 24;

/// The most nodes the live (browser-rendered) overview may show. Its first load (the bundle,
/// the cards and the view they hydrate from) must stay within 200 KiB gzip: the built-in demo's
/// eight nodes, every feature on them, weigh 203 KB, so the server gives the paged overview to
/// any site whose live one would weigh more — and to every site over this many nodes without
/// rendering the live one first.
pub const LIVE_MAX_NODES: usize = 16;

/// The group a node is counted in: the product of its first GPU resource (its resource name
/// when the product is not known); `None` without GPU resources.
fn product(n: &NodeView) -> Option<String> {
    n.gpu_resources.first().map(|g| g.product.clone().unwrap_or_else(|| g.resource.clone()))
}

/// The key of a group in `?group=` links: the product, or `-` for nodes without GPUs.
pub fn group_key(product: Option<&str>) -> String {
    product.unwrap_or("-").to_string()
}

/// How urgently a node needs attention: 0 critical (not Ready, down, a critical problem), 1 a
/// warning, Pending pods aimed at it or cordoned, 2 fine.
fn urgency(n: &NodeView) -> u8 {
    let worst = n.problems.iter().map(|d| d.severity).min_by_key(|s| match s {
        Severity::Critical => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    });
    if !n.ready || n.down.is_some() || worst == Some(Severity::Critical) {
        0
    } else if worst == Some(Severity::Warning) || n.pending_pods > 0 || n.unschedulable {
        1
    } else {
        2
    }
}

/// Page `page` (from 1; past the end gives the last) of the overview of `view`, its nodes
/// narrowed by namespace, label and group as the overview's filters narrow them.
pub fn sheet(view: &ClusterView, ns: Option<&str>, label: Option<&str>, group: Option<&str>, page: u32) -> Sheet {
    // Each matching node with its group and urgency, worked out once.
    let matching: Vec<(&Arc<NodeView>, Option<String>, u8)> =
        view.nodes.iter().filter(|n| n.matches(ns, label)).map(|n| (n, product(n), urgency(n))).collect();
    let mut groups: BTreeMap<Option<String>, NodeGroup> = BTreeMap::new();
    for (n, p, u) in &matching {
        let g = groups.entry(p.clone()).or_insert_with(|| NodeGroup {
            key: group_key(p.as_deref()),
            product: p.clone(),
            ..NodeGroup::default()
        });
        g.nodes += 1;
        g.ready += u32::from(n.ready);
        g.attention += u32::from(*u < 2);
        g.gpu_allocatable += n.gpu_resources.iter().map(|r| r.allocatable).sum::<u64>();
        g.gpu_allocated += n.gpu_resources.iter().map(|r| r.allocated).sum::<u64>();
        g.pending_pods += n.pending_pods;
    }
    let mut groups: Vec<NodeGroup> = groups.into_values().collect();
    groups.sort_by(|a, b| b.nodes.cmp(&a.nodes).then_with(|| a.key.cmp(&b.key)));
    let group = group.filter(|g| groups.iter().any(|x| x.key == *g)).map(str::to_string);
    let mut shown: Vec<(u8, &Arc<NodeView>)> = matching
        .into_iter()
        .filter(|(_, p, _)| group.as_deref().is_none_or(|g| group_key(p.as_deref()) == g))
        .map(|(n, _, u)| (u, n))
        .collect();
    // Nodes arrive sorted by name; a stable sort keeps that order within each urgency.
    shown.sort_by_key(|(u, _)| *u);
    let total = shown.len();
    let pages = total.div_ceil(PAGE_CARDS).max(1);
    let page = usize::try_from(page).unwrap_or(1).clamp(1, pages);
    let nodes = shown.iter().skip((page - 1) * PAGE_CARDS).take(PAGE_CARDS).map(|(_, n)| Arc::clone(n)).collect();
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Sheet {
        groups,
        group,
        nodes,
        matching: count(total),
        attention: count(shown.iter().filter(|(u, _)| *u < 2).count()),
        page: count(page),
        pages: count(pages),
        prev: (page > 1).then(|| count(page - 1)),
        next: (page < pages).then(|| count(page + 1)),
        turn: if page < pages { count(page + 1) } else { 1 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpudash_model::model::{Diagnosis, GpuResource};

    fn node(name: &str, product: Option<&str>, ready: bool, problem: Option<Severity>) -> Arc<NodeView> {
        Arc::new(NodeView {
            name: name.into(),
            ready,
            gpu_resources: product
                .map(|p| GpuResource {
                    resource: "nvidia.com/gpu".into(),
                    product: Some(p.into()),
                    allocatable: 4,
                    allocated: 1,
                    ..GpuResource::default()
                })
                .into_iter()
                .collect(),
            problems: problem
                .map(|severity| Arc::new(Diagnosis { severity, ..Diagnosis::default() }))
                .into_iter()
                .collect(),
            namespaces: vec![if name.ends_with('0') { "ml".into() } else { "vision".into() }],
            ..NodeView::default()
        })
    }

    #[test]
    fn nodes_needing_attention_come_first_and_every_node_is_counted_by_product() {
        let mut nodes: Vec<Arc<NodeView>> = (0..60)
            .map(|i| {
                let product = if i % 3 == 0 { None } else { Some(if i % 3 == 1 { "L4" } else { "Orin" }) };
                let problem = match i {
                    41 => Some(Severity::Critical),
                    7 => Some(Severity::Warning),
                    12 => Some(Severity::Info),
                    _ => None,
                };
                node(&format!("n{i:02}"), product, i != 50, problem)
            })
            .collect();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        let view = ClusterView { nodes, ..ClusterView::default() };
        let s = sheet(&view, None, None, None, 1);
        assert_eq!((s.matching, s.pages, s.page, s.attention), (60, 3, 1, 3));
        let names: Vec<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
        // Critical (n41 with a critical problem, n50 not Ready) by name, then the warning, then
        // the rest by name; an info problem is not a reason to come first.
        assert_eq!(&names[..4], ["n41", "n50", "n07", "n00"]);
        assert_eq!(names.len(), PAGE_CARDS);
        let keys: Vec<(&str, u32)> = s.groups.iter().map(|g| (g.key.as_str(), g.nodes)).collect();
        assert_eq!(keys, [("-", 20), ("L4", 20), ("Orin", 20)]);
        let l4 = &s.groups[1];
        assert_eq!((l4.gpu_allocatable, l4.gpu_allocated, l4.ready, l4.attention), (80, 20, 20, 1));
        // The last page has the rest; a page past the end is the last.
        let last = sheet(&view, None, None, None, 99);
        assert_eq!((last.page, last.nodes.len()), (3, 60 - 2 * PAGE_CARDS));
        assert_eq!((last.prev, last.next, last.turn), (Some(2), None, 1));
        assert_eq!((s.prev, s.next, s.turn), (None, Some(2), 2));
        // A group narrows the cards, not the summary; an unknown group is ignored.
        let orin = sheet(&view, None, None, Some("Orin"), 1);
        assert_eq!((orin.matching, orin.groups.len(), orin.group.as_deref()), (20, 3, Some("Orin")));
        assert!(orin.nodes.iter().all(|n| n.gpu_resources[0].product.as_deref() == Some("Orin")));
        assert_eq!(sheet(&view, None, None, Some("H100"), 1).matching, 60);
        // The namespace filter narrows both.
        let ml = sheet(&view, Some("ml"), None, None, 1);
        assert_eq!(ml.matching, 6);
        assert_eq!(ml.groups.iter().map(|g| g.nodes).sum::<u32>(), 6);
    }
}
