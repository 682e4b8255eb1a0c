//! The `Table` form of a GET (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), which
//! kubectl asks for to print its columns. The columns and cell texts follow the API server's
//! own printers (`pkg/printers/internalversion`): `kubectl get pods -o wide`, `get nodes`,
//! `get events -A`, `get resourceclaims` print what they print against a real server. Rows
//! carry the object's metadata (`includeObject=Metadata`, the default), the whole object
//! (`Object`, which kubectl asks for with `--sort-by`) or nothing (`None`).

use serde_json::{json, Value};

use crate::resources::ResourceId;

/// Whether the request's `Accept` header asks for a `Table`.
pub(crate) fn wants_table(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|part| {
            let params: Vec<&str> = part.split(';').map(str::trim).collect();
            params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io")
        })
    })
}

/// One column: its name, type, and priority (0 always shown; 1 only with `-o wide`).
struct Col(&'static str, &'static str, u8);

fn columns(kind: &str) -> Vec<Col> {
    let name = Col("Name", "string", 0);
    let age = Col("Age", "string", 0);
    match kind {
        "Pod" => vec![
            name,
            Col("Ready", "string", 0),
            Col("Status", "string", 0),
            Col("Restarts", "string", 0),
            age,
            Col("IP", "string", 1),
            Col("Node", "string", 1),
            Col("Nominated Node", "string", 1),
            Col("Readiness Gates", "string", 1),
        ],
        "Node" => vec![
            name,
            Col("Status", "string", 0),
            Col("Roles", "string", 0),
            age,
            Col("Version", "string", 0),
            Col("Internal-IP", "string", 1),
            Col("External-IP", "string", 1),
            Col("OS-Image", "string", 1),
            Col("Kernel-Version", "string", 1),
            Col("Container-Runtime", "string", 1),
        ],
        "Event" => vec![
            Col("Last Seen", "string", 0),
            Col("Type", "string", 0),
            Col("Reason", "string", 0),
            Col("Object", "string", 0),
            Col("Subobject", "string", 1),
            Col("Source", "string", 1),
            Col("Message", "string", 0),
            Col("First Seen", "string", 1),
            Col("Count", "string", 1),
            Col("Name", "string", 1),
        ],
        "Namespace" => vec![name, Col("Status", "string", 0), age],
        "ResourceQuota" => vec![name, age, Col("Request", "string", 0), Col("Limit", "string", 0)],
        "ReplicaSet" => vec![
            name,
            Col("Desired", "integer", 0),
            Col("Current", "integer", 0),
            Col("Ready", "integer", 0),
            age,
            Col("Containers", "string", 1),
            Col("Images", "string", 1),
            Col("Selector", "string", 1),
        ],
        "Deployment" => vec![
            name,
            Col("Ready", "string", 0),
            Col("Up-to-date", "string", 0),
            Col("Available", "string", 0),
            age,
            Col("Containers", "string", 1),
            Col("Images", "string", 1),
            Col("Selector", "string", 1),
        ],
        "RuntimeClass" => vec![name, Col("Handler", "string", 0), age],
        "ResourceSlice" => {
            vec![name, Col("Node", "string", 0), Col("Driver", "string", 0), Col("Pool", "string", 0), age]
        }
        "ResourceClaim" => vec![name, Col("State", "string", 0), age],
        // ResourceClaimTemplate, DeviceClass and every kind without a printer.
        _ => vec![name, age],
    }
}

fn s<'a>(o: &'a Value, ptr: &str) -> Option<&'a str> {
    o.pointer(ptr).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn or_none(v: Option<&str>) -> Value {
    json!(v.unwrap_or("<none>"))
}

/// Kubernetes' `HumanDuration`: `45s`, `5m30s`, `2h10m`, `3d4h`, `400d`, `3y20d`.
pub(crate) fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let secs = secs.max(0);
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86_400);
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        if secs % 60 == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{}s", secs % 60)
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        if m % 60 == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{}m", m % 60)
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 192 {
        if h % 24 == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{}h", h % 24)
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        let y = d / 365;
        if d % 365 == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{}d", d % 365)
        }
    } else {
        format!("{}y", d / 365)
    }
}

fn since(ts: Option<&str>, now: jiff::Timestamp) -> String {
    match ts.and_then(|t| t.parse::<jiff::Timestamp>().ok()) {
        Some(t) => human_duration(now.as_second() - t.as_second()),
        None => "<unknown>".into(),
    }
}

fn pod_status(o: &Value) -> String {
    if s(o, "/metadata/deletionTimestamp").is_some() {
        return "Terminating".into();
    }
    if let Some(r) = s(o, "/status/reason") {
        return r.into();
    }
    let mut reason = s(o, "/status/phase").unwrap_or("Pending").to_string();
    let statuses = o.pointer("/status/containerStatuses").and_then(Value::as_array);
    for c in statuses.into_iter().flatten() {
        if let Some(w) = s(c, "/state/waiting/reason") {
            reason = w.into();
        } else if let Some(t) = s(c, "/state/terminated/reason") {
            reason = t.into();
        }
    }
    if reason == "Pending" && s(o, "/spec/nodeName").is_some() && statuses.is_none() {
        reason = "ContainerCreating".into();
    }
    reason
}

fn pod_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let total = o.pointer("/spec/containers").and_then(Value::as_array).map_or(0, Vec::len);
    let statuses = o.pointer("/status/containerStatuses").and_then(Value::as_array);
    let ready = statuses.into_iter().flatten().filter(|c| c["ready"].as_bool() == Some(true)).count();
    let restarts: i64 = statuses.into_iter().flatten().filter_map(|c| c["restartCount"].as_i64()).sum();
    let last = statuses
        .into_iter()
        .flatten()
        .filter_map(|c| s(c, "/lastState/terminated/finishedAt"))
        .filter_map(|t| t.parse::<jiff::Timestamp>().ok())
        .max();
    let restarts = match last {
        Some(t) if restarts > 0 => format!("{restarts} ({} ago)", human_duration(now.as_second() - t.as_second())),
        _ => restarts.to_string(),
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(pod_status(o)),
        json!(restarts),
        json!(since(s(o, "/metadata/creationTimestamp"), now)),
        or_none(s(o, "/status/podIP")),
        or_none(s(o, "/spec/nodeName")),
        or_none(s(o, "/status/nominatedNodeName")),
        json!("<none>"),
    ]
}

fn node_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let conds = o.pointer("/status/conditions").and_then(Value::as_array);
    let ready = conds.into_iter().flatten().find(|c| c["type"] == "Ready").and_then(|c| c["status"].as_str());
    let mut status = match ready {
        Some("True") => "Ready",
        Some("False") => "NotReady",
        _ => "Unknown",
    }
    .to_string();
    if o.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<&str> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/").filter(|r| !r.is_empty()))
        .collect();
    roles.sort_unstable();
    let addr = |t: &str| {
        o.pointer("/status/addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|a| a["type"] == t)
            .and_then(|a| a["address"].as_str())
            .map(str::to_string)
    };
    vec![
        json!(status),
        json!(if roles.is_empty() { "<none>".to_string() } else { roles.join(",") }),
        json!(since(s(o, "/metadata/creationTimestamp"), now)),
        json!(s(o, "/status/nodeInfo/kubeletVersion").unwrap_or("")),
        or_none(addr("InternalIP").as_deref()),
        or_none(addr("ExternalIP").as_deref()),
        json!(s(o, "/status/nodeInfo/osImage").unwrap_or("<unknown>")),
        json!(s(o, "/status/nodeInfo/kernelVersion").unwrap_or("<unknown>")),
        json!(s(o, "/status/nodeInfo/containerRuntimeVersion").unwrap_or("<unknown>")),
    ]
}

fn event_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let first = s(o, "/firstTimestamp").or_else(|| s(o, "/eventTime"));
    let last = s(o, "/series/lastObservedTime").or_else(|| s(o, "/lastTimestamp")).or(first);
    let kind = s(o, "/involvedObject/kind").unwrap_or("").to_lowercase();
    let object = format!("{kind}/{}", s(o, "/involvedObject/name").unwrap_or(""));
    let source = match (s(o, "/source/component"), s(o, "/source/host")) {
        (Some(c), Some(h)) => format!("{c}, {h}"),
        (Some(c), None) => c.to_string(),
        (None, _) => s(o, "/reportingComponent").unwrap_or("").to_string(),
    };
    let count = o.pointer("/series/count").or_else(|| o.get("count")).and_then(Value::as_i64).unwrap_or(1);
    vec![
        json!(since(last, now)),
        json!(s(o, "/type").unwrap_or("")),
        json!(s(o, "/reason").unwrap_or("")),
        json!(object),
        json!(s(o, "/involvedObject/fieldPath").unwrap_or("")),
        json!(source),
        json!(s(o, "/message").unwrap_or("")),
        json!(since(first, now)),
        json!(count),
        json!(s(o, "/metadata/name").unwrap_or("")),
    ]
}

fn quota_list(o: &Value, prefix: bool) -> String {
    let hard = o.pointer("/status/hard").or_else(|| o.pointer("/spec/hard")).and_then(Value::as_object);
    let used = o.pointer("/status/used").and_then(Value::as_object);
    let mut parts = Vec::new();
    for (k, v) in hard.into_iter().flatten() {
        if k.starts_with("limits.") != prefix {
            continue;
        }
        let u = used.and_then(|u| u.get(k)).and_then(Value::as_str).unwrap_or("0");
        parts.push(format!("{k}: {u}/{}", v.as_str().unwrap_or("")));
    }
    parts.join(", ")
}

fn claim_state(o: &Value) -> String {
    let deleted = s(o, "/metadata/deletionTimestamp").is_some();
    let allocated = o.pointer("/status/allocation").is_some_and(|a| !a.is_null());
    let reserved = o.pointer("/status/reservedFor").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if !allocated {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if reserved {
            states.push("reserved");
        } else if deleted {
            states.push("deallocating");
        }
    }
    states.join(",")
}

fn containers(o: &Value) -> (String, String) {
    let cs = o.pointer("/spec/template/spec/containers").and_then(Value::as_array);
    let names: Vec<&str> = cs.into_iter().flatten().filter_map(|c| c["name"].as_str()).collect();
    let images: Vec<&str> = cs.into_iter().flatten().filter_map(|c| c["image"].as_str()).collect();
    (names.join(","), images.join(","))
}

fn selector(o: &Value) -> String {
    let labels = o.pointer("/spec/selector/matchLabels").and_then(Value::as_object);
    labels.into_iter().flatten().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect::<Vec<_>>().join(",")
}

fn cells(kind: &str, o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let name = json!(s(o, "/metadata/name").unwrap_or(""));
    let age = json!(since(s(o, "/metadata/creationTimestamp"), now));
    let n = |p: &str| json!(o.pointer(p).and_then(Value::as_i64).unwrap_or(0));
    let mut row = match kind {
        "Event" => return event_cells(o, now),
        "Pod" => pod_cells(o, now),
        "Node" => node_cells(o, now),
        "Namespace" => vec![json!(s(o, "/status/phase").unwrap_or("Active")), age],
        "ResourceQuota" => vec![age, json!(quota_list(o, false)), json!(quota_list(o, true))],
        "ReplicaSet" => {
            let (c, i) = containers(o);
            vec![
                n("/spec/replicas"),
                n("/status/replicas"),
                n("/status/readyReplicas"),
                age,
                json!(c),
                json!(i),
                json!(selector(o)),
            ]
        }
        "Deployment" => {
            let (c, i) = containers(o);
            let ready = format!(
                "{}/{}",
                o.pointer("/status/readyReplicas").and_then(Value::as_i64).unwrap_or(0),
                o.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)
            );
            vec![
                json!(ready),
                n("/status/updatedReplicas"),
                n("/status/availableReplicas"),
                age,
                json!(c),
                json!(i),
                json!(selector(o)),
            ]
        }
        "RuntimeClass" => vec![json!(s(o, "/handler").unwrap_or("")), age],
        "ResourceSlice" => vec![
            json!(s(o, "/spec/nodeName").unwrap_or("")),
            json!(s(o, "/spec/driver").unwrap_or("")),
            json!(s(o, "/spec/pool/name").unwrap_or("")),
            age,
        ],
        "ResourceClaim" => vec![json!(claim_state(o)), age],
        _ => vec![age],
    };
    row.insert(0, name);
    row
}

/// How much of each object a row carries (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    pub(crate) fn parse(v: Option<&str>) -> Self {
        match v {
            Some("None") => Include::None,
            Some("Object") => Include::Object,
            _ => Include::Metadata,
        }
    }
}

fn row_object(o: &Value, include: Include) -> Value {
    match include {
        Include::None => Value::Null,
        Include::Object => o.clone(),
        Include::Metadata => {
            let mut meta = o.get("metadata").cloned().unwrap_or_else(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.remove("managedFields");
            }
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
        }
    }
}

/// A watch event's object in the `Table` form: one row (the API server does the same).
pub(crate) fn table_event(resource: ResourceId, o: &Value, include: Include) -> Value {
    let rv = o.pointer("/metadata/resourceVersion").cloned().unwrap_or_default();
    table(resource, &[o], json!({"resourceVersion": rv}), include)
}

/// The `Table` for some objects of one resource.
pub(crate) fn table(resource: ResourceId, items: &[&Value], meta: Value, include: Include) -> Value {
    let kind = resource.def().kind;
    let now = jiff::Timestamp::now();
    let defs: Vec<Value> = columns(kind)
        .into_iter()
        .map(|Col(name, ty, priority)| {
            let mut d = json!({"name": name, "type": ty, "format": "", "description": "", "priority": priority});
            if name == "Name" && priority == 0 {
                d["format"] = json!("name");
            }
            d
        })
        .collect();
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(kind, o, now)});
            let obj = row_object(o, include);
            if !obj.is_null() {
                row["object"] = obj;
            }
            row
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::by_kind;

    #[test]
    fn durations_print_as_kubectl_prints_them() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(330), "5m30s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(3 * 86_400 + 4 * 3600), "3d4h");
        assert_eq!(human_duration(400 * 86_400), "400d");
        assert_eq!(human_duration(-5), "<invalid>");
    }

    #[test]
    fn only_a_table_accept_header_asks_for_a_table() {
        assert!(wants_table(Some(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
        )));
        assert!(!wants_table(Some("application/json")));
        assert!(!wants_table(None));
    }

    #[test]
    fn claim_states_follow_the_api_servers_printer() {
        let claim = |status: Value| json!({"metadata": {"name": "c"}, "status": status});
        assert_eq!(claim_state(&claim(json!({}))), "pending");
        assert_eq!(claim_state(&claim(json!({"allocation": {"devices": {}}}))), "allocated");
        assert_eq!(
            claim_state(&claim(json!({"allocation": {}, "reservedFor": [{"resource": "pods", "name": "p"}]}))),
            "allocated,reserved"
        );
    }

    #[test]
    fn rows_have_one_cell_per_column() {
        for kind in ["Pod", "Node", "Event", "ResourceSlice", "ResourceClaim", "DeviceClass", "ReplicaSet"] {
            let r = crate::resources::by_kind_name(kind).unwrap_or_else(|| panic!("{kind}"));
            let t = table(r, &[&json!({"metadata": {"name": "x"}})], json!({}), Include::Metadata);
            assert_eq!(
                t["rows"][0]["cells"].as_array().map_or(0, Vec::len),
                t["columnDefinitions"].as_array().map_or(99, Vec::len),
                "{kind}"
            );
        }
        let pod = json!({
            "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"nodeName": "n1", "containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "podIP": "10.42.0.7", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
        });
        let t = table(by_kind("v1", "Pod").unwrap_or_else(|| panic!("Pod")), &[&pod], json!({}), Include::Metadata);
        let cells = &t["rows"][0]["cells"];
        assert_eq!(cells[1], "1/2");
        assert_eq!(cells[2], "CrashLoopBackOff");
        assert_eq!(cells[3], "2");
        assert_eq!(cells[5], "10.42.0.7");
        assert_eq!(cells[6], "n1");
        assert_eq!(t["rows"][0]["object"]["metadata"]["namespace"], "ml");
    }
}
