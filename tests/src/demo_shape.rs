//! The demo cluster (`sim/scenarios/edge.yaml`, or any scenario file) made real: the objects to
//! create through a real API server so that its scheduler and controllers do what the
//! simulator only replays. Nodes become kwok nodes with their labels, annotations and taints;
//! their capacity, allocatable and node info arrive by a status patch, as a kubelet and device
//! plugin report them. Pods become what made them: a `pod-template-hash` pod its Deployment, a
//! device plugin's pods a DaemonSet, a StatefulSet's or Job's pod or a bare pod a bare pod; a
//! pod the scenario had bound is pinned to its node by a node selector (the real scheduler
//! still decides, so it says why when it cannot), and a Pending one keeps only its own
//! constraints. Deployments in the file are created as they are (a missing RuntimeClass then
//! fails for real); Events, metrics and timelines are the controllers' and the simulator's own.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

/// What to create, in order.
#[derive(Debug, Default)]
pub struct Shape {
    /// Namespaces, RuntimeClasses, ResourceQuotas, DRA classes, slices, templates and written
    /// claims: created first.
    pub setup: Vec<Value>,
    /// Nodes to create (kwok's), each with the status patch that gives it its resources.
    pub nodes: Vec<(Value, Value)>,
    /// Workloads whose pods the scenario had bound: Deployments, DaemonSets and bare Pods.
    pub workloads: Vec<Value>,
    /// How many pods `workloads` make (all of them bound once the scheduler has placed them).
    pub placed_pods: usize,
    /// Workloads created once those are placed: what the scenario had Pending, and its own
    /// Deployments (so a model that waits in the demo waits here, not the one it raced).
    pub waiting: Vec<Value>,
}

/// Reads a scenario file's objects (lists flattened; timelines, events and metrics left out).
pub fn from_scenario(text: &str) -> anyhow::Result<Shape> {
    let mut objects = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(text) {
        let v = serde_json::to_value(serde_yaml::Value::deserialize(doc)?)?;
        if v["kind"] == "List" {
            objects.extend(v["items"].as_array().cloned().unwrap_or_default());
        } else if !v.is_null() {
            objects.push(v);
        }
    }
    Ok(shape(&objects))
}

fn meta_only(o: &Value, keep: &[&str]) -> Value {
    let mut m = Map::new();
    for k in keep {
        if let Some(v) = o["metadata"].get(*k) {
            m.insert((*k).to_string(), v.clone());
        }
    }
    Value::Object(m)
}

/// An object as a user writes it: no status, no server-set metadata.
fn as_written(o: &Value) -> Value {
    let mut o = o.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("status");
    }
    o["metadata"] = meta_only(&o, &["name", "namespace", "labels", "annotations"]);
    o
}

fn shape(objects: &[Value]) -> Shape {
    let mut s = Shape::default();
    // Deployments and DaemonSets by key, with the pods they stand for.
    let mut deployments: BTreeMap<(String, String), (Value, u32, bool)> = BTreeMap::new();
    let mut daemonsets: BTreeMap<(String, String), (Value, Vec<String>)> = BTreeMap::new();
    // Deployments as the file writes them; one that the file's pods already stand for is made
    // from those pods (bound where they ran) and not created a second time — applying the written
    // one over it changed its template and started a rollout that raced the GPU (a third model
    // Pending, at random).
    let mut written: Vec<Value> = Vec::new();
    for o in objects {
        let kind = o["kind"].as_str().unwrap_or("");
        match kind {
            "Namespace" => {
                let name = o["metadata"]["name"].as_str().unwrap_or("");
                if !["default", "kube-system", "kube-public", "kube-node-lease"].contains(&name) {
                    s.setup.push(as_written(o));
                }
            }
            "RuntimeClass" | "ResourceQuota" | "DeviceClass" | "ResourceSlice" | "ResourceClaimTemplate" => {
                s.setup.push(as_written(o))
            }
            // A claim a pod's template made is the resourceclaim controller's to make again; a
            // claim written by hand (shared, or held by no pod) is created as written, and the
            // real scheduler allocates it when a pod that names it is placed.
            "ResourceClaim" if o["metadata"]["ownerReferences"].is_null() => s.setup.push(as_written(o)),
            "Deployment" => written.push(as_written(o)),
            "Node" => s.nodes.push(node(o)),
            "Pod" => {
                let ns = o["metadata"]["namespace"].as_str().unwrap_or("default").to_string();
                let labels = o["metadata"]["labels"].clone();
                let mut spec = o["spec"].clone();
                let bound = spec.get("nodeName").and_then(Value::as_str).map(str::to_string);
                if let Some(m) = spec.as_object_mut() {
                    m.remove("nodeName");
                }
                let name = o["metadata"]["name"].as_str().unwrap_or("").to_string();
                if let Some(hash) = labels["pod-template-hash"].as_str() {
                    if let Some(node) = &bound {
                        spec["nodeSelector"]["kubernetes.io/hostname"] = json!(node);
                    }
                    let mut labels = labels.clone();
                    labels.as_object_mut().map(|m| m.remove("pod-template-hash"));
                    let deploy = name.split(&format!("-{hash}")).next().unwrap_or(&name).to_string();
                    let e = deployments.entry((ns.clone(), deploy.clone())).or_insert_with(|| {
                        (
                            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                                   "metadata": {"name": deploy, "namespace": ns, "labels": labels},
                                   "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                                            "template": {"metadata": {"labels": labels}, "spec": spec}}}),
                            0,
                            bound.is_some(),
                        )
                    });
                    e.1 += 1;
                } else if name.contains("-daemonset-") || name.contains("device-plugin") {
                    let ds = name.rsplit_once('-').map_or(name.as_str(), |(a, _)| a).to_string();
                    let e = daemonsets.entry((ns.clone(), ds.clone())).or_insert_with(|| {
                        (
                            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                                   "metadata": {"name": ds, "namespace": ns, "labels": labels},
                                   "spec": {"selector": {"matchLabels": labels},
                                            "template": {"metadata": {"labels": labels}, "spec": spec}}}),
                            Vec::new(),
                        )
                    });
                    e.1.extend(bound);
                } else {
                    if let Some(node) = &bound {
                        spec["nodeSelector"]["kubernetes.io/hostname"] = json!(node);
                    }
                    let p = json!({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec});
                    if bound.is_some() {
                        s.placed_pods += 1;
                        s.workloads.push(p);
                    } else {
                        s.waiting.push(p);
                    }
                }
            }
            _ => {}
        }
    }
    // A written Deployment that asks for more replicas than it has pods (a quota refuses the
    // rest) keeps its count: the real quota admission then refuses them as the file says.
    let mut asked: BTreeMap<(String, String), u64> = BTreeMap::new();
    for d in written {
        let key = (
            d["metadata"]["namespace"].as_str().unwrap_or("default").to_string(),
            d["metadata"]["name"].as_str().unwrap_or("").to_string(),
        );
        if deployments.contains_key(&key) {
            asked.insert(key, d["spec"]["replicas"].as_u64().unwrap_or(0));
        } else {
            s.waiting.push(d);
        }
    }
    for (key, (mut d, n, bound)) in deployments {
        d["spec"]["replicas"] = json!(asked.get(&key).copied().unwrap_or(0).max(u64::from(n)));
        if bound {
            s.placed_pods += n as usize;
            s.workloads.push(d);
        } else {
            s.waiting.push(d);
        }
    }
    for (_, (mut d, nodes)) in daemonsets {
        // Only the boards that ran it in the scenario (a board without its device plugin stays
        // without it).
        d["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]}}});
        s.placed_pods += nodes.len();
        s.workloads.push(d);
    }
    s
}

/// A kwok node (its annotation) and the status patch with its resources and node info.
fn node(o: &Value) -> (Value, Value) {
    let mut n = as_written(o);
    n["metadata"]["annotations"]["kwok.x-k8s.io/node"] = json!("fake");
    if let Some(spec) = n["spec"].as_object_mut() {
        spec.remove("podCIDR");
        spec.remove("providerID");
    }
    let st = &o["status"];
    let patch =
        json!({"status": {"capacity": st["capacity"], "allocatable": st["allocatable"], "nodeInfo": st["nodeInfo"]}});
    (n, patch)
}

/// Whether a node's status (as `kubectl get node -o json` prints it) carries the patch's
/// allocatable and is Ready.
pub fn node_done(node: &Value, patch: &Value) -> bool {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    let want = patch["status"]["allocatable"].as_object();
    ready && want.is_some_and(|w| w.iter().all(|(k, v)| node["status"]["allocatable"][k] == *v))
}
