//! The kubelet's pod-resources API client (`v1.PodResourcesLister`, gRPC over a unix socket):
//! `GetAllocatableResources` and `List`. Only the fields gpudash reads are declared; protobuf
//! skips the rest (CPU IDs, memory, topology, DRA). Built with the `kubelet` feature (the
//! binary's); gpudash links only the report types.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::podresources::{Allocation, Devices, PodDevices};

/// The service's methods, as gRPC paths.
const LIST: &str = "/v1.PodResourcesLister/List";
const ALLOCATABLE: &str = "/v1.PodResourcesLister/GetAllocatableResources";

/// The wire messages (field numbers from the kubelet's `podresources/v1/api.proto`).
mod wire {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListRequest {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListResponse {
        #[prost(message, repeated, tag = "1")]
        pub pod_resources: Vec<PodResources>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct PodResources {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(string, tag = "2")]
        pub namespace: String,
        #[prost(message, repeated, tag = "3")]
        pub containers: Vec<ContainerResources>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ContainerResources {
        #[prost(string, tag = "1")]
        pub name: String,
        #[prost(message, repeated, tag = "2")]
        pub devices: Vec<ContainerDevices>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ContainerDevices {
        #[prost(string, tag = "1")]
        pub resource_name: String,
        #[prost(string, repeated, tag = "2")]
        pub device_ids: Vec<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AllocatableRequest {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AllocatableResponse {
        #[prost(message, repeated, tag = "1")]
        pub devices: Vec<ContainerDevices>,
    }
}

/// Why the kubelet could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The socket is not there or refused.
    #[error("cannot connect to the kubelet's pod-resources socket {path}: {source}")]
    Connect {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: tonic::transport::Error,
    },
    /// The kubelet answered with an error (or the call timed out).
    #[error("the kubelet's {method} answered {status}")]
    Call {
        /// `List` or `GetAllocatableResources`.
        method: &'static str,
        /// The gRPC status.
        status: Box<tonic::Status>,
    },
}

/// Whether a resource is an accelerator (the pod-resources API also lists hugepages-free
/// resources such as `example.com/foo`; gpudash shows GPUs and their kin).
fn accelerator(resource: &str) -> bool {
    resource.starts_with("nvidia.com/") || resource.contains("gpu") || resource.contains("neuron")
}

fn merge(into: &mut Vec<Devices>, from: Vec<wire::ContainerDevices>) {
    for d in from.into_iter().filter(|d| accelerator(&d.resource_name)) {
        match into.iter_mut().find(|x| x.resource == d.resource_name) {
            Some(x) => x.ids.extend(d.device_ids),
            None => into.push(Devices { resource: d.resource_name, ids: d.device_ids }),
        }
    }
}

/// Asks the kubelet at `socket` for its allocatable devices and its pods' devices.
pub async fn read(socket: &Path, timeout: Duration) -> Result<Allocation, Error> {
    let path = socket.to_path_buf();
    // The URI is required by the transport and ignored: every connection goes to the socket.
    let channel = tonic::transport::Endpoint::from_static("http://kubelet.local")
        .connect_timeout(timeout)
        .timeout(timeout)
        .connect_with_connector(tower::service_fn(move |_| {
            let path = path.clone();
            async move { tokio::net::UnixStream::connect(path).await.map(hyper_util::rt::TokioIo::new) }
        }))
        .await
        .map_err(|source| Error::Connect { path: socket.to_path_buf(), source })?;
    let mut grpc = tonic::client::Grpc::new(channel);
    let alloc: wire::AllocatableResponse =
        unary(&mut grpc, ALLOCATABLE, "GetAllocatableResources", wire::AllocatableRequest {}).await?;
    let list: wire::ListResponse = unary(&mut grpc, LIST, "List", wire::ListRequest {}).await?;
    let mut out = Allocation::default();
    merge(&mut out.allocatable, alloc.devices);
    for pod in list.pod_resources {
        let mut devices = Vec::new();
        for c in pod.containers {
            merge(&mut devices, c.devices);
        }
        if !devices.is_empty() {
            out.pods.push(PodDevices { namespace: pod.namespace, name: pod.name, devices });
        }
    }
    out.pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(out)
}

async fn unary<Q, R>(
    grpc: &mut tonic::client::Grpc<tonic::transport::Channel>,
    path: &'static str,
    method: &'static str,
    request: Q,
) -> Result<R, Error>
where
    Q: prost::Message + Send + Sync + 'static,
    R: prost::Message + Default + Send + Sync + 'static,
{
    let fail = |status| Error::Call { method, status: Box::new(status) };
    grpc.ready().await.map_err(|e| fail(tonic::Status::unavailable(e.to_string())))?;
    let codec = tonic_prost::ProstCodec::<Q, R>::default();
    let path = http::uri::PathAndQuery::from_static(path);
    grpc.unary(tonic::Request::new(request), path, codec).await.map(tonic::Response::into_inner).map_err(fail)
}
