//! gpudash's pure core: from the watched objects to the view model (`derive`), the what-if check
//! (`fit`), and the projections and quantities they read. It depends on no async runtime, HTTP,
//! database or filesystem crate, so the derivation cannot do I/O: the site and the fleet feed it
//! and serve what it returns.

pub mod agent;
pub mod catalogue;
pub mod derive;
pub mod dra;
pub mod fit;
pub mod lists;
pub mod meta;
pub mod overview;
pub mod pod;
pub mod quantity;
pub mod reports;
pub mod series;
