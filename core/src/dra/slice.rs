//! ResourceSlices — the devices a driver publishes for a node, with their attributes and
//! capacities — and DeviceClasses, which select among them.

use std::collections::BTreeMap;

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
    pub attributes: BTreeMap<String, Attribute>,
    /// Capacities (`memory`, …).
    #[serde(default)]
    pub capacity: BTreeMap<String, Capacity>,
    /// Whether several claims may each take a share of it (consumable capacity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_multiple_allocations: Option<bool>,
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
}
