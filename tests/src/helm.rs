//! The Helm chart rendered without Helm: no registry ships Helm to the build machines, so the
//! chart is rendered by a deliberately small renderer that knows only the template actions the
//! chart uses and fails on any other — a chart change that needs more must extend it knowingly.
//! Used by the deployment checks and by the real API server's dry run.

use serde_yaml::Value;

/// The YAML documents of a text (empty ones dropped).
pub fn docs(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    serde_yaml::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).unwrap_or_else(|e| panic!("YAML: {e}\n{text}")))
        .filter(|v| !v.is_null())
        .collect()
}

fn lookup<'a>(values: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .fold(values, |v, k| v.get(k).unwrap_or_else(|| panic!("chart uses .Values.{path}, missing from values.yaml")))
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => panic!("not a scalar: {other:?}"),
    }
}

/// Renders the template actions the chart uses.
pub fn render(template: &str, values: &Value, release: &str, namespace: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    let mut skipping: Vec<bool> = Vec::new();
    while let Some(start) = rest.find("{{") {
        let (before, after) = rest.split_at(start);
        // {{`raw`}}: the text between the backquotes as it is (Prometheus' own templates).
        if let Some(raw) = after.strip_prefix("{{`") {
            let end = raw.find("`}}").unwrap_or_else(|| panic!("unclosed raw string"));
            if !skipping.contains(&true) {
                out.push_str(before);
                out.push_str(&raw[..end]);
            }
            rest = &raw[end + 3..];
            continue;
        }
        let end = after.find("}}").unwrap_or_else(|| panic!("unclosed action"));
        let action = after[2..end].trim().trim_start_matches('-').trim().trim_end_matches('-').trim();
        let trim_left = after[2..].starts_with('-');
        if !skipping.contains(&true) {
            out.push_str(if trim_left { before.trim_end_matches(['\n', ' ']) } else { before });
        }
        rest = &after[end + 2..];
        if let Some(cond) = action.strip_prefix("if ") {
            // Inside a skipped block a condition is not looked up (its values may be absent).
            // `if .Values.x`, or `if or .Values.x .Values.y` (any of them).
            let truth = |c: &str| matches!(lookup(values, c.trim_start_matches(".Values.")), Value::Bool(true));
            let skip = skipping.contains(&true)
                || !match cond.trim().strip_prefix("or ") {
                    Some(any) => any.split_whitespace().any(truth),
                    None => truth(cond.trim()),
                };
            skipping.push(skip);
        } else if action == "end" {
            skipping.pop().unwrap_or_else(|| panic!("end without if"));
        } else if let Some(list) = action.strip_prefix("range ") {
            // `{{ range .Values.x }}, {{ . | quote }}{{ end }}`
            let body_end = rest.find("{{ end }}").unwrap_or_else(|| panic!("range without end"));
            let body = &rest[..body_end];
            assert_eq!(body, ", {{ . | quote }}", "unsupported range body");
            if !skipping.contains(&true) {
                for item in
                    lookup(values, list.trim().trim_start_matches(".Values.")).as_sequence().into_iter().flatten()
                {
                    out.push_str(&format!(", {:?}", scalar(item)));
                }
            }
            rest = &rest[body_end + "{{ end }}".len()..];
        } else if !skipping.contains(&true) {
            let (expr, quote) = match action.split_once('|') {
                Some((e, f)) if f.trim() == "quote" => (e.trim(), true),
                Some((_, f)) => panic!("unsupported template function {f:?}"),
                None => (action, false),
            };
            let v = match expr {
                ".Release.Name" => release.to_string(),
                ".Release.Namespace" => namespace.to_string(),
                e if e.starts_with(".Values.") => scalar(lookup(values, &e[".Values.".len()..])),
                e => panic!("unsupported template action {e:?}"),
            };
            out.push_str(&if quote { format!("{v:?}") } else { v });
        }
    }
    out.push_str(rest);
    out
}

/// `o` over `v`, mapping by mapping (as Helm merges `--values` over the chart's values).
fn merge(v: &mut Value, o: Value) {
    match (v, o) {
        (Value::Mapping(v), Value::Mapping(o)) => {
            for (k, x) in o {
                match v.get_mut(&k) {
                    Some(cur) if cur.is_mapping() && x.is_mapping() => merge(cur, x),
                    _ => {
                        v.insert(k, x);
                    }
                }
            }
        }
        (v, o) if !o.is_null() => *v = o,
        _ => {}
    }
}

/// The chart's objects with `overrides` (YAML) over `values.yaml`, for a release and namespace.
pub fn chart(overrides: &str, release: &str, namespace: &str) -> Vec<Value> {
    chart_named("gpudash", overrides, release, namespace)
}

/// As [`chart`], for the chart `deploy/helm/{name}`.
pub fn chart_named(name: &str, overrides: &str, release: &str, namespace: &str) -> Vec<Value> {
    let dir = crate::root().join("deploy/helm").join(name);
    let mut values: Value = serde_yaml::from_str(&std::fs::read_to_string(dir.join("values.yaml")).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let o: Value = serde_yaml::from_str(overrides).unwrap_or(Value::Null);
    merge(&mut values, o);
    let mut all = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir.join("templates"))
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let t = std::fs::read_to_string(&p).unwrap_or_default();
        all.extend(docs(&render(&t, &values, release, namespace)));
    }
    all
}
