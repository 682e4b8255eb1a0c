//! A kubelet's pod-resources socket per simulated node (`v1.PodResourcesLister` over gRPC on a
//! unix socket, as `/var/lib/kubelet/pod-resources/kubelet.sock`), answering from the
//! simulator's own state: the node's advertised devices and the pods bound to it. The messages
//! are declared here, apart from the agent's client, so that neither can hide the other's bug.

pub mod dcgm;
pub mod devices;
pub mod nvmap;
pub mod tegrastats;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::{resources, Simulator};
use devices::{Advertised, Handed};

mod wire {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Empty {}

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ListPodResourcesResponse {
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
        #[prost(int64, repeated, tag = "3")]
        pub cpu_ids: Vec<i64>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ContainerDevices {
        #[prost(string, tag = "1")]
        pub resource_name: String,
        #[prost(string, repeated, tag = "2")]
        pub device_ids: Vec<String>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AllocatableResourcesResponse {
        #[prost(message, repeated, tag = "1")]
        pub devices: Vec<ContainerDevices>,
        #[prost(int64, repeated, tag = "2")]
        pub cpu_ids: Vec<i64>,
    }
}

/// One node's kubelet.
#[derive(Clone)]
struct Kubelet {
    sim: Simulator,
    node: String,
    handed: Arc<Mutex<Handed>>,
}

impl Kubelet {
    /// The node's devices and its pods, with the hand-out brought up to date.
    fn state(&self) -> (Vec<Advertised>, Handed) {
        let store = self.sim.shared.store();
        let kind = |k| resources::by_kind_name(k).map(|r| store.objects(r));
        let node = kind("Node").and_then(|n| n.get(&(String::new(), self.node.clone())).cloned());
        let adv = node.as_deref().map(devices::advertised).unwrap_or_default();
        let pods: Vec<&Value> = kind("Pod").into_iter().flat_map(|p| p.values().map(|v| &**v)).collect();
        let mut handed = self.handed.lock().unwrap_or_else(|e| e.into_inner());
        handed.update(&self.node, &adv, &pods);
        (adv, handed.clone())
    }

    fn list(&self) -> wire::ListPodResourcesResponse {
        let (_, handed) = self.state();
        let device = |(r, ids): &(String, Vec<String>)| wire::ContainerDevices {
            resource_name: r.clone(),
            device_ids: ids.clone(),
        };
        wire::ListPodResourcesResponse {
            pod_resources: handed
                .by_pod()
                .into_iter()
                .map(|((namespace, name), containers)| wire::PodResources {
                    name,
                    namespace,
                    containers: containers
                        .iter()
                        .map(|(c, held)| wire::ContainerResources {
                            name: c.clone(),
                            devices: held.iter().map(device).collect(),
                            cpu_ids: Vec::new(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    fn allocatable(&self) -> wire::AllocatableResourcesResponse {
        let (adv, _) = self.state();
        wire::AllocatableResourcesResponse {
            devices: adv
                .iter()
                .map(|a| wire::ContainerDevices {
                    resource_name: a.resource.clone(),
                    device_ids: a.ids[..a.healthy].to_vec(),
                })
                .collect(),
            cpu_ids: Vec::new(),
        }
    }
}

/// One method, answered from the kubelet's state.
struct Method<R>(Kubelet, fn(&Kubelet) -> R);

impl<R: Send + 'static> tonic::server::UnaryService<wire::Empty> for Method<R> {
    type Response = R;
    type Future = std::future::Ready<Result<tonic::Response<R>, tonic::Status>>;
    fn call(&mut self, _: tonic::Request<wire::Empty>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new((self.1)(&self.0))))
    }
}

impl tonic::server::NamedService for Kubelet {
    const NAME: &'static str = "v1.PodResourcesLister";
}

impl tower::Service<http::Request<tonic::body::Body>> for Kubelet {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let k = self.clone();
        match req.uri().path() {
            "/v1.PodResourcesLister/List" => Box::pin(async move {
                let mut g = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
                Ok(g.unary(Method(k, Kubelet::list), req).await)
            }),
            "/v1.PodResourcesLister/GetAllocatableResources" => Box::pin(async move {
                let mut g = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
                Ok(g.unary(Method(k, Kubelet::allocatable), req).await)
            }),
            // `Get` (one pod) and anything else: the kubelet's answer to an unknown method.
            _ => Box::pin(async move { Ok(tonic::Status::unimplemented("not served by the simulator").into_http()) }),
        }
    }
}

/// The sockets being served; dropping it stops them and removes the files.
#[derive(Debug)]
pub struct KubeletSockets {
    /// Node name → socket path.
    pub sockets: BTreeMap<String, PathBuf>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for KubeletSockets {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        for p in self.sockets.values() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The nodes with GPUs — the device plugin's, a DRA driver's, or a recorded Jetson board's —
/// with the recorded tegrastats board that matches each (Jetsons only).
pub fn gpu_nodes(sim: &Simulator) -> Vec<(String, Option<&'static str>)> {
    let store = sim.shared.store();
    let Some(r) = resources::by_kind_name("Node") else { return Vec::new() };
    // Nodes whose GPUs a DRA driver publishes (a ResourceSlice names them) have no device
    // plugin's devices but are GPU nodes all the same; so is a Jetson with no device plugin
    // whose board has a recording (its GPU works through the runtime all the same).
    let dra: Vec<String> = resources::by_kind_name("ResourceSlice")
        .map(|s| store.objects(s).values().filter_map(|v| v["spec"]["nodeName"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    store
        .objects(r)
        .values()
        .filter(|n| {
            !devices::advertised(n).is_empty()
                || n["metadata"]["name"].as_str().is_some_and(|x| dra.iter().any(|d| d == x))
                || tegrastats::board_for(n).is_some()
        })
        .map(|n| (n["metadata"]["name"].as_str().unwrap_or("").to_string(), tegrastats::board_for(n)))
        .collect()
}

/// Every ResourceSlice the store holds (a DRA driver's devices, for the dcgm-exporter pages).
pub(crate) fn slices(store: &crate::store::Store) -> Vec<serde_json::Value> {
    resources::by_kind_name("ResourceSlice")
        .map(|r| store.objects(r).values().map(|v| (**v).clone()).collect())
        .unwrap_or_default()
}

/// Every ResourceClaim the store holds (which DRA devices pods hold, for the same pages).
pub(crate) fn claims(store: &crate::store::Store) -> Vec<serde_json::Value> {
    resources::by_kind_name("ResourceClaim")
        .map(|r| store.objects(r).values().map(|v| (**v).clone()).collect())
        .unwrap_or_default()
}

/// Whether the simulated dcgm-exporter has a page for `node` (its device plugin advertises
/// whole GPUs, or a DRA driver publishes them).
pub fn has_dcgm_page(sim: &Simulator, node: &str) -> bool {
    let store = sim.shared.store();
    let slices = slices(&store);
    resources::by_kind_name("Node")
        .and_then(|r| store.objects(r).get(&(String::new(), node.to_string())).cloned())
        .is_some_and(|n| dcgm::page(&n, &slices, &[], 0).is_some())
}

/// Serves `dir/<node>/kubelet.sock` for every node the simulator holds now.
pub fn serve(sim: &Simulator, dir: &Path) -> std::io::Result<KubeletSockets> {
    let nodes: Vec<String> = sim.state("Node").into_iter().map(|k| k.name).collect();
    let mut out = KubeletSockets { sockets: BTreeMap::new(), tasks: Vec::new() };
    for node in nodes {
        let path = dir.join(&node).join("kubelet.sock");
        std::fs::create_dir_all(dir.join(&node))?;
        let _ = std::fs::remove_file(&path);
        let listener = tokio::net::UnixListener::bind(&path)?;
        let kubelet = Kubelet { sim: sim.clone(), node: node.clone(), handed: Arc::default() };
        out.tasks.push(tokio::spawn(async move {
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
            if let Err(e) = tonic::transport::Server::builder().add_service(kubelet).serve_with_incoming(incoming).await
            {
                tracing::error!(error = %e, "simulated pod-resources socket ended");
            }
        }));
        out.sockets.insert(node, path);
    }
    Ok(out)
}
