//! The `Table` form of a GET (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), which
//! kubectl asks for to print its columns. The columns and cell texts follow the API server's
//! own printers (`pkg/printers/internalversion`): `kubectl get pods -o wide`, `get nodes`,
//! `get events -A`, `get resourceclaims` print what they print against a real server. Rows
//! carry the object's metadata (`includeObject=Metadata`, the default), the whole object
//! (`Object`, which kubectl asks for with `--sort-by`) or nothing (`None`).

mod cells;

use cells::cells;
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
        "ReplicaSet" | "Deployment" | "DaemonSet" => workload_columns(kind, name, age),
        "RuntimeClass" => vec![name, Col("Handler", "string", 0), age],
        // As kube-apiserver's printers (pkg/printers/internalversion) lay PriorityClasses out.
        "PriorityClass" => vec![
            name,
            Col("Value", "integer", 0),
            Col("Global-Default", "boolean", 0),
            age,
            Col("PreemptionPolicy", "string", 0),
        ],
        "ResourceSlice" => {
            vec![name, Col("Node", "string", 0), Col("Driver", "string", 0), Col("Pool", "string", 0), age]
        }
        "ResourceClaim" => vec![name, Col("State", "string", 0), age],
        // ResourceClaimTemplate, DeviceClass and every kind without a printer.
        _ => vec![name, age],
    }
}

/// The columns of a workload's table (as kubectl prints ReplicaSets, Deployments, DaemonSets).
fn workload_columns(kind: &str, name: Col, age: Col) -> Vec<Col> {
    match kind {
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
        _ => vec![
            name,
            Col("Desired", "integer", 0),
            Col("Current", "integer", 0),
            Col("Ready", "integer", 0),
            Col("Up-to-date", "integer", 0),
            Col("Available", "integer", 0),
            Col("Node Selector", "string", 0),
            age,
            Col("Containers", "string", 1),
            Col("Images", "string", 1),
            Col("Selector", "string", 1),
        ],
    }
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
pub(crate) fn table_event(resource: ResourceId, o: &Value, include: Include, minor: u32) -> Value {
    let rv = o.pointer("/metadata/resourceVersion").cloned().unwrap_or_default();
    table(resource, &[o], json!({"resourceVersion": rv}), include, minor)
}

/// The `Table` for some objects of one resource, printed as a server of Kubernetes 1.`minor`
/// prints them.
pub(crate) fn table(resource: ResourceId, items: &[&Value], meta: Value, include: Include, minor: u32) -> Value {
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
            let mut row = json!({"cells": cells(kind, o, now, minor)});
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
    fn only_a_table_accept_header_asks_for_a_table() {
        assert!(wants_table(Some(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
        )));
        assert!(!wants_table(Some("application/json")));
        assert!(!wants_table(None));
    }

    #[test]
    fn rows_have_one_cell_per_column() {
        for kind in ["Pod", "Node", "Event", "ResourceSlice", "ResourceClaim", "DeviceClass", "ReplicaSet"] {
            let r = crate::resources::by_kind_name(kind).unwrap_or_else(|| panic!("{kind}"));
            let t = table(r, &[&json!({"metadata": {"name": "x"}})], json!({}), Include::Metadata, 34);
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
        let t = table(by_kind("v1", "Pod").unwrap_or_else(|| panic!("Pod")), &[&pod], json!({}), Include::Metadata, 34);
        let cells = &t["rows"][0]["cells"];
        assert_eq!(cells[1], "1/2");
        assert_eq!(cells[2], "CrashLoopBackOff");
        assert_eq!(cells[3], "2");
        assert_eq!(cells[5], "10.42.0.7");
        assert_eq!(cells[6], "n1");
        assert_eq!(t["rows"][0]["object"]["metadata"]["namespace"], "ml");
    }
}
