//! ResourceClaims — what a claim asks for, the devices it was allocated and the pods it is
//! reserved for — and ResourceClaimTemplates, from which each pod gets its own claim.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// A ResourceClaim: a request for devices, and what it was allocated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceClaim {
    /// Metadata (managed fields and annotations skipped while decoding).
    #[serde(default, deserialize_with = "crate::meta::lean")]
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

impl ClaimSpec {
    /// The DeviceClasses its requests name, in order (every `firstAvailable` alternative).
    pub fn device_classes(&self) -> impl Iterator<Item = &str> {
        self.devices.requests.iter().flat_map(|r| r.alternatives()).map(|a| a.device_class_name.as_str())
    }
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
    /// Metadata (managed fields and annotations skipped while decoding).
    #[serde(default, deserialize_with = "crate::meta::lean")]
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
}
