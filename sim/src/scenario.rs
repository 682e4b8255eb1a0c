//! Scenario files: multi-document YAML of objects as `kubectl get -o yaml` prints them, `List`s
//! of such objects, and an optional `Timeline` that applies and deletes objects over time.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

use crate::resources::{by_kind, by_kind_name, ResourceId};

/// A scenario problem, naming the file, the document (counted from 1) and the field.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{file}: document {doc}: {field}: {message}")]
pub struct ScenarioError {
    /// The file (or `<inline>`).
    pub file: String,
    /// The YAML document, counted from 1.
    pub doc: usize,
    /// The field path within the document (`metadata.name`, `items[2].kind`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// An object to serve: the resource index and the object.
#[derive(Debug, Clone, PartialEq)]
pub struct SimObject {
    /// Which resource.
    pub resource: ResourceId,
    /// The object as JSON.
    pub object: Value,
}

/// A reference to an object to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    /// Which resource.
    pub resource: ResourceId,
    /// Namespace (empty for cluster objects; `default` is assumed for namespaced ones).
    pub namespace: String,
    /// Name.
    pub name: String,
}

/// One timeline step: wait, then apply and delete.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Delay after the previous step (or the start).
    pub after: Duration,
    /// Objects to create or replace.
    pub apply: Vec<SimObject>,
    /// Objects to remove.
    pub delete: Vec<ObjectRef>,
}

/// A timeline: steps applied in order, optionally forever.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// The steps.
    pub steps: Vec<Step>,
    /// Start again from the first step after the last.
    pub looping: bool,
}

/// A loaded scenario: the initial objects and the timelines (one per Timeline document; they
/// run side by side).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scenario {
    /// Objects present from the start.
    pub objects: Vec<SimObject>,
    /// What changes over time.
    pub timelines: Vec<Timeline>,
}

/// Parses a duration such as `5s`, `500ms`, `2m`, `1h`, `1m30s`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let secs = match &rest[..unit_end] {
            "ms" => n / 1000.0,
            "s" => n,
            "m" => n * 60.0,
            "h" => n * 3600.0,
            _ => return None,
        };
        rest = &rest[unit_end..];
        total += Duration::try_from_secs_f64(secs).ok()?;
    }
    Some(total)
}

struct Ctx<'a> {
    file: &'a str,
    doc: usize,
}

impl Ctx<'_> {
    fn err(&self, field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.to_string(), doc: self.doc, field: field.into(), message: message.into() }
    }
}

fn join(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

fn check_string_map(ctx: &Ctx, v: &Value, field: &str) -> Result<(), ScenarioError> {
    match v {
        Value::Null => Ok(()),
        Value::Object(m) => {
            for (k, val) in m {
                if !val.is_string() {
                    return Err(ctx.err(format!("{field}.{k}"), "must be a string"));
                }
            }
            Ok(())
        }
        _ => Err(ctx.err(field, "must be a map of strings")),
    }
}

/// Validates one object and resolves its resource.
fn object(ctx: &Ctx, v: Value, prefix: &str) -> Result<SimObject, ScenarioError> {
    if !v.is_object() {
        return Err(ctx.err(if prefix.is_empty() { "(document)" } else { prefix }, "must be a map"));
    }
    let api_version = v
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| ctx.err(join(prefix, "apiVersion"), "missing or not a string"))?;
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| ctx.err(join(prefix, "kind"), "missing or not a string"))?;
    let resource = by_kind(api_version, kind).ok_or_else(|| {
        ctx.err(join(prefix, "kind"), format!("{api_version} {kind} is not a kind the simulator serves"))
    })?;
    let meta = v
        .get("metadata")
        .filter(|m| m.is_object())
        .ok_or_else(|| ctx.err(join(prefix, "metadata"), "missing or not a map"))?;
    match meta.get("name") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => return Err(ctx.err(join(prefix, "metadata.name"), "missing or empty")),
    }
    match meta.get("namespace") {
        None | Some(Value::String(_)) => {}
        Some(_) => return Err(ctx.err(join(prefix, "metadata.namespace"), "must be a string")),
    }
    if !resource.def().namespaced && meta.get("namespace").is_some_and(|n| n != "") {
        return Err(ctx.err(join(prefix, "metadata.namespace"), format!("{kind} is not namespaced")));
    }
    for f in ["labels", "annotations"] {
        check_string_map(ctx, meta.get(f).unwrap_or(&Value::Null), &join(prefix, &format!("metadata.{f}")))?;
    }
    Ok(SimObject { resource, object: v })
}

fn timeline(ctx: &Ctx, v: &Value, out: &mut Timeline) -> Result<(), ScenarioError> {
    let body = v.get("spec").filter(|s| s.is_object()).unwrap_or(v);
    let prefix = if v.get("spec").is_some() { "spec" } else { "" };
    match body.get("loop") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => out.looping |= *b,
        Some(_) => return Err(ctx.err(join(prefix, "loop"), "must be true or false")),
    }
    let steps = body
        .get("steps")
        .and_then(Value::as_array)
        .ok_or_else(|| ctx.err(join(prefix, "steps"), "missing or not a list"))?;
    for (i, s) in steps.iter().enumerate() {
        let sp = join(prefix, &format!("steps[{i}]"));
        let after = match s.get("after") {
            None | Some(Value::Null) => Duration::ZERO,
            Some(Value::String(a)) => parse_duration(a)
                .ok_or_else(|| ctx.err(format!("{sp}.after"), format!("{a:?} is not a duration like 5s, 500ms, 2m")))?,
            Some(Value::Number(n)) => Duration::try_from_secs_f64(n.as_f64().unwrap_or(-1.0))
                .map_err(|_| ctx.err(format!("{sp}.after"), "must be a non-negative number of seconds"))?,
            Some(_) => return Err(ctx.err(format!("{sp}.after"), "must be a duration")),
        };
        let mut step = Step { after, apply: Vec::new(), delete: Vec::new() };
        if let Some(a) = s.get("apply").filter(|a| !a.is_null()) {
            let a = a.as_array().ok_or_else(|| ctx.err(format!("{sp}.apply"), "must be a list"))?;
            for (j, o) in a.iter().enumerate() {
                step.apply.push(object(ctx, o.clone(), &format!("{sp}.apply[{j}]"))?);
            }
        }
        if let Some(d) = s.get("delete").filter(|d| !d.is_null()) {
            let d = d.as_array().ok_or_else(|| ctx.err(format!("{sp}.delete"), "must be a list"))?;
            for (j, r) in d.iter().enumerate() {
                let rp = format!("{sp}.delete[{j}]");
                let kind =
                    r.get("kind").and_then(Value::as_str).ok_or_else(|| ctx.err(format!("{rp}.kind"), "missing"))?;
                let resource = by_kind_name(kind).ok_or_else(|| {
                    ctx.err(format!("{rp}.kind"), format!("{kind} is not a kind the simulator serves"))
                })?;
                let name = r
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| ctx.err(format!("{rp}.name"), "missing"))?;
                let namespace = r.get("namespace").and_then(Value::as_str).unwrap_or("").to_string();
                step.delete.push(ObjectRef { resource, namespace, name: name.to_string() });
            }
        }
        out.steps.push(step);
    }
    Ok(())
}

impl Scenario {
    /// Parses one scenario text; `file` names it in errors. Documents are merged into `self`.
    pub fn add_text(&mut self, file: &str, text: &str) -> Result<(), ScenarioError> {
        for (i, doc) in serde_yaml::Deserializer::from_str(text).enumerate() {
            let ctx = Ctx { file, doc: i + 1 };
            let y = serde_yaml::Value::deserialize(doc).map_err(|e| ctx.err("(syntax)", e.to_string()))?;
            if y.is_null() {
                continue;
            }
            let v: Value = serde_json::to_value(y).map_err(|e| ctx.err("(document)", e.to_string()))?;
            match v.get("kind").and_then(Value::as_str) {
                Some("List") => {
                    let items = v
                        .get("items")
                        .and_then(Value::as_array)
                        .ok_or_else(|| ctx.err("items", "missing or not a list"))?;
                    for (j, item) in items.iter().enumerate() {
                        self.objects.push(object(&ctx, item.clone(), &format!("items[{j}]"))?);
                    }
                }
                Some("Timeline") => {
                    let av = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
                    if av != "gpudash.dev/v1alpha1" {
                        return Err(ctx.err("apiVersion", "a Timeline must be apiVersion gpudash.dev/v1alpha1"));
                    }
                    let mut t = Timeline::default();
                    timeline(&ctx, &v, &mut t)?;
                    self.timelines.push(t);
                }
                _ => self.objects.push(object(&ctx, v, "")?),
            }
        }
        Ok(())
    }

    /// Loads and merges scenario files in order.
    pub fn from_files(paths: &[impl AsRef<Path>]) -> Result<Self, ScenarioError> {
        let mut s = Self::default();
        for p in paths {
            let p = p.as_ref();
            let name = p.display().to_string();
            let text = std::fs::read_to_string(p).map_err(|e| ScenarioError {
                file: name.clone(),
                doc: 0,
                field: "(file)".into(),
                message: e.to_string(),
            })?;
            s.add_text(&name, &text)?;
        }
        Ok(s)
    }

    /// Parses a single text.
    pub fn from_text(file: &str, text: &str) -> Result<Self, ScenarioError> {
        let mut s = Self::default();
        s.add_text(file, text)?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_go_style() {
        assert_eq!(parse_duration("5s"), Some(Duration::from_secs(5)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn objects_lists_and_timelines_load() {
        let text = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: p1, namespace: ml}}
---
apiVersion: gpudash.dev/v1alpha1
kind: Timeline
spec:
  loop: true
  steps:
  - after: 2s
    apply: [{apiVersion: v1, kind: Pod, metadata: {name: p2}}]
    delete: [{kind: Pod, namespace: ml, name: p1}]
"#;
        let s = Scenario::from_text("t.yaml", text).expect("valid scenario");
        assert_eq!(s.objects.len(), 2);
        assert!(s.timelines[0].looping);
        assert_eq!(s.timelines[0].steps[0].after, Duration::from_secs(2));
        assert_eq!(s.timelines[0].steps[0].delete[0].name, "p1");
    }

    #[test]
    fn bad_documents_name_file_document_and_field() {
        let cases = [
            ("apiVersion: v1\nkind: Pod\nmetadata: {}\n", 1, "metadata.name"),
            ("---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\nkind: Pod\n", 2, "apiVersion"),
            ("apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n", 1, "kind"),
            ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: 3, labels: {a: 1}}}\n", 1, "items[0].metadata.name"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {a: [1]}}\n", 1, "metadata.labels.a"),
            ("apiVersion: gpudash.dev/v1alpha1\nkind: Timeline\nsteps:\n- after: soon\n", 1, "steps[0].after"),
            ("apiVersion: v1\nkind: Pod\nmetadata: {name: a\n", 1, "(syntax)"),
            ("- just\n- a list\n", 1, "(document)"),
        ];
        for (text, doc, field) in cases {
            let e = Scenario::from_text("bad.yaml", text).expect_err(text);
            assert_eq!((e.doc, e.field.as_str()), (doc, field), "{text}: {e}");
            assert!(e.to_string().starts_with("bad.yaml: document "), "{e}");
        }
    }
}
