//! The cells of a `Table` row, kind by kind, as the API server's printers fill them
//! (`pkg/printers/internalversion`): pod status and restarts, node roles and addresses, event
//! objects and sources, claim states, and Kubernetes' `HumanDuration` ages.

use serde_json::{json, Value};

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

fn node_cells(o: &Value, now: jiff::Timestamp, minor: u32) -> Vec<Value> {
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
        json!(kernel(o, minor)),
        json!(s(o, "/status/nodeInfo/containerRuntimeVersion").unwrap_or("<unknown>")),
    ]
}

/// The KERNEL-VERSION cell: since 1.36 the API server adds the architecture
/// (`5.15.148-tegra (arm64)`), as its printer does when `nodeInfo.architecture` is set.
fn kernel(o: &Value, minor: u32) -> String {
    let k = s(o, "/status/nodeInfo/kernelVersion").unwrap_or("<unknown>");
    match s(o, "/status/nodeInfo/architecture").filter(|a| !a.is_empty() && minor >= 36) {
        Some(arch) => format!("{k} ({arch})"),
        None => k.to_string(),
    }
}

fn event_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let first = s(o, "/firstTimestamp").or_else(|| s(o, "/eventTime"));
    let last = s(o, "/series/lastObservedTime").or_else(|| s(o, "/lastTimestamp")).or(first);
    let kind = s(o, "/involvedObject/kind").unwrap_or("").to_lowercase();
    let object = format!("{kind}/{}", s(o, "/involvedObject/name").unwrap_or(""));
    // As the API server's printer: the source's component, else the reporting controller; then
    // the source's host, else the reporting instance.
    let nonempty = |p: &str| s(o, p).filter(|v| !v.is_empty());
    let component = nonempty("/source/component").or_else(|| nonempty("/reportingComponent")).unwrap_or("");
    let source = match nonempty("/source/host").or_else(|| nonempty("/reportingInstance")) {
        Some(h) => format!("{component}, {h}"),
        None => component.to_string(),
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

pub(super) fn cells(kind: &str, o: &Value, now: jiff::Timestamp, minor: u32) -> Vec<Value> {
    let name = json!(s(o, "/metadata/name").unwrap_or(""));
    let age = json!(since(s(o, "/metadata/creationTimestamp"), now));
    let n = |p: &str| json!(o.pointer(p).and_then(Value::as_i64).unwrap_or(0));
    let mut row = match kind {
        "Event" => return event_cells(o, now),
        "Pod" => pod_cells(o, now),
        "Node" => node_cells(o, now, minor),
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
        "DaemonSet" => {
            let (c, i) = containers(o);
            let node_selector = o
                .pointer("/spec/template/spec/nodeSelector")
                .and_then(Value::as_object)
                .filter(|m| !m.is_empty())
                .map(|m| {
                    m.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or(""))).collect::<Vec<_>>().join(",")
                })
                .unwrap_or_else(|| "<none>".to_string());
            vec![
                n("/status/desiredNumberScheduled"),
                n("/status/currentNumberScheduled"),
                n("/status/numberReady"),
                n("/status/updatedNumberScheduled"),
                n("/status/numberAvailable"),
                json!(node_selector),
                age,
                json!(c),
                json!(i),
                json!(selector(o)),
            ]
        }
        "RuntimeClass" => vec![json!(s(o, "/handler").unwrap_or("")), age],
        "PriorityClass" => vec![
            o.pointer("/value").cloned().unwrap_or(json!(0)),
            json!(o.pointer("/globalDefault").and_then(Value::as_bool).unwrap_or(false)),
            age,
            json!(s(o, "/preemptionPolicy").unwrap_or("PreemptLowerPriority")),
        ],
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn claim_states_follow_the_api_servers_printer() {
        let claim = |status: Value| json!({"metadata": {"name": "c"}, "status": status});
        assert_eq!(claim_state(&claim(json!({}))), "pending");
        assert_eq!(claim_state(&claim(json!({"allocation": {"devices": {}}}))), "allocated");
        assert_eq!(
            claim_state(&claim(json!({"allocation": {}, "reservedFor": [{"resource": "pods", "name": "p"}]}))),
            "allocated,reserved"
        );
    }
}
