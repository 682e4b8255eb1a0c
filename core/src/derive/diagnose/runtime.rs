//! Runtime diagnoses: a RuntimeClass that does not exist, a handler containerd lacks, a GPU pod
//! that may silently run on the CPU, and the kubelet refusing a too-large shared request.

use std::collections::{BTreeSet, HashMap};

use gpudash_model::model::{Code, Diagnosis, Kind, Severity};

use super::runtime_said as said;

use super::{diag, on_node, Ctx};
use crate::derive::events::{RUNTIME_CLASS, RUNTIME_HANDLER};
use crate::derive::{node, pods};

/// Extracts the quoted name after `prefix` (`RuntimeClass "nvidia" not found` → `nvidia`).
fn quoted_after<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    let i = msg.find(prefix)? + prefix.len();
    let rest = msg[i..].strip_prefix('"')?;
    rest.split('"').next()
}

/// `runtimeclass-missing`: from events, ReplicaSet conditions, and templates naming a class
/// that does not exist.
pub(super) fn runtimeclass_missing(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    let classes: BTreeSet<&str> = cx.inputs.runtime_classes.iter().filter_map(|r| r.metadata.name.as_deref()).collect();
    let class_list = classes.iter().copied().collect::<Vec<_>>().join(", ");
    let mut seen = BTreeSet::new();
    let mut missing = |kind: &str, ns: Option<&str>, name: &str, class: &str, out: &mut Vec<Diagnosis>| {
        if classes.contains(class) || !seen.insert((kind.to_string(), ns.map(str::to_string), name.to_string())) {
            return;
        }
        let have =
            if class_list.is_empty() { said::cluster_has_no_runtimeclass() } else { said::cluster_has(&class_list) };
        out.push(diag(
            Code::RuntimeclassMissing,
            Severity::Critical,
            Kind::from(kind),
            ns,
            name,
            said::pods_cannot_created_runtimeclass_does(&class, &have),
        ));
    };
    for e in cx.runtime_events {
        let Some(msg) = e.message.as_deref() else {
            continue;
        };
        let o = &e.involved_object;
        if let Some(class) = quoted_after(msg, RUNTIME_CLASS).filter(|_| msg.contains("not found")) {
            missing(
                o.kind.as_deref().unwrap_or("Object"),
                o.namespace.as_deref(),
                o.name.as_deref().unwrap_or(""),
                class,
                out,
            );
        }
    }
    for rs in &cx.inputs.replica_sets {
        let ns = rs.metadata.namespace.as_deref();
        let name = rs.metadata.name.as_deref().unwrap_or("");
        for c in rs.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten() {
            if let Some(class) = c.message.as_deref().and_then(|m| quoted_after(m, RUNTIME_CLASS)) {
                missing("ReplicaSet", ns, name, class, out);
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
            missing("ReplicaSet", ns, name, class, out);
        }
    }
}

/// `runtime-handler-missing`: containerd on the node has no handler for the pod's class.
pub(super) fn runtime_handler_missing(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    // Pods that exist and their nodes, looked up only when an event names a missing handler.
    let mut live_pods: Option<HashMap<(&str, &str), Option<&str>>> = None;
    let mut seen = BTreeSet::new();
    for e in cx.runtime_events {
        let Some(msg) = e.message.as_deref() else {
            continue;
        };
        let o = &e.involved_object;
        let Some(handler) = quoted_after(msg, RUNTIME_HANDLER).filter(|_| msg.contains("is configured")) else {
            continue;
        };
        let key = (o.namespace.clone().unwrap_or_default(), o.name.clone().unwrap_or_default());
        let live = live_pods.get_or_insert_with(|| {
            cx.inputs
                .pods
                .iter()
                .map(|p| {
                    let key = (p.metadata.namespace.as_deref().unwrap_or(""), p.metadata.name.as_deref().unwrap_or(""));
                    (key, pods::node_of(p))
                })
                .collect()
        });
        let pod = live.get(&(key.0.as_str(), key.1.as_str()));
        if o.kind.as_deref() == Some("Pod") && pod.is_none() {
            continue;
        }
        if seen.insert(key.clone()) {
            let kind = o.kind.as_deref().unwrap_or("Pod");
            let text = said::node_containerd_has_no_runtime(&handler);
            let d = diag(
                Code::RuntimeHandlerMissing,
                Severity::Critical,
                Kind::from(kind),
                o.namespace.as_deref(),
                &key.1,
                text,
            );
            out.push(on_node(d, pod.copied().flatten().filter(|_| kind == "Pod")));
        }
    }
}

/// `gpu-pod-without-runtimeclass`: a pod holding an NVIDIA GPU with no runtimeClassName on a
/// node whose default runtime is runc (with `--default-runtime nvidia` it gets the GPU).
pub(super) fn gpu_pod_without_runtimeclass(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    let nvidia_class = cx.inputs.runtime_classes.iter().any(|r| {
        r.metadata.name.as_deref().is_some_and(node::is_nvidia_runtime) || node::is_nvidia_runtime(&r.handler)
    });
    if !nvidia_class {
        return;
    }
    // The pods holding resources, by node.
    for (p, f) in cx.index.nodes().flat_map(|(_, on)| &on.held) {
        let no_class = p.spec.as_ref().is_some_and(|s| s.runtime_class_name.as_deref().unwrap_or("").is_empty());
        if !(no_class
            // A DRA driver injects its devices through CDI: no runtime class is needed.
            && f.requests.iter().any(|(k, v)| k.starts_with("nvidia.com/") && *v > 0 && !p.dra_mapped(k)))
        {
            continue;
        }
        let default = pods::node_of(p).and_then(|n| cx.view(n)).and_then(|v| v.default_runtime.as_deref());
        if default.is_some_and(node::is_nvidia_runtime) {
            continue;
        }
        let (ns, name) = pods::key(p);
        let d = diag(
            Code::GpuPodWithoutRuntimeclass,
            Severity::Warning,
            Kind::Pod,
            Some(&ns),
            &name,
            said::holds_nvidia_gpu_but_has(),
        );
        out.push(on_node(d, pods::node_of(p)));
    }
}

/// `shared-gpu-request-too-large` from the kubelet's side (admission refused the pod).
pub(super) fn shared_gpu_admission_refused(cx: &Ctx<'_>, out: &mut Vec<Diagnosis>) {
    for p in cx.index.notable() {
        if pods::refused_shared(p) {
            let (ns, name) = pods::key(p);
            // What it asked for, said with the count (a real kubelet's refusal carries no count
            // in words a reader can act on).
            let text = match super::after::gpu_of(p) {
                Some((res, n)) => said::kubelet_refused_shared_request(&n, &res),
                None => said::kubelet_refused_pod_requests_more(),
            };
            let d = diag(Code::SharedGpuRequestTooLarge, Severity::Critical, Kind::Pod, Some(&ns), &name, text);
            out.push(on_node(d, pods::node_of(p)));
        }
    }
}
