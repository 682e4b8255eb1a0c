//! Dynamic Resource Allocation (`resource.k8s.io/v1`, GA in Kubernetes 1.34) as gpudash keeps
//! it: ResourceSlices (the devices each driver publishes per node), ResourceClaims (which
//! device each claim got and which pods use it), ResourceClaimTemplates and DeviceClasses —
//! only the fields the derivation and the what-if check read, decoded straight from the API
//! server's JSON (like [`crate::pod`]). Field names follow the API.

//!
//! Rooms: [`slice`] (ResourceSlices and their devices, DeviceClasses), [`claim`]
//! (ResourceClaims, their allocation and users, ResourceClaimTemplates).

/// The API group and version.
pub const GROUP: &str = "resource.k8s.io";
/// The version served since 1.34.
pub const VERSION: &str = "v1";

/// Implements `kube_core::Resource` and `strip` for a DRA kind.
macro_rules! dra_resource {
    ($ty:ident, $kind:literal, $plural:literal, $scope:ty) => {
        impl kube_core::Resource for $ty {
            type DynamicType = ();
            type Scope = $scope;

            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed($kind)
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed($crate::dra::GROUP)
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed($crate::dra::VERSION)
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                std::borrow::Cow::Borrowed($plural)
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
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

mod claim;
mod slice;

pub use claim::*;
pub use slice::*;
