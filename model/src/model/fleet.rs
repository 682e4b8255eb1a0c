//! The fleet's view (`GET /api/v1/fleet`): a card per site, most troubled first. Made by
//! `gpudash fleet` from each site's stream; rendered by `views::fleet`.

use serde::{Deserialize, Serialize};

/// A site's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SiteState {
    /// Its stream is open and it spoke within the stale limit, and its own view is not stale.
    Live,
    /// Its last view is shown, but it is old: the stream dropped, went silent, or the site's own
    /// cluster watch is stale.
    Stale,
    /// Not heard from for longer than the unreachable limit (or never).
    Unreachable,
}

/// GPU units of one resource family on a site (`nvidia.com/gpu`, `nvidia.com/mig`, a DRA driver).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Family {
    /// The family.
    pub family: String,
    /// Units held.
    pub held: u64,
    /// Units in all (capacity).
    pub total: u64,
}

/// A site's totals, from its last view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteTotals {
    /// Nodes.
    pub nodes: u32,
    /// Ready nodes.
    pub nodes_ready: u32,
    /// GPU units in all (capacity).
    pub gpu_capacity: u64,
    /// GPU units held.
    pub gpu_allocated: u64,
    /// Pending pods.
    pub pending: u32,
    /// Critical diagnoses.
    pub critical: u32,
    /// Warnings.
    pub warning: u32,
}

/// One site's card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteView {
    /// Its name.
    pub name: String,
    /// Its gpudash.
    pub url: String,
    /// Live, stale or unreachable.
    pub state: SiteState,
    /// Since when it is not live (RFC 3339); null while live.
    pub stale_since: Option<String>,
    /// Its last view's revision; null before the first.
    pub revision: Option<u64>,
    /// From its last view; null before the first (never zeros for "unknown").
    pub totals: Option<SiteTotals>,
    /// GPU units per resource family, from its last view.
    pub families: Vec<Family>,
    /// Why the last connection failed.
    pub error: Option<String>,
    /// What the fleet did not keep of the site's last view (nodes past its cap), when it cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

/// The fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetView {
    /// When this view was made (RFC 3339).
    pub generated_at: String,
    /// The sites, most troubled first.
    pub sites: Vec<SiteView>,
}
