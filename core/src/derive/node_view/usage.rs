//! A node's memory: its use from metrics.k8s.io (kept between polls), and its board, requests,
//! limits and use with each held pod's.

use std::collections::BTreeMap;
use std::sync::Arc;

use gpudash_model::model::{MemoryView, PodMemory};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use super::Held;
use crate::derive::{memory, pods, Inputs, Map, NodeMetrics, PodMetrics};
use crate::quantity::Bytes;

fn metric_bytes(usage: &BTreeMap<String, K8sQuantity>) -> Option<u64> {
    usage.get("memory").and_then(|q| Bytes::parse(&q.0).ok()).map(|b| b.0)
}

/// Memory use from one poll of metrics.k8s.io, by node and by pod (namespace, then name), made
/// again only when a new poll arrives (the metrics are the same `Arc` until then).
#[derive(Debug, Default)]
pub(in crate::derive) struct Use {
    read_nodes: Option<Arc<Vec<NodeMetrics>>>,
    read_pods: Option<Arc<Vec<PodMetrics>>>,
    nodes: Map<String, Option<u64>>,
    pods: Map<String, Map<String, u64>>,
}

impl Use {
    /// Takes in the metrics of this run; true when they are not the last run's.
    pub(in crate::derive) fn update(&mut self, inputs: &Inputs) -> bool {
        fn same<T>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        }
        let nodes_same = same(self.read_nodes.as_ref(), inputs.node_metrics.as_ref());
        let pods_same = same(self.read_pods.as_ref(), inputs.pod_metrics.as_ref());
        if !nodes_same {
            self.nodes = inputs
                .node_metrics
                .iter()
                .flat_map(|v| v.iter())
                .map(|m| (m.metadata.name.clone().unwrap_or_default(), metric_bytes(&m.usage)))
                .collect();
            self.read_nodes = inputs.node_metrics.clone();
        }
        if !pods_same {
            self.pods = Map::default();
            for m in inputs.pod_metrics.iter().flat_map(|v| v.iter()) {
                let used = m.containers.iter().filter_map(|c| metric_bytes(&c.usage)).sum();
                let ns = m.metadata.namespace.clone().unwrap_or_default();
                self.pods.entry(ns).or_default().insert(m.metadata.name.clone().unwrap_or_default(), used);
            }
            self.read_pods = inputs.pod_metrics.clone();
        }
        !(nodes_same && pods_same)
    }

    /// The node's memory use, then each held pod's.
    pub(in crate::derive) fn of(&self, node: &str, held: &[Held]) -> Vec<Option<u64>> {
        std::iter::once(self.nodes.get(node).copied().flatten())
            .chain(held.iter().map(|(p, _)| {
                let (ns, name) = (p.metadata.namespace.as_deref().unwrap_or(""), p.metadata.name.as_deref());
                self.pods.get(ns).and_then(|m| m.get(name.unwrap_or(""))).copied()
            }))
            .collect()
    }
}

/// The node's memory (its board, requests, limits, use and their bars), each held pod's, and
/// the namespaces of its pods.
pub(super) fn memory_of(
    n: &Node,
    held: &[Held],
    usage: &[Option<u64>],
    unified_memory: bool,
    rs: &pods::RsOwners<'_>,
) -> (MemoryView, Vec<PodMemory>, Vec<String>) {
    let st = n.status.as_ref();
    let mem = |m: Option<&BTreeMap<String, K8sQuantity>>| {
        m.and_then(|m| m.get("memory")).and_then(|q| Bytes::parse(&q.0).ok()).map_or(0, |b| b.0)
    };
    let mut memory = MemoryView {
        capacity_bytes: mem(st.and_then(|s| s.capacity.as_ref())),
        allocatable_bytes: mem(st.and_then(|s| s.allocatable.as_ref())),
        used_bytes: usage.first().copied().flatten(),
        ..MemoryView::default()
    };
    let mut pod_mem = Vec::new();
    let mut namespaces: Vec<String> = Vec::new();
    for (i, (p, f)) in held.iter().enumerate() {
        let req = f.requests.get("memory").map_or(0, |m| pods::units(*m));
        let (lim, unbounded) = f.memory_limit;
        memory.requested_bytes = memory.requested_bytes.saturating_add(req);
        memory.limits_bytes = memory.limits_bytes.saturating_add(lim);
        memory.unbounded_containers += unbounded;
        let (namespace, pname) = pods::key(p);
        if !namespaces.contains(&namespace) {
            namespaces.push(namespace.clone());
        }
        pod_mem.push(PodMemory {
            namespace,
            name: pname,
            requested_bytes: req,
            limit_bytes: (unbounded == 0).then_some(lim),
            used_bytes: usage.get(i + 1).copied().flatten(),
            gpu_memory_bytes: None,
            workload: pods::workload(p, rs),
        });
    }
    pod_mem.sort_by(|a, b| b.requested_bytes.cmp(&a.requested_bytes).then_with(|| a.name.cmp(&b.name)));
    memory::bars(&mut memory, unified_memory);
    namespaces.sort();
    (memory, pod_mem, namespaces)
}
