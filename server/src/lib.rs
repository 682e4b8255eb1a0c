//! gpudash: watches a K3s cluster and shows what Kubernetes hides about its GPUs.

pub mod derive;
pub mod quantity;
