//! Label and field selectors, parsed once per request and matched against stored JSON objects.

use serde_json::Value;
use thiserror::Error;

/// Why a selector was refused (answered with 400 BadRequest, as the API server does).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SelectorError {
    /// The label selector does not follow the grammar.
    #[error("unable to parse requirement: {0}")]
    BadLabel(String),
    /// The field selector does not follow `key=value` / `key!=value`.
    #[error("invalid field selector: {0}")]
    BadField(String),
    /// The field is not one the API server indexes for this kind.
    #[error("field label not supported: {0}")]
    UnsupportedField(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed `labelSelector`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelReq>);

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn valid_value(v: &str) -> bool {
    v.len() <= 63 && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

impl LabelSelector {
    /// Parses the label selector grammar: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`,
    /// `k`, `!k`, joined by commas.
    /// Whether it selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(Self(reqs));
        }
        for part in split_top(s) {
            let p = part.trim();
            let bad = || SelectorError::BadLabel(p.to_string());
            if let Some(k) = p.strip_prefix('!') {
                let k = k.trim();
                if !valid_key(k) {
                    return Err(bad());
                }
                reqs.push(LabelReq::NotExists(k.to_string()));
            } else if let Some((k, v)) = p.split_once("!=") {
                let (k, v) = (k.trim(), v.trim());
                if !valid_key(k) || !valid_value(v) {
                    return Err(bad());
                }
                reqs.push(LabelReq::NotEq(k.into(), v.into()));
            } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
                let (k, v) = (k.trim(), v.trim());
                if !valid_key(k) || !valid_value(v) {
                    return Err(bad());
                }
                reqs.push(LabelReq::Eq(k.into(), v.into()));
            } else if let Some(open) = p.find('(') {
                let head = p[..open].trim();
                let close = p.rfind(')').filter(|c| *c > open && p[*c + 1..].trim().is_empty());
                let Some(close) = close else {
                    // The API server's lexer reaches the end still inside the set.
                    return Err(if p.contains(')') {
                        bad()
                    } else {
                        SelectorError::BadLabel("found '', expected: ',' or ')'".into())
                    });
                };
                let values: Vec<String> = p[open + 1..close].split(',').map(|v| v.trim().to_string()).collect();
                if values.iter().any(|v| !valid_value(v)) {
                    return Err(bad());
                }
                let (k, op) = head.rsplit_once(char::is_whitespace).ok_or_else(bad)?;
                let k = k.trim();
                if !valid_key(k) {
                    return Err(bad());
                }
                match op {
                    "in" => reqs.push(LabelReq::In(k.into(), values)),
                    "notin" => reqs.push(LabelReq::NotIn(k.into(), values)),
                    _ => return Err(bad()),
                }
            } else if valid_key(p) {
                reqs.push(LabelReq::Exists(p.to_string()));
            } else {
                return Err(bad());
            }
        }
        Ok(Self(reqs))
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
        })
    }
}

/// A parsed `fieldSelector`: equality and inequality on the fields the API server indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// The field selectors the real API server supports for a kind, beyond `metadata.name` and
/// `metadata.namespace`, which every kind supports.
fn supported_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod" => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
        "Event" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        "Node" => &["spec.unschedulable"],
        "ReplicaSet" => &["status.replicas"],
        "ResourceSlice" => &["spec.nodeName", "spec.driver"],
        _ => &[],
    }
}

impl FieldSelector {
    /// Parses `a=b,c!=d` for the given kind; unknown fields are refused as the API server does.
    /// Whether it selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn parse(s: &str, kind: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(Self(reqs));
        }
        for part in s.split(',') {
            let p = part.trim();
            let (k, eq, v) = if let Some((k, v)) = p.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = p.split_once("==").or_else(|| p.split_once('=')) {
                (k, true, v)
            } else {
                return Err(SelectorError::BadField(p.to_string()));
            };
            let k = k.trim();
            if k != "metadata.name" && k != "metadata.namespace" && !supported_fields(kind).contains(&k) {
                return Err(SelectorError::UnsupportedField(k.to_string()));
            }
            reqs.push((k.to_string(), eq, v.trim().to_string()));
        }
        Ok(Self(reqs))
    }

    /// Whether the object matches; a missing field reads as the empty string.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(k, eq, v)| {
            let mut cur = Some(obj);
            for seg in k.split('.') {
                cur = cur.and_then(|c| c.get(seg));
            }
            let actual = match cur {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => String::new(),
            };
            (actual == *v) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({"metadata": {"name": "a", "namespace": "ml", "labels": {"app": "yolo", "tier": "edge"}},
               "spec": {"nodeName": "orin-nano-01"}, "status": {"phase": "Running"}})
    }

    #[test]
    fn label_selectors_follow_the_kubernetes_grammar() {
        let p = pod();
        for (sel, want) in [
            ("app=yolo", true),
            ("app==yolo", true),
            ("app!=yolo", false),
            ("app in (yolo, llm)", true),
            ("app notin (yolo)", false),
            ("tier", true),
            ("!tier", false),
            ("missing!=x", true),
            ("app=yolo,tier in (edge)", true),
            ("", true),
        ] {
            assert_eq!(LabelSelector::parse(sel).map(|s| s.matches(&p)), Ok(want), "{sel}");
        }
    }

    #[test]
    fn malformed_label_selectors_are_refused() {
        for sel in ["app in (yolo", "app=yo lo", "app foo (x)", "=x", "app in yolo)"] {
            assert!(LabelSelector::parse(sel).is_err(), "{sel}");
        }
    }

    #[test]
    fn an_unclosed_set_is_refused_in_the_api_servers_words() {
        let e = LabelSelector::parse("app in (nothing").map(|_| ()).expect_err("an unclosed set").to_string();
        assert_eq!(e, "unable to parse requirement: found '', expected: ',' or ')'");
    }

    #[test]
    fn field_selectors_match_indexed_fields_and_refuse_others() {
        let p = pod();
        let sel = |s| FieldSelector::parse(s, "Pod").map(|f| f.matches(&p));
        assert_eq!(sel("spec.nodeName=orin-nano-01"), Ok(true));
        assert_eq!(sel("status.phase!=Running"), Ok(false));
        assert_eq!(sel("metadata.name=a,metadata.namespace=ml"), Ok(true));
        assert_eq!(sel("spec.nodeName="), Ok(false));
        assert!(matches!(sel("spec.containers=x"), Err(SelectorError::UnsupportedField(_))));
        assert!(matches!(sel("nonsense"), Err(SelectorError::BadField(_))));
    }
}
