//! The workload to place: from a pasted Pod/Deployment (YAML or JSON) or from the form's
//! fields, with errors that point at the field.

use std::collections::BTreeMap;

use gpudash_model::model::{FitError, FitInput};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, ResourceRequirements, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::quantity::Quantity;

/// Largest pasted manifest accepted.
pub const MAX_YAML: usize = 64 * 1024;

/// What is being placed.
#[derive(Debug, Clone)]
pub struct Workload {
    /// One replica's pod.
    pub pod: Pod,
    /// Replicas.
    pub replicas: u32,
    /// ResourceClaimTemplates pasted with it (as `kubectl apply -f` of one file would create
    /// them); the cluster's own are looked up too.
    pub templates: Vec<crate::dra::ResourceClaimTemplate>,
    /// ResourceClaims pasted with it.
    pub claims: Vec<crate::dra::ResourceClaim>,
    /// A pasted Deployment's or DaemonSet's update strategy: when one of that name already runs
    /// here, the paste is its update.
    pub rollout: Option<Rollout>,
}

/// The update strategy of a pasted Deployment (`spec.strategy`) or DaemonSet
/// (`spec.updateStrategy`), as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    /// `Deployment` or `DaemonSet`.
    pub kind: &'static str,
    /// `RollingUpdate` (the default), `Recreate` (Deployment) or `OnDelete` (DaemonSet).
    pub strategy: String,
    /// `maxSurge` as written (`1`, `25%`), if written.
    pub max_surge: Option<String>,
    /// `maxUnavailable` as written, if written.
    pub max_unavailable: Option<String>,
}

impl Rollout {
    /// The strategy of a pasted Deployment or DaemonSet, refused with the field's name where the
    /// API server refuses it (apps validation: a type it knows, `maxSurge`/`maxUnavailable` a
    /// non-negative int32 or a percentage, `maxUnavailable` at most 100 %, not both 0, no
    /// `rollingUpdate` beside `Recreate`/`OnDelete`).
    fn read(kind: &str, v: &Value) -> Result<Option<Rollout>, FitError> {
        let (kind, path, strategy, types) = match kind {
            "Deployment" => ("Deployment", "spec.strategy", v.pointer("/spec/strategy"), ["RollingUpdate", "Recreate"]),
            "DaemonSet" => {
                ("DaemonSet", "spec.updateStrategy", v.pointer("/spec/updateStrategy"), ["RollingUpdate", "OnDelete"])
            }
            _ => return Ok(None),
        };
        let strategy_type = match strategy.and_then(|s| s.get("type")) {
            None | Some(Value::Null) => "RollingUpdate".to_string(),
            Some(Value::String(t)) if types.contains(&t.as_str()) => t.clone(),
            Some(t) => {
                return Err(err(
                    format!("{path}.type"),
                    format!("Unsupported value: {t}: supported values: \"{}\", \"{}\"", types[0], types[1]),
                ))
            }
        };
        let rolling = strategy.and_then(|s| s.get("rollingUpdate")).filter(|r| !r.is_null());
        if rolling.is_some() && strategy_type != "RollingUpdate" {
            return Err(err(
                format!("{path}.rollingUpdate"),
                format!("Forbidden: may not be specified when strategy `type` is '{strategy_type}'"),
            ));
        }
        let written = |k: &str| -> Result<Option<(String, i64, bool)>, FitError> {
            let field = format!("{path}.rollingUpdate.{k}");
            match rolling.and_then(|r| r.get(k)) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                    Some(i) if i >= 0 => Ok(Some((i.to_string(), i64::from(i), false))),
                    Some(_) => Err(err(field, format!("Invalid value: {n}: must be greater than or equal to 0"))),
                    None => Err(err(field, format!("Invalid value: {n}: must be a 32-bit integer or a percentage"))),
                },
                Some(Value::String(s)) => {
                    let pct = s.strip_suffix('%').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
                    match pct.map(|d| d.parse::<i32>()) {
                        Some(Ok(p)) => Ok(Some((s.clone(), i64::from(p), true))),
                        Some(Err(_)) => Err(err(field, format!("Invalid value: \"{s}\": the percentage must be a 32-bit integer"))),
                        None => Err(err(
                            field,
                            format!(
                                "Invalid value: \"{s}\": a valid percent string must be a numeric string followed by an ending '%' \
                                 (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
                            ),
                        )),
                    }
                }
                Some(other) => {
                    Err(err(field, format!("Invalid value: {other}: must be an integer or percentage (e.g '5%')")))
                }
            }
        };
        let (surge, unavailable) = (written("maxSurge")?, written("maxUnavailable")?);
        if let Some((w, p, true)) = &unavailable {
            if *p > 100 {
                return Err(err(
                    format!("{path}.rollingUpdate.maxUnavailable"),
                    format!("Invalid value: \"{w}\": must not be greater than 100%"),
                ));
            }
        }
        let zero = |x: &Option<(String, i64, bool)>| x.as_ref().is_some_and(|(_, n, _)| *n == 0);
        // DaemonSets default maxUnavailable to 1 and maxSurge to 0; Deployments both to 25 %.
        if zero(&unavailable) && (zero(&surge) || (kind == "DaemonSet" && surge.is_none())) {
            let w = unavailable.as_ref().map(|(w, _, _)| w.clone()).unwrap_or_default();
            return Err(err(
                format!("{path}.rollingUpdate.maxUnavailable"),
                format!("Invalid value: \"{w}\": may not be 0 when `maxSurge` is 0"),
            ));
        }
        Ok(Some(Rollout {
            kind,
            strategy: strategy_type,
            max_surge: surge.map(|(w, _, _)| w),
            max_unavailable: unavailable.map(|(w, _, _)| w),
        }))
    }
}

fn err(field: impl Into<String>, message: impl Into<String>) -> FitError {
    FitError { field: field.into(), message: message.into() }
}

fn check_quantities(spec: &Value, path: &str) -> Result<(), FitError> {
    for list in ["initContainers", "containers"] {
        for (i, c) in spec.get(list).and_then(Value::as_array).into_iter().flatten().enumerate() {
            for kind in ["requests", "limits"] {
                for (res, q) in
                    c.pointer(&format!("/resources/{kind}")).and_then(Value::as_object).into_iter().flatten()
                {
                    let field = format!("{path}.{list}[{i}].resources.{kind}.{res}");
                    let s = match q {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        _ => return Err(err(field, "must be a quantity such as 2Gi or 500m")),
                    };
                    resource_amount(&field, res, &s)?;
                }
            }
        }
    }
    Ok(())
}

/// Whether `res` is an extended resource (a device plugin's or an operator's, such as
/// `nvidia.com/gpu`): a name with a domain outside `kubernetes.io`, and not hugepages. The API
/// server takes only whole numbers of these.
fn extended(res: &str) -> bool {
    match res.split_once('/') {
        Some((domain, _)) => !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")),
        None => false,
    }
}

/// Checks one request or limit as the API server's validation does, in its words
/// (`must be greater than or equal to 0`, `must be an integer`). An amount too large to count
/// is taken, as the API server takes it (its value saturates, and the pod fits nowhere).
fn resource_amount(field: &str, res: &str, s: &str) -> Result<(), FitError> {
    Quantity::parse(s).map_err(|e| err(field, e.to_string()))?;
    let shown = s.trim();
    let checked = if extended(res) {
        crate::quantity::GpuCount::parse(s).map(|c| c.0)
    } else if res == "cpu" {
        crate::quantity::MilliCpu::parse(s).map(|c| c.0)
    } else {
        crate::quantity::Bytes::parse(s).map(|b| b.0)
    };
    match checked {
        Ok(_) | Err(crate::quantity::QuantityError::Overflow(_)) => Ok(()),
        Err(crate::quantity::QuantityError::Negative(_)) => {
            Err(err(field, format!("Invalid value: {shown:?}: must be greater than or equal to 0")))
        }
        Err(crate::quantity::QuantityError::Fractional(_)) => {
            Err(err(field, format!("Invalid value: {shown:?}: must be an integer")))
        }
        Err(e) => Err(err(field, format!("Invalid value: {shown:?}: {e}"))),
    }
}

/// Deepest nesting accepted in a pasted manifest. A real workload nests about 15 deep; the YAML
/// parser's time grows with the square of the depth, so a deep paste is refused before parsing.
pub const MAX_DEPTH: usize = 64;

/// The nesting depth of a YAML or JSON text, counted without parsing it: open flow brackets
/// (`[`, `{`), and on each line the block indentation's columns (halved) with the `- ` markers
/// that open a sequence in a sequence.
pub fn nesting_depth(text: &str) -> usize {
    let mut flow: usize = 0;
    let mut deepest = 0;
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        let mut block = (line.len() - body.len()) / 2;
        let mut rest = body;
        while let Some(r) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("-\t")) {
            block += 1;
            rest = r.trim_start_matches(' ');
        }
        for b in rest.bytes() {
            match b {
                b'[' | b'{' => {
                    flow += 1;
                    deepest = deepest.max(block + flow);
                }
                b']' | b'}' => flow = flow.saturating_sub(1),
                _ => {}
            }
        }
        deepest = deepest.max(block + flow);
    }
    deepest
}

/// Parses a pasted Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet or Job.
pub fn from_yaml(text: &str) -> Result<Workload, FitError> {
    if text.len() > MAX_YAML {
        return Err(err("yaml", format!("{} bytes is more than the {} KiB accepted", text.len(), MAX_YAML / 1024)));
    }
    let depth = nesting_depth(text);
    if depth > MAX_DEPTH {
        return Err(err("yaml", format!("nested {depth} deep: more than the {MAX_DEPTH} levels a workload needs")));
    }
    // One workload, with the ResourceClaimTemplates and ResourceClaims it uses if pasted in the
    // same text (`---` documents or a List).
    let mut docs: Vec<Value> = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let y = <serde_yaml::Value as serde::Deserialize>::deserialize(doc)
            .map_err(|e| err("yaml", if i == 0 { e.to_string() } else { format!("document {}: {e}", i + 1) }))?;
        let v: Value = serde_json::to_value(y).map_err(|e| err("yaml", e.to_string()))?;
        match v.get("kind").and_then(Value::as_str) {
            Some("List") => docs.extend(v.get("items").and_then(Value::as_array).cloned().unwrap_or_default()),
            _ if v.is_null() => {}
            _ => docs.push(v),
        }
    }
    let mut templates = Vec::new();
    let mut claims = Vec::new();
    let mut workload = None;
    for (i, d) in docs.into_iter().enumerate() {
        match d.get("kind").and_then(Value::as_str) {
            Some("ResourceClaimTemplate") => templates
                .push(serde_json::from_value(d).map_err(|e| err(format!("document {}", i + 1), e.to_string()))?),
            Some("ResourceClaim") => {
                claims.push(serde_json::from_value(d).map_err(|e| err(format!("document {}", i + 1), e.to_string()))?)
            }
            _ if workload.is_none() => workload = Some(d),
            k => {
                return Err(err(
                    format!("document {}", i + 1),
                    format!(
                        "{}: paste one workload, with the ResourceClaimTemplates and ResourceClaims it uses",
                        k.unwrap_or("no kind")
                    ),
                ))
            }
        }
    }
    let v = workload.ok_or_else(|| err("kind", "missing: paste a Pod or a Deployment"))?;
    let kind =
        v.get("kind").and_then(Value::as_str).ok_or_else(|| err("kind", "missing: paste a Pod or a Deployment"))?;
    let (spec_path, spec, replicas) = match kind {
        "Pod" => ("spec", v.get("spec").cloned(), 1),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "Job" | "DaemonSet" => {
            let r = match v.pointer("/spec/replicas") {
                None | Some(Value::Null) => 1,
                Some(r) => r
                    .as_u64()
                    .filter(|r| *r <= 10_000)
                    .ok_or_else(|| err("spec.replicas", "must be a whole number up to 10000"))?,
            };
            ("spec.template.spec", v.pointer("/spec/template/spec").cloned(), r as u32)
        }
        k => {
            return Err(err(
                "kind",
                format!("{k} is not a workload gpudash can place (Pod, Deployment, ReplicaSet, StatefulSet, Job)"),
            ))
        }
    };
    let spec = spec.filter(Value::is_object).ok_or_else(|| err(spec_path, "missing"))?;
    check_quantities(&spec, spec_path)?;
    let spec: PodSpec = serde_json::from_value(spec).map_err(|e| err(spec_path, e.to_string()))?;
    if spec.containers.is_empty() {
        return Err(err(format!("{spec_path}.containers"), "at least one container is needed"));
    }
    // The namespace its quota applies in: the object's, else `default` (as kubectl applies it).
    let namespace = v.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default").to_string();
    let name = v.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("what-if").to_string();
    let metadata = ObjectMeta { namespace: Some(namespace), name: Some(name), ..ObjectMeta::default() };
    let rollout = Rollout::read(kind, &v)?;
    Ok(Workload { pod: Pod { metadata, spec: Some(spec), ..Pod::default() }, replicas, templates, claims, rollout })
}

fn quantity_field(field: &str, res: &str, s: &str) -> Result<Option<K8sQuantity>, FitError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    resource_amount(field, res, s)?;
    Ok(Some(K8sQuantity(s.to_string())))
}

fn pairs(field: &str, s: &str) -> Result<BTreeMap<String, String>, FitError> {
    let mut out = BTreeMap::new();
    for part in s.split([',', '\n']).map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| err(field, format!("{part:?}: expected key=value")))?;
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

fn tolerations(s: &str) -> Result<Vec<Toleration>, FitError> {
    let mut out = Vec::new();
    for part in s.split([',', '\n']).map(str::trim).filter(|p| !p.is_empty()) {
        let (kv, effect) = match part.rsplit_once(':') {
            Some((kv, e)) => (kv, Some(e.trim().to_string())),
            None => (part, None),
        };
        if let Some(e) = &effect {
            if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&e.as_str()) {
                return Err(err(
                    "tolerations",
                    format!("{part:?}: effect must be NoSchedule, PreferNoSchedule or NoExecute"),
                ));
            }
        }
        let t = match kv.split_once('=') {
            Some((k, v)) => Toleration {
                key: Some(k.trim().into()),
                operator: Some("Equal".into()),
                value: Some(v.trim().into()),
                effect,
                ..Toleration::default()
            },
            None => Toleration {
                key: Some(kv.trim().into()),
                operator: Some("Exists".into()),
                effect,
                ..Toleration::default()
            },
        };
        out.push(t);
    }
    Ok(out)
}

/// Builds the workload from the form's fields.
pub fn from_form(f: &FitInput) -> Result<Workload, FitError> {
    let mut requests = BTreeMap::new();
    let mut limits = BTreeMap::new();
    let gpu_res = if f.gpu_resource.trim().is_empty() { "nvidia.com/gpu" } else { f.gpu_resource.trim() };
    if let Some(q) = quantity_field("gpu_count", gpu_res, &f.gpu_count)? {
        let whole = crate::quantity::GpuCount::parse(&q.0).map_err(|e| err("gpu_count", e.to_string()))?;
        if whole.0 > 0 {
            requests.insert(gpu_res.to_string(), q.clone());
            limits.insert(gpu_res.to_string(), q);
        }
    }
    for (field, val, map_req) in [("cpu_request", &f.cpu_request, true), ("cpu_limit", &f.cpu_limit, false)] {
        if let Some(q) = quantity_field(field, "cpu", val)? {
            if map_req {
                requests.insert("cpu".into(), q)
            } else {
                limits.insert("cpu".into(), q)
            };
        }
    }
    if let Some(q) = quantity_field("memory_request", "memory", &f.memory_request)? {
        requests.insert("memory".into(), q);
    }
    if let Some(q) = quantity_field("memory_limit", "memory", &f.memory_limit)? {
        limits.insert("memory".into(), q);
    }
    let replicas = match f.replicas.trim() {
        "" => 1,
        r => r
            .parse::<u32>()
            .ok()
            .filter(|r| (1..=10_000).contains(r))
            .ok_or_else(|| err("replicas", "must be a whole number from 1 to 10000"))?,
    };
    let node_selector = pairs("node_selector", &f.node_selector)?;
    let spec = PodSpec {
        containers: vec![Container {
            name: "model".into(),
            resources: Some(ResourceRequirements {
                requests: Some(requests),
                limits: Some(limits).filter(|l| !l.is_empty()),
                ..ResourceRequirements::default()
            }),
            ..Container::default()
        }],
        node_selector: Some(node_selector).filter(|n| !n.is_empty()),
        tolerations: Some(tolerations(&f.tolerations)?).filter(|t| !t.is_empty()),
        runtime_class_name: Some(f.runtime_class.trim().to_string()).filter(|r| !r.is_empty()),
        ..PodSpec::default()
    };
    let namespace = Some(f.namespace.trim()).filter(|n| !n.is_empty()).unwrap_or("default").to_string();
    let metadata = ObjectMeta { namespace: Some(namespace), name: Some("what-if".into()), ..ObjectMeta::default() };
    Ok(Workload { pod: Pod { metadata, spec: Some(spec), ..Pod::default() }, replicas, ..Workload::empty() })
}

impl Workload {
    fn empty() -> Self {
        Self { pod: Pod::default(), replicas: 1, templates: Vec::new(), claims: Vec::new(), rollout: None }
    }
}
