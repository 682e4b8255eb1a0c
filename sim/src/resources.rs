//! The table of API resources the simulator serves, and the discovery documents built from it.

use serde_json::{json, Value};

/// One served resource: where it lives in the API and how kubectl names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    /// API group; empty for the core group.
    pub group: &'static str,
    /// API version within the group.
    pub version: &'static str,
    /// The plural path segment (`pods`).
    pub plural: &'static str,
    /// The singular name (`pod`).
    pub singular: &'static str,
    /// The object kind (`Pod`).
    pub kind: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Short names kubectl accepts.
    pub short_names: &'static [&'static str],
    /// Whether the real API supports watching it (metrics.k8s.io does not).
    pub watchable: bool,
}

impl Resource {
    /// `apiVersion` as objects carry it (`v1`, `apps/v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether a server of Kubernetes 1.`minor` serves it: `resource.k8s.io/v1` (Dynamic
    /// Resource Allocation) went GA in 1.34; older servers answer 404 for the whole group.
    pub fn served_by(&self, minor: u32) -> bool {
        self.group != "resource.k8s.io" || minor >= 34
    }

    /// The kind of the list type (`PodList`).
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
}

/// A resource the simulator serves: an index into [`RESOURCES`], named so that it is not
/// mistaken for any other number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ResourceId(pub usize);

impl ResourceId {
    /// Its definition.
    pub fn def(self) -> &'static Resource {
        &RESOURCES[self.0]
    }
}

/// Every resource the simulator serves.
pub const RESOURCES: &[Resource] = &[
    Resource {
        group: "",
        version: "v1",
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        namespaced: false,
        short_names: &["ns"],
        watchable: true,
    },
    Resource {
        group: "",
        version: "v1",
        plural: "nodes",
        singular: "node",
        kind: "Node",
        namespaced: false,
        short_names: &["no"],
        watchable: true,
    },
    Resource {
        group: "",
        version: "v1",
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        namespaced: true,
        short_names: &["po"],
        watchable: true,
    },
    Resource {
        group: "",
        version: "v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        namespaced: true,
        short_names: &["ev"],
        watchable: true,
    },
    Resource {
        group: "",
        version: "v1",
        plural: "resourcequotas",
        singular: "resourcequota",
        kind: "ResourceQuota",
        namespaced: true,
        short_names: &["quota"],
        watchable: true,
    },
    Resource {
        group: "apps",
        version: "v1",
        plural: "replicasets",
        singular: "replicaset",
        kind: "ReplicaSet",
        namespaced: true,
        short_names: &["rs"],
        watchable: true,
    },
    Resource {
        group: "apps",
        version: "v1",
        plural: "deployments",
        singular: "deployment",
        kind: "Deployment",
        namespaced: true,
        short_names: &["deploy"],
        watchable: true,
    },
    Resource {
        group: "apps",
        version: "v1",
        plural: "daemonsets",
        singular: "daemonset",
        kind: "DaemonSet",
        namespaced: true,
        short_names: &["ds"],
        watchable: true,
    },
    Resource {
        group: "scheduling.k8s.io",
        version: "v1",
        plural: "priorityclasses",
        singular: "priorityclass",
        kind: "PriorityClass",
        namespaced: false,
        short_names: &["pc"],
        watchable: true,
    },
    Resource {
        group: "node.k8s.io",
        version: "v1",
        plural: "runtimeclasses",
        singular: "runtimeclass",
        kind: "RuntimeClass",
        namespaced: false,
        short_names: &[],
        watchable: true,
    },
    Resource {
        group: "resource.k8s.io",
        version: "v1",
        plural: "resourceslices",
        singular: "resourceslice",
        kind: "ResourceSlice",
        namespaced: false,
        short_names: &[],
        watchable: true,
    },
    Resource {
        group: "resource.k8s.io",
        version: "v1",
        plural: "resourceclaims",
        singular: "resourceclaim",
        kind: "ResourceClaim",
        namespaced: true,
        short_names: &[],
        watchable: true,
    },
    Resource {
        group: "resource.k8s.io",
        version: "v1",
        plural: "resourceclaimtemplates",
        singular: "resourceclaimtemplate",
        kind: "ResourceClaimTemplate",
        namespaced: true,
        short_names: &[],
        watchable: true,
    },
    Resource {
        group: "resource.k8s.io",
        version: "v1",
        plural: "deviceclasses",
        singular: "deviceclass",
        kind: "DeviceClass",
        namespaced: false,
        short_names: &[],
        watchable: true,
    },
    Resource {
        group: "metrics.k8s.io",
        version: "v1beta1",
        plural: "nodes",
        singular: "",
        kind: "NodeMetrics",
        namespaced: false,
        short_names: &[],
        watchable: false,
    },
    Resource {
        group: "metrics.k8s.io",
        version: "v1beta1",
        plural: "pods",
        singular: "",
        kind: "PodMetrics",
        namespaced: true,
        short_names: &[],
        watchable: false,
    },
];

/// Finds a resource by group, version and plural path segment.
pub fn by_path(group: &str, version: &str, plural: &str, minor: u32) -> Option<ResourceId> {
    RESOURCES
        .iter()
        .position(|r| r.group == group && r.version == version && r.plural == plural && r.served_by(minor))
        .map(ResourceId)
}

/// Finds a resource by `apiVersion` and `kind`, as objects in a scenario name themselves.
/// A missing group in `apiVersion` (`metrics.k8s.io` objects are sometimes written bare) is not
/// accepted: the simulator follows what the API prints.
pub fn by_kind(api_version: &str, kind: &str) -> Option<ResourceId> {
    RESOURCES.iter().position(|r| r.kind == kind && r.api_version() == api_version).map(ResourceId)
}

/// Finds a resource by kind alone (for timeline deletions, which name only the kind).
pub fn by_kind_name(kind: &str) -> Option<ResourceId> {
    RESOURCES.iter().position(|r| r.kind == kind).map(ResourceId)
}

fn verbs(r: &Resource) -> Vec<&'static str> {
    if r.watchable {
        vec!["get", "list", "watch"]
    } else {
        vec!["get", "list"]
    }
}

/// `GET /api`: the core group's versions.
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn groups(minor: u32) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for r in RESOURCES.iter().filter(|r| !r.group.is_empty() && r.served_by(minor)) {
        if !out.contains(&(r.group, r.version)) {
            out.push((r.group, r.version));
        }
    }
    out
}

/// One `APIGroup` document.
pub fn api_group(group: &str, minor: u32) -> Option<Value> {
    let versions: Vec<Value> = groups(minor)
        .into_iter()
        .filter(|(g, _)| *g == group)
        .map(|(g, v)| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first()?.clone();
    Some(json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": preferred,
    }))
}

/// `GET /apis`: every non-core group.
pub fn api_group_list(minor: u32) -> Value {
    let mut names: Vec<&str> = groups(minor).into_iter().map(|(g, _)| g).collect();
    names.dedup();
    let groups: Vec<Value> = names
        .into_iter()
        .filter_map(|g| {
            let mut v = api_group(g, minor)?;
            if let Some(o) = v.as_object_mut() {
                o.remove("kind");
                o.remove("apiVersion");
            }
            Some(v)
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /api/v1` or `GET /apis/<group>/<version>`: the resource list of one group version.
pub fn api_resource_list(group: &str, version: &str, minor: u32) -> Option<Value> {
    let resources: Vec<Value> = RESOURCES
        .iter()
        .filter(|r| r.group == group && r.version == version && r.served_by(minor))
        .map(|r| {
            let mut v = json!({
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": verbs(r),
            });
            if !r.short_names.is_empty() {
                v["shortNames"] = json!(r.short_names);
            }
            v
        })
        .collect();
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
}

/// The Kubernetes minor version the simulator speaks unless told otherwise (1.34: DRA GA).
pub const DEFAULT_MINOR: u32 = 34;

/// `GET /version`: what a K3s server of the 1.`minor` line answers.
pub fn version(minor: u32) -> Value {
    json!({
        "major": "1",
        "minor": minor.to_string(),
        "gitVersion": format!("v1.{minor}.2+k3s1"),
        "gitCommit": "6ab750f9b5a3d6d5c4f6e6a1e3c4b4a7d1b1e4c9",
        "gitTreeState": "clean",
        "buildDate": "2025-02-20T18:00:00Z",
        "goVersion": "go1.22.12",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_version_has_a_resource_list() {
        for (g, v) in groups(DEFAULT_MINOR) {
            assert!(api_resource_list(g, v, DEFAULT_MINOR).is_some(), "{g}/{v}");
        }
        assert!(api_resource_list("", "v1", DEFAULT_MINOR).is_some());
        assert!(api_resource_list("batch", "v1", DEFAULT_MINOR).is_none());
    }

    #[test]
    fn an_older_server_has_no_dra_group() {
        assert!(api_resource_list("resource.k8s.io", "v1", 34).is_some());
        assert!(api_resource_list("resource.k8s.io", "v1", 31).is_none());
        assert!(api_group("resource.k8s.io", 31).is_none());
        assert!(by_path("resource.k8s.io", "v1", "resourceclaims", 31).is_none());
        assert_eq!(by_path("resource.k8s.io", "v1", "resourceclaims", 34).map(|r| r.def().kind), Some("ResourceClaim"));
        assert!(!api_group_list(31).to_string().contains("resource.k8s.io"));
    }

    #[test]
    fn kinds_resolve_from_api_version_and_kind() {
        assert_eq!(by_kind("v1", "Pod").map(|i| i.def().plural), Some("pods"));
        assert_eq!(by_kind("metrics.k8s.io/v1beta1", "NodeMetrics").map(|i| i.def().plural), Some("nodes"));
        assert_eq!(by_kind("v1", "Deployment"), None);
    }
}
