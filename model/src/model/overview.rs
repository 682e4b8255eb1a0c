//! The overview of a site larger than one screen of cards: the nodes that need attention
//! first, a page of cards at a time, and every node counted in a summary by GPU. Built by the
//! core (`gpudash_core::overview`) for the server-rendered overview; a site small enough for
//! one page gets the live overview instead.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::NodeView;

/// Nodes of one GPU product (or without GPUs) and how they stand.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeGroup {
    /// The GPU product its nodes carry (`None`: nodes without GPU resources).
    pub product: Option<String>,
    /// The group's key in `?group=` links.
    pub key: String,
    /// Nodes.
    pub nodes: u32,
    /// Of those, Ready.
    pub ready: u32,
    /// Of those, needing attention (see [`Sheet::attention`]).
    pub attention: u32,
    /// GPU units allocatable, every GPU resource of the group's nodes together.
    pub gpu_allocatable: u64,
    /// GPU units held.
    pub gpu_allocated: u64,
    /// Pods Pending for the group's nodes (aimed at them by name).
    pub pending_pods: u32,
}

/// One page of the server-rendered overview.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sheet {
    /// Every node that matches the page's filters, by GPU product (most nodes first).
    pub groups: Vec<NodeGroup>,
    /// The group the page is narrowed to (`?group=`), when one is.
    pub group: Option<String>,
    /// This page's cards: nodes needing attention first (not Ready or down, cordoned,
    /// with Pending pods aimed at them, or with a critical or warning problem), then by name.
    pub nodes: Vec<Arc<NodeView>>,
    /// Nodes matching the filters (and group).
    pub matching: u32,
    /// Of those, needing attention.
    pub attention: u32,
    /// This page, from 1.
    pub page: u32,
    /// Pages.
    pub pages: u32,
    /// The page before this one, if any.
    pub prev: Option<u32>,
    /// The page after this one, if any.
    pub next: Option<u32>,
    /// The page a kiosk turns to next (the first after the last).
    pub turn: u32,
}

/// One page of a long list: the pending or diagnoses page of a site with more items than one
/// live page shows (or asked for with a filter or a page). Its items are the page's view's
/// (`pending` or `diagnoses`); this says where they stand among the rest. Built by the core
/// (`gpudash_core::lists`); server-rendered, kept live by `public/refresh.js`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListPage {
    /// Every item of the list, before the filters.
    pub total: u32,
    /// Items matching the filters (namespace, code).
    pub matching: u32,
    /// The first item on this page, from 1 (0 when none matches).
    pub first: u32,
    /// The last item on this page.
    pub last: u32,
    /// Diagnosis codes among every item, most frequent first, with how many items carry each
    /// (the code filter's choices).
    pub codes: Vec<(String, u32)>,
    /// The code the page is narrowed to (`?code=`), when one is.
    pub code: Option<String>,
    /// This page, from 1.
    pub page: u32,
    /// Pages.
    pub pages: u32,
    /// The page before this one, if any.
    pub prev: Option<u32>,
    /// The page after this one, if any.
    pub next: Option<u32>,
    /// The page a kiosk turns to next (the first after the last).
    pub turn: u32,
}
