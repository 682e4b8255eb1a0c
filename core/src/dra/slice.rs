//! ResourceSlices — the devices a driver publishes for a node, with their attributes and
//! capacities — and DeviceClasses, which select among them.

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::claim::Selector;

/// A ResourceSlice: some or all devices of one driver's pool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSlice {
    /// Metadata (managed fields and annotations skipped while decoding).
    #[serde(default, deserialize_with = "crate::meta::lean")]
    pub metadata: ObjectMeta,
    /// What it publishes.
    #[serde(default)]
    pub spec: SliceSpec,
}
dra_resource!(ResourceSlice, "ResourceSlice", "resourceslices", k8s_openapi::ClusterResourceScope);

/// `ResourceSlice.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SliceSpec {
    /// The driver (`gpu.nvidia.com`).
    #[serde(default)]
    pub driver: String,
    /// The node whose devices these are (unset for network-attached pools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// The pool.
    #[serde(default)]
    pub pool: Pool,
    /// Its devices.
    #[serde(default)]
    pub devices: Vec<Device>,
}

/// A pool of devices; only the slices of a pool's highest generation count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pool {
    /// Pool name (the node's name for node-local devices).
    #[serde(default)]
    pub name: String,
    /// Generation; slices of older generations are being replaced.
    #[serde(default)]
    pub generation: i64,
    /// How many slices make up the pool.
    #[serde(default)]
    pub resource_slice_count: i64,
}

/// One device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// Its name in the pool (`gpu-0`).
    #[serde(default)]
    pub name: String,
    /// Attributes (`productName`, `uuid`, `type`, `profile`, `parentUUID`, …), with or without
    /// the driver's domain as prefix.
    #[serde(default)]
    pub attributes: Few<Attribute>,
    /// Capacities (`memory`, …).
    #[serde(default)]
    pub capacity: Few<Capacity>,
    /// Whether several claims may each take a share of it (consumable capacity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_multiple_allocations: Option<bool>,
}

/// A map of a few entries (a device's attributes, its capacities), kept as one slice sorted by
/// key: a `BTreeMap` takes a node of eleven entries however few it holds, and at 8,000 devices
/// with a dozen attributes each the maps were the largest part of gpudash's memory for DRA.
/// Read and written as a JSON object; of keys given twice the last is kept, as a map would.
#[derive(Debug, Clone, PartialEq)]
pub struct Few<V>(Box<[(String, V)]>);

impl<V> Default for Few<V> {
    fn default() -> Self {
        Self(Box::default())
    }
}

impl<V> Few<V> {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().map(|i| &self.0[i].1)
    }

    /// The entries, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V> FromIterator<(String, V)> for Few<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(entries: I) -> Self {
        let mut v: Vec<(String, V)> = entries.into_iter().collect();
        // Stable: of equal keys the last given stays last, and is the one kept.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(String, V)> = Vec::with_capacity(v.len());
        for e in v {
            match kept.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => kept.push(e),
            }
        }
        Self(kept.into_boxed_slice())
    }
}

impl<V: Serialize> Serialize for Few<V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Few<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Entries<V> {
            type Value = Few<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Few<V>, A::Error> {
                let mut v: Vec<(String, V)> = Vec::with_capacity(m.size_hint().unwrap_or(0).min(64));
                while let Some(e) = m.next_entry()? {
                    v.push(e);
                }
                Ok(v.into_iter().collect())
            }
        }
        d.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A typed attribute value: exactly one of the fields is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    /// String value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,
    /// Integer value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int: Option<i64>,
    /// Boolean value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bool: Option<bool>,
    /// Semantic version value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl Attribute {
    /// The value as text (as a CEL comparison with a string literal would see it).
    pub fn text(&self) -> Option<String> {
        self.string
            .clone()
            .or_else(|| self.version.clone())
            .or_else(|| self.int.map(|i| i.to_string()))
            .or_else(|| self.bool.map(|b| b.to_string()))
    }
}

/// A capacity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The amount.
    #[serde(default)]
    pub value: Quantity,
}

impl Device {
    /// An attribute by its name, with or without the driver's domain.
    pub fn attribute(&self, driver: &str, name: &str) -> Option<&Attribute> {
        self.attributes.get(name).or_else(|| self.attributes.get(&format!("{driver}/{name}")))
    }

    /// `capacity.memory` in bytes, when published and readable.
    pub fn memory_bytes(&self) -> Option<u64> {
        self.capacity.get("memory").and_then(|c| crate::quantity::Bytes::parse(&c.value.0).ok()).map(|b| b.0)
    }

    /// A string attribute's text.
    pub fn text(&self, driver: &str, name: &str) -> Option<String> {
        self.attribute(driver, name).and_then(Attribute::text).filter(|s| !s.is_empty())
    }
}

/// A DeviceClass: which devices a request for it may get.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceClass {
    /// Metadata (managed fields and annotations skipped while decoding).
    #[serde(default, deserialize_with = "crate::meta::lean")]
    pub metadata: ObjectMeta,
    /// Selectors and the extended resource it stands for.
    #[serde(default)]
    pub spec: ClassSpec,
}
dra_resource!(DeviceClass, "DeviceClass", "deviceclasses", k8s_openapi::ClusterResourceScope);

/// `DeviceClass.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassSpec {
    /// CEL selectors every device must pass.
    #[serde(default)]
    pub selectors: Vec<Selector>,
    /// Pods that request this extended resource (`nvidia.com/gpu`) get a device of this class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_resource_name: Option<String>,
}

impl DeviceClass {
    /// The class's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_found_with_or_without_the_driver_domain() {
        let d: Device = serde_json::from_str(
            r#"{"name": "gpu-0", "attributes": {"productName": {"string": "NVIDIA L4"}, "gpu.nvidia.com/index": {"int": 0}}}"#,
        )
        .unwrap_or_default();
        assert_eq!(d.text("gpu.nvidia.com", "productName").as_deref(), Some("NVIDIA L4"));
        assert_eq!(d.text("gpu.nvidia.com", "index").as_deref(), Some("0"));
        assert_eq!(d.text("gpu.nvidia.com", "uuid"), None);
    }

    #[test]
    fn a_few_entries_read_and_write_as_the_object_they_came_as() {
        // A device as the NVIDIA DRA driver publishes it (k8s-dra-driver-gpu, a whole GPU).
        let text = r#"{"name": "gpu-0",
            "attributes": {"type": {"string": "gpu"}, "uuid": {"string": "GPU-4a2f"}, "index": {"int": 0},
                "productName": {"string": "NVIDIA A100-SXM4-40GB"}, "driverVersion": {"version": "550.54.15"},
                "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"}},
            "capacity": {"memory": {"value": "40Gi"}}}"#;
        let d: Device = serde_json::from_str(text).expect("a device");
        let keys: Vec<&str> = d.attributes.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["driverVersion", "index", "productName", "resource.kubernetes.io/pcieRoot", "type", "uuid"]);
        assert_eq!(d.attributes.get("index").and_then(|a| a.int), Some(0));
        assert_eq!(d.attributes.get("pcieRoot"), None);
        assert_eq!(d.memory_bytes(), Some(40 << 30));
        let back: serde_json::Value = serde_json::to_value(&d).expect("written");
        let given: serde_json::Value = serde_json::from_str(text).expect("json");
        assert_eq!(back["attributes"], given["attributes"]);
        assert_eq!(back["capacity"], given["capacity"]);
        // Of a key given twice the last is kept, as a map keeps it; anything but an object is refused.
        let twice: Few<i64> = serde_json::from_str(r#"{"b": 1, "a": 2, "b": 3}"#).expect("an object");
        assert_eq!((twice.len(), twice.get("b"), twice.get("a")), (2, Some(&3), Some(&2)));
        assert!(serde_json::from_str::<Few<i64>>("[1]").is_err());
        assert!(Few::<i64>::default().is_empty());
    }
}
