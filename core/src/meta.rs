//! Object metadata decoded lean: what gpudash reads, with managed fields and annotations (but
//! the few it reads) skipped while the JSON is parsed — never built and then dropped.
//!
//! Why: an object as the API server lists it carries its managed fields (each writer's
//! `fieldsV1` tree: a pod created by a client and run by a kubelet has two, often larger than
//! the rest of the pod). Decoded into `ObjectMeta` they were a tree of `serde_json::Value`s per
//! object, all alive until a list page was decoded whole and only then stripped: at 30,000 pods
//! that was the bulk of the initial list's allocations, and with pages of thousands of pods it
//! left the heap fragmented for good (docs/benchmarks.md, twentieth round).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::{Deserialize, Deserializer};

/// The annotations gpudash reads (HAMi's record of the cards it gave a pod); every other is
/// skipped while decoding.
pub const KEPT_ANNOTATIONS: &[&str] = &[crate::derive::hami::POD_ALLOCATED];

/// The annotations of [`KEPT_ANNOTATIONS`], the others' values skipped unread.
#[derive(Default)]
struct Kept(BTreeMap<String, String>);

impl<'de> Deserialize<'de> for Kept {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Kept;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of annotations")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Kept, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
                    if KEPT_ANNOTATIONS.contains(&k.as_ref()) {
                        out.insert(k.into_owned(), m.next_value::<String>()?);
                    } else {
                        m.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(Kept(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// `metadata` without its managed fields and annotations but [`KEPT_ANNOTATIONS`] (every other
/// field as the API server sent it); for `#[serde(deserialize_with)]` on a kind gpudash keeps.
pub fn lean<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    #[derive(Deserialize, Default)]
    #[serde(default, rename_all = "camelCase")]
    struct Lean {
        name: Option<String>,
        generate_name: Option<String>,
        namespace: Option<String>,
        uid: Option<String>,
        resource_version: Option<String>,
        generation: Option<i64>,
        creation_timestamp: Option<Time>,
        deletion_timestamp: Option<Time>,
        deletion_grace_period_seconds: Option<i64>,
        labels: Option<BTreeMap<String, String>>,
        owner_references: Option<Vec<OwnerReference>>,
        finalizers: Option<Vec<String>>,
        annotations: Option<Kept>,
    }
    let l = Option::<Lean>::deserialize(d)?.unwrap_or_default();
    let annotations = l.annotations.map(|k| k.0).filter(|a| !a.is_empty());
    Ok(ObjectMeta {
        name: l.name,
        generate_name: l.generate_name,
        namespace: l.namespace,
        uid: l.uid,
        resource_version: l.resource_version,
        generation: l.generation,
        creation_timestamp: l.creation_timestamp,
        deletion_timestamp: l.deletion_timestamp,
        deletion_grace_period_seconds: l.deletion_grace_period_seconds,
        labels: l.labels,
        owner_references: l.owner_references,
        finalizers: l.finalizers,
        annotations,
        ..ObjectMeta::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Obj {
        #[serde(default, deserialize_with = "lean")]
        metadata: ObjectMeta,
    }

    #[test]
    fn managed_fields_and_annotations_are_skipped_and_the_rest_kept() {
        // Metadata as kube-apiserver prints a pod created by a client and run by a kubelet.
        let json = r#"{"metadata": {"name": "yolo-0", "generateName": "yolo-", "namespace": "vision",
            "uid": "1f0c", "resourceVersion": "4711", "generation": 1,
            "creationTimestamp": "2026-12-06T05:00:00Z", "labels": {"app": "yolo"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "yolo-6c9f", "uid": "9a1b",
                                 "controller": true, "blockOwnerDeletion": true}],
            "finalizers": ["example.com/keep"],
            "managedFields": [{"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                               "time": "2026-12-06T05:00:00Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}}}}}}]}}"#;
        let m = serde_json::from_str::<Obj>(json).unwrap_or_else(|e| panic!("{e}")).metadata;
        assert!(m.managed_fields.is_none() && m.annotations.is_none());
        assert_eq!(
            (m.name.as_deref(), m.namespace.as_deref(), m.uid.as_deref()),
            (Some("yolo-0"), Some("vision"), Some("1f0c"))
        );
        assert_eq!(
            (m.resource_version.as_deref(), m.generation, m.generate_name.as_deref()),
            (Some("4711"), Some(1), Some("yolo-"))
        );
        assert_eq!(m.labels.as_ref().and_then(|l| l.get("app")).map(String::as_str), Some("yolo"));
        assert_eq!(m.owner_references.as_ref().map(|o| o[0].name.as_str()), Some("yolo-6c9f"));
        assert_eq!(m.finalizers, Some(vec!["example.com/keep".to_string()]));
        assert!(m.creation_timestamp.is_some());
        // Absent or null metadata: empty, not an error.
        assert_eq!(serde_json::from_str::<Obj>(r#"{}"#).map(|o| o.metadata).ok(), Some(ObjectMeta::default()));
        assert_eq!(
            serde_json::from_str::<Obj>(r#"{"metadata": null}"#).map(|o| o.metadata).ok(),
            Some(ObjectMeta::default())
        );
        // A malformed field is an error, as before.
        assert!(serde_json::from_str::<Obj>(r#"{"metadata": {"name": 7}}"#).is_err());
    }
}
