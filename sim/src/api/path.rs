//! What a Kubernetes path names: discovery, a collection (all or one namespace), an object.

use serde_json::Value;

use crate::resources::{self, ResourceId};

/// What a Kubernetes path names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Discovery(Value),
    Collection { resource: ResourceId, ns: Option<String> },
    Object { resource: ResourceId, ns: String, name: String },
    NotFound(String),
}

pub(crate) fn parse_path(path: &str, server_address: &str, minor: u32) -> Target {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Target::Discovery(resources::version(minor)),
        ["api"] => return Target::Discovery(resources::api_versions(server_address)),
        ["apis"] => return Target::Discovery(resources::api_group_list(minor)),
        ["apis", g] => {
            return resources::api_group(g, minor)
                .map(Target::Discovery)
                .unwrap_or_else(|| Target::NotFound(format!("the server could not find the requested resource ({g})")))
        }
        ["api", v] => {
            return resources::api_resource_list("", v, minor)
                .map(Target::Discovery)
                .unwrap_or_else(|| Target::NotFound("the server could not find the requested resource".into()))
        }
        ["apis", g, v] => {
            return resources::api_resource_list(g, v, minor)
                .map(Target::Discovery)
                .unwrap_or_else(|| Target::NotFound("the server could not find the requested resource".into()))
        }
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Target::NotFound("the server could not find the requested resource".into()),
    };
    let find = |plural: &str| resources::by_path(group, version, plural, minor);
    let nf = || Target::NotFound("the server could not find the requested resource".into());
    match rest {
        ["namespaces", ns, plural] if *plural != "status" && *plural != "finalize" => match find(plural) {
            Some(r) if r.def().namespaced => Target::Collection { resource: r, ns: Some(ns.to_string()) },
            _ => nf(),
        },
        ["namespaces", ns, plural, name] => match find(plural) {
            Some(r) if r.def().namespaced => Target::Object { resource: r, ns: ns.to_string(), name: name.to_string() },
            _ => nf(),
        },
        [plural] => match find(plural) {
            Some(r) => Target::Collection { resource: r, ns: None },
            None => nf(),
        },
        [plural, name] => match find(plural) {
            Some(r) if !r.def().namespaced => Target::Object { resource: r, ns: String::new(), name: name.to_string() },
            _ => nf(),
        },
        _ => nf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_to_collections_objects_and_discovery() {
        let pods = resources::by_path("", "v1", "pods", 34);
        assert!(
            matches!(parse_path("/api/v1/pods", "h", 34), Target::Collection { resource, ns: None } if Some(resource) == pods)
        );
        assert!(
            matches!(parse_path("/api/v1/namespaces/ml/pods", "h", 34), Target::Collection { ns: Some(ref n), .. } if n == "ml")
        );
        assert!(
            matches!(parse_path("/api/v1/namespaces/ml/pods/a", "h", 34), Target::Object { ref name, .. } if name == "a")
        );
        assert!(
            matches!(parse_path("/api/v1/namespaces/ml", "h", 34), Target::Object { ref name, .. } if name == "ml")
        );
        assert!(matches!(parse_path("/api/v1/nodes/n1", "h", 34), Target::Object { ref name, .. } if name == "n1"));
        assert!(matches!(parse_path("/apis/metrics.k8s.io/v1beta1/nodes", "h", 34), Target::Collection { .. }));
        assert!(matches!(parse_path("/apis", "h", 34), Target::Discovery(_)));
        assert!(matches!(parse_path("/api/v1/namespaces/ml/nodes", "h", 34), Target::NotFound(_)));
        assert!(matches!(parse_path("/api/v1/secrets", "h", 34), Target::NotFound(_)));
        assert!(matches!(parse_path("/apis/batch/v1", "h", 34), Target::NotFound(_)));
    }
}
