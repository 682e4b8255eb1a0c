//! Reading gpudash's JSON view (`/api/v1/cluster`) in the end-to-end tests.

use serde_json::Value;

/// The array under `key` (empty where there is none).
pub fn items(v: &Value, key: &str) -> Vec<Value> {
    v[key].as_array().cloned().unwrap_or_default()
}

/// The first diagnosis with this code whose object's name begins with `name_prefix`.
pub fn diagnosis(v: &Value, code: &str, name_prefix: &str) -> Option<Value> {
    items(v, "diagnoses")
        .into_iter()
        .find(|d| d["code"] == code && d["name"].as_str().is_some_and(|n| n.starts_with(name_prefix)))
}

/// The first Pending pod whose name begins with `prefix`.
pub fn pending(v: &Value, prefix: &str) -> Option<Value> {
    items(v, "pending").into_iter().find(|p| p["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
}
