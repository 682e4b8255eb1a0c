//! Diagnoses: the silent failures of GPU scheduling on K3s, each with a stable code, a severity
//! and one sentence that says what to do.

use std::collections::BTreeSet;
use std::sync::Arc;

use app::model::{Diagnosis, NodeView, PendingPod, Severity, Sharing};

use super::{node, pods, Inputs};
use crate::quantity::Bytes;

fn diag(code: &str, severity: Severity, kind: &str, namespace: Option<&str>, name: &str, message: String) -> Diagnosis {
    Diagnosis {
        code: code.to_string(),
        severity,
        kind: kind.to_string(),
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
        message,
    }
}

/// Extracts the quoted name after `prefix` (`RuntimeClass "nvidia" not found` → `nvidia`).
fn quoted_after<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    let i = msg.find(prefix)? + prefix.len();
    let rest = msg[i..].strip_prefix('"')?;
    rest.split('"').next()
}

/// Computes every diagnosis; adds the codes that concern each pending pod to it.
/// `waiting` holds the pod object of each entry of `pending`, in the same order.
pub fn diagnose(
    inputs: &Inputs,
    facts: &[std::sync::Arc<pods::Facts>],
    nodes: &[Arc<NodeView>],
    pending: &mut [PendingPod],
    waiting: &[&crate::pod::Pod],
) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let classes: BTreeSet<&str> = inputs.runtime_classes.iter().filter_map(|r| r.metadata.name.as_deref()).collect();
    let class_list = classes.iter().copied().collect::<Vec<_>>().join(", ");

    // Nodes that look like GPU nodes but whose device plugin is missing or failing.
    let plugin_missing: Vec<(&k8s_openapi::api::core::v1::Node, &str)> = inputs
        .nodes
        .iter()
        .zip_by_name(nodes)
        .into_iter()
        .filter_map(|(n, view)| {
            let name = view.name.as_str();
            let what = plugin_trouble(n, view)?;
            out.push(diag("device-plugin-missing", Severity::Critical, "Node", None, name,
                format!("{name} {what}: the NVIDIA device plugin is missing or failing there — check the nvidia-device-plugin DaemonSet pod on this node and the container runtime's nvidia handler.")));
            Some((n, name))
        })
        .collect();

    // Pending pods short of a GPU resource.
    for (p, pod) in pending.iter_mut().zip(waiting) {
        let short: Vec<&str> = p
            .reasons
            .iter()
            .filter_map(|r| r.reason.strip_prefix("Insufficient "))
            .filter(|r| node::is_accelerator(r))
            .collect();
        if let Some(res) = short.first() {
            let want = p.gpu_request.as_ref().map_or(1, |g| g.count);
            let shared = nodes
                .iter()
                .flat_map(|n| &n.gpu_resources)
                .any(|g| g.resource == *res && g.sharing == Sharing::TimeSlicing);
            let hint = if shared {
                "free a replica (scale down or remove a pod holding one), raise time-slicing replicas, or add a GPU node"
            } else {
                "free one (scale down a pod holding it), enable time-slicing replicas in the NVIDIA device plugin, or add a GPU node"
            };
            // Aimed at a node whose device plugin is down: that node has no GPU to free.
            let broken = plugin_missing.iter().find(|(n, _)| super::pending_targets(pod, n)).map(|(_, name)| *name);
            let text = match broken {
                Some(node) => format!(
                    "Waiting for {want} {res} on {node}, the node it is aimed at, which advertises none: the NVIDIA device plugin is missing or failing there (see that node's device-plugin-missing diagnosis) — fix the plugin; freeing a GPU elsewhere will not help."
                ),
                None => format!("Waiting for {want} {res}: every matching node's {res} is already held — {hint}."),
            };
            out.push(diag("insufficient-gpu", Severity::Critical, "Pod", Some(&p.namespace), &p.name, text));
            p.diagnoses.push("insufficient-gpu".into());
        }
        if p.message.as_deref().is_some_and(|m| m.contains("maximum request size for shared resources is 1")) {
            out.push(diag("shared-gpu-request-too-large", Severity::Critical, "Pod", Some(&p.namespace), &p.name,
                "Requests more than 1 replica of a time-sliced GPU, which the device plugin refuses: request 1 (a replica is not a bigger share of the GPU).".into()));
            p.diagnoses.push("shared-gpu-request-too-large".into());
        }
    }

    // Boards whose limits exceed their shared memory; GPUs shared by time-slicing.
    for view in nodes {
        let name = view.name.as_str();
        if view.unified_memory
            && view.memory.allocatable_bytes > 0
            && view.memory.limits_bytes > view.memory.allocatable_bytes
        {
            out.push(diag("unified-memory-overcommit", Severity::Warning, "Node", None, name,
                format!("Pod memory limits on {name} add up to {}, more than the {} the board shares between CPU and GPU: lower the limits or move a model to another board.",
                    Bytes(view.memory.limits_bytes), Bytes(view.memory.allocatable_bytes))));
        }
        for g in &view.gpu_resources {
            if matches!(g.sharing, Sharing::TimeSlicing | Sharing::Mps) {
                let physical = g.physical_gpus.unwrap_or(1).max(1);
                let pods_holding = g.holders.len() as u64;
                if pods_holding > physical {
                    out.push(diag("gpu-time-slice-contention", Severity::Info, "Node", None, name,
                        format!("{pods_holding} pods share {physical} physical GPU(s) of {} on {name} by time-slicing: no proportional compute, no memory or fault isolation — one model's memory or crash affects the others.", g.resource)));
                }
            }
        }
    }

    // RuntimeClass missing: events, ReplicaSet conditions, and templates naming a missing class.
    let mut seen = BTreeSet::new();
    let mut rc_missing = |kind: &str, ns: Option<&str>, name: &str, class: &str, out: &mut Vec<Diagnosis>| {
        if classes.contains(class) || !seen.insert((kind.to_string(), ns.map(str::to_string), name.to_string())) {
            return;
        }
        let have = if class_list.is_empty() {
            "this cluster has no RuntimeClass".to_string()
        } else {
            format!("this cluster has {class_list}")
        };
        out.push(diag("runtimeclass-missing", Severity::Critical, kind, ns, name,
            format!("Pods cannot be created: RuntimeClass \"{class}\" does not exist ({have}) — fix runtimeClassName in the pod template or create the RuntimeClass.")));
    };
    for e in &inputs.events {
        let Some(msg) = e.message.as_deref() else {
            continue;
        };
        let o = &e.involved_object;
        if let Some(class) = quoted_after(msg, "RuntimeClass ").filter(|_| msg.contains("not found")) {
            rc_missing(
                o.kind.as_deref().unwrap_or("Object"),
                o.namespace.as_deref(),
                o.name.as_deref().unwrap_or(""),
                class,
                &mut out,
            );
        }
    }
    for rs in &inputs.replica_sets {
        let ns = rs.metadata.namespace.as_deref();
        let name = rs.metadata.name.as_deref().unwrap_or("");
        for c in rs.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
            if let Some(class) = c.message.as_deref().and_then(|m| quoted_after(m, "RuntimeClass ")) {
                rc_missing("ReplicaSet", ns, name, class, &mut out);
            }
        }
        let wants = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1) > 0;
        let class = rs
            .spec
            .as_ref()
            .and_then(|s| s.template.as_ref())
            .and_then(|t| t.spec.as_ref())
            .and_then(|s| s.runtime_class_name.as_deref());
        if let (true, Some(class)) = (wants, class) {
            rc_missing("ReplicaSet", ns, name, class, &mut out);
        }
    }

    // Handler missing in containerd, and pods that will silently run on CPU.
    // Pods that exist, looked up only when an event names a missing runtime handler.
    let mut live_pods: Option<std::collections::HashSet<(&str, &str)>> = None;
    let mut handler_seen = BTreeSet::new();
    for e in &inputs.events {
        let Some(msg) = e.message.as_deref() else {
            continue;
        };
        let o = &e.involved_object;
        if let Some(handler) = quoted_after(msg, "no runtime for ").filter(|_| msg.contains("is configured")) {
            let key = (o.namespace.clone().unwrap_or_default(), o.name.clone().unwrap_or_default());
            let live = live_pods.get_or_insert_with(|| {
                inputs
                    .pods
                    .iter()
                    .map(|p| (p.metadata.namespace.as_deref().unwrap_or(""), p.metadata.name.as_deref().unwrap_or("")))
                    .collect()
            });
            if o.kind.as_deref() == Some("Pod") && !live.contains(&(key.0.as_str(), key.1.as_str())) {
                continue;
            }
            if handler_seen.insert(key.clone()) {
                out.push(diag("runtime-handler-missing", Severity::Critical, o.kind.as_deref().unwrap_or("Pod"), o.namespace.as_deref(), &key.1,
                    format!("The node's containerd has no runtime handler \"{handler}\": install the NVIDIA container toolkit on that node and restart K3s so it registers the nvidia runtime.")));
            }
        }
    }
    let nvidia_class = inputs.runtime_classes.iter().any(|r| {
        r.metadata.name.as_deref().is_some_and(|n| n.starts_with("nvidia")) || r.handler.starts_with("nvidia")
    });
    for (p, f) in inputs.pods.iter().zip(facts) {
        let no_class = p.spec.as_ref().is_some_and(|s| s.runtime_class_name.as_deref().unwrap_or("").is_empty());
        if nvidia_class
            && no_class
            && pods::holds_resources(p)
            && f.requests.iter().any(|(k, v)| k.starts_with("nvidia.com/") && *v > 0)
        {
            let (ns, name) = pods::key(p);
            out.push(diag("gpu-pod-without-runtimeclass", Severity::Warning, "Pod", Some(&ns), &name,
                "Holds an NVIDIA GPU but has no runtimeClassName: on K3s, whose default runtime is runc, it may run on the CPU without any error — set runtimeClassName: nvidia.".into()));
        }
        let admission = p.status.as_ref().is_some_and(|s| {
            s.reason.as_deref() == Some("UnexpectedAdmissionError")
                && s.message.as_deref().is_some_and(|m| m.contains("shared"))
        });
        if admission {
            let (ns, name) = pods::key(p);
            out.push(diag(
                "shared-gpu-request-too-large",
                Severity::Critical,
                "Pod",
                Some(&ns),
                &name,
                "The kubelet refused this pod: it requests more than 1 replica of a time-sliced GPU — request 1."
                    .into(),
            ));
        }
    }

    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.code.cmp(&b.code))
            .then_with(|| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)))
    });
    out
}

/// What is wrong with a node that looks like a GPU node but offers no GPU to the scheduler
/// (its device plugin is missing or failing), if anything.
fn plugin_trouble(n: &k8s_openapi::api::core::v1::Node, view: &NodeView) -> Option<&'static str> {
    let nvidia: Vec<_> = view.gpu_resources.iter().filter(|g| node::is_nvidia_gpu(&g.resource)).collect();
    let has_capacity = nvidia.iter().any(|g| g.capacity > 0);
    let whole = nvidia.iter().find(|g| g.resource == "nvidia.com/gpu");
    let zero_allocatable = whole.is_some_and(|g| g.capacity > 0 && g.allocatable == 0);
    if zero_allocatable {
        Some("advertises nvidia.com/gpu capacity but 0 allocatable")
    } else if node::looks_like_gpu_node(n) && !has_capacity {
        Some("has GPU signals (labels, Jetson board) but advertises no nvidia.com/gpu")
    } else {
        None
    }
}

/// Pairs nodes with their views by name (views are sorted; inputs are not).
trait ZipByName<'a> {
    fn zip_by_name(self, views: &'a [Arc<NodeView>]) -> Vec<(&'a k8s_openapi::api::core::v1::Node, &'a NodeView)>;
}

impl<'a, I> ZipByName<'a> for I
where
    I: Iterator<Item = &'a std::sync::Arc<k8s_openapi::api::core::v1::Node>>,
{
    fn zip_by_name(self, views: &'a [Arc<NodeView>]) -> Vec<(&'a k8s_openapi::api::core::v1::Node, &'a NodeView)> {
        // Views are sorted by name: binary search, so this stays cheap on large clusters.
        self.filter_map(|n| {
            let name = n.metadata.name.as_deref().unwrap_or("");
            views.binary_search_by(|v| v.name.as_str().cmp(name)).ok().map(|i| (n.as_ref(), views[i].as_ref()))
        })
        .collect()
    }
}
