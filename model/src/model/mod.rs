//! The view model: what the server derives from the cluster and every view renders. These are
//! the JSON API v1 types (`GET /api/v1/cluster`); their field names are a stable interface.
//! Rooms: the whole view ([`cluster`]), nodes ([`node`]), pending pods ([`pending`]),
//! diagnoses ([`diagnosis`]), GPU quotas ([`quota`]), the live stream's deltas ([`delta`]), the
//! what-if check ([`fit`]), a large site's paged overview ([`overview`]), the fleet's view
//! ([`fleet`]).

pub mod card;
pub mod cluster;
pub mod delta;
pub mod device;
pub mod diagnosis;
pub mod fit;
pub mod fleet;
pub mod node;
pub mod overview;
pub mod pending;
pub mod quota;
pub mod range;
pub mod report;

pub use card::*;
pub use cluster::*;
pub use delta::*;
pub use device::*;
pub use diagnosis::*;
pub use fit::*;
pub use node::*;
pub use overview::*;
pub use pending::*;
pub use quota::*;
pub use range::Range;
