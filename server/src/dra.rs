//! Dynamic Resource Allocation (`resource.k8s.io/v1`, GA in Kubernetes 1.34) as gpudash keeps
//! it: ResourceSlices (the devices each driver publishes per node), ResourceClaims (which
//! device each claim got and which pods use it), ResourceClaimTemplates and DeviceClasses —
//! only the fields the derivation and the what-if check read, decoded straight from the API
//! server's JSON (like [`crate::pod`]). Field names follow the API.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Serialize};

/// The API group and version.
pub const GROUP: &str = "resource.k8s.io";
/// The version served since 1.34.
pub const VERSION: &str = "v1";

macro_rules! dra_resource {
    ($ty:ident, $kind:literal, $plural:literal, $scope:ty) => {
        impl Resource for $ty {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind)
            }
            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed(GROUP)
            }
            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed(VERSION)
            }
            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($plural)
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }

        impl $ty {
            /// Drops what is never read (managed fields, annotations, labels).
            pub fn strip(&mut self) {
                self.metadata.managed_fields = None;
                self.metadata.annotations = None;
                self.metadata.labels = None;
            }
        }
    };
}

/// A ResourceSlice: some or all devices of one driver's pool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceSlice {
    /// Metadata.
    #[serde(default)]
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

    /// A string attribute's text.
    pub fn text(&self, driver: &str, name: &str) -> Option<String> {
        self.attribute(driver, name).and_then(Attribute::text).filter(|s| !s.is_empty())
    }
}

/// A ResourceClaim: a request for devices, and what it was allocated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceClaim {
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What it asks for.
    #[serde(default)]
    pub spec: ClaimSpec,
    /// Allocation and users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClaimStatus>,
}
dra_resource!(ResourceClaim, "ResourceClaim", "resourceclaims", k8s_openapi::NamespaceResourceScope);

/// `ResourceClaim.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimSpec {
    /// Device requests.
    #[serde(default)]
    pub devices: DeviceClaim,
}

/// `spec.devices`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceClaim {
    /// The requests.
    #[serde(default)]
    pub requests: Vec<DeviceRequest>,
}

/// One request: exactly one kind of device, or the first available of several.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceRequest {
    /// Request name.
    #[serde(default)]
    pub name: String,
    /// Exactly this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exactly: Option<ExactRequest>,
    /// The first of these that can be allocated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_available: Option<Vec<ExactRequest>>,
}

/// `exactly` (and each `firstAvailable` entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExactRequest {
    /// Subrequest name (`firstAvailable` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The DeviceClass.
    #[serde(default)]
    pub device_class_name: String,
    /// CEL selectors.
    #[serde(default)]
    pub selectors: Vec<Selector>,
    /// `ExactCount` (default) or `All`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation_mode: Option<String>,
    /// Devices for `ExactCount` (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
}

impl DeviceRequest {
    /// The alternatives of this request, in order (one for `exactly`).
    pub fn alternatives(&self) -> Vec<&ExactRequest> {
        match (&self.exactly, &self.first_available) {
            (Some(e), _) => vec![e],
            (None, Some(f)) => f.iter().collect(),
            (None, None) => Vec::new(),
        }
    }
}

/// A device selector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Selector {
    /// A CEL expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cel: Option<CelSelector>,
}

/// `cel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CelSelector {
    /// The expression.
    #[serde(default)]
    pub expression: String,
}

/// `ResourceClaim.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatus {
    /// Set once allocated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation: Option<Allocation>,
    /// The pods (or other consumers) using it.
    #[serde(default)]
    pub reserved_for: Vec<Consumer>,
}

/// `status.allocation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Allocation {
    /// The allocated devices.
    #[serde(default)]
    pub devices: AllocatedDevices,
}

/// `status.allocation.devices`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocatedDevices {
    /// One per allocated device.
    #[serde(default)]
    pub results: Vec<AllocationResult>,
}

/// One allocated device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationResult {
    /// The request (or `request/subrequest`).
    #[serde(default)]
    pub request: String,
    /// Driver.
    #[serde(default)]
    pub driver: String,
    /// Pool.
    #[serde(default)]
    pub pool: String,
    /// Device.
    #[serde(default)]
    pub device: String,
    /// The share of a device that allows multiple allocations.
    #[serde(default, rename = "shareID", skip_serializing_if = "Option::is_none")]
    pub share_id: Option<String>,
    /// What the share consumes of the device's capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumed_capacity: Option<BTreeMap<String, Quantity>>,
}

/// A consumer in `reservedFor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Consumer {
    /// `pods` for pods.
    #[serde(default)]
    pub resource: String,
    /// Its name (in the claim's namespace).
    #[serde(default)]
    pub name: String,
}

impl ResourceClaim {
    /// The allocated devices (empty when not allocated).
    pub fn results(&self) -> &[AllocationResult] {
        self.status.as_ref().and_then(|s| s.allocation.as_ref()).map_or(&[], |a| &a.devices.results)
    }

    /// Whether it is allocated.
    pub fn allocated(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.allocation.is_some())
    }

    /// The pods it is reserved for.
    pub fn pods(&self) -> impl Iterator<Item = &str> {
        self.status.iter().flat_map(|s| &s.reserved_for).filter(|c| c.resource == "pods").map(|c| c.name.as_str())
    }
}

/// A ResourceClaimTemplate: the claim each pod that names it gets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceClaimTemplate {
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The claim to make.
    #[serde(default)]
    pub spec: TemplateSpec,
}
dra_resource!(
    ResourceClaimTemplate,
    "ResourceClaimTemplate",
    "resourceclaimtemplates",
    k8s_openapi::NamespaceResourceScope
);

/// `ResourceClaimTemplate.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TemplateSpec {
    /// The claim's spec.
    #[serde(default)]
    pub spec: ClaimSpec,
}

/// A DeviceClass: which devices a request for it may get.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceClass {
    /// Metadata.
    #[serde(default)]
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
    fn claims_decode_with_allocation_shares_and_users() {
        let c: ResourceClaim = serde_json::from_str(
            r#"{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "shared-gpu", "namespace": "ml", "managedFields": [{}]},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}},
                "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-0", "shareID": "4c2e", "consumedCapacity": {"memory": "10Gi"}}]},
                                          "nodeSelector": {"nodeSelectorTerms": []}},
                           "reservedFor": [{"resource": "pods", "name": "a", "uid": "1"}, {"resource": "pods", "name": "b", "uid": "2"}]}}"#,
        )
        .unwrap_or_default();
        assert!(c.allocated());
        assert_eq!(c.results()[0].share_id.as_deref(), Some("4c2e"));
        assert_eq!(c.pods().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(c.spec.devices.requests[0].alternatives()[0].device_class_name, "gpu.nvidia.com");
        assert!(serde_json::from_str::<ResourceClaim>(r#"{"spec": {"devices": {"requests": 4}}}"#).is_err());
    }

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
