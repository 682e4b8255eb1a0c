//! A real node beside kwok's: a kubelet built from the control plane's module, Debian's
//! containerd and runc, the CNI bridge plugin, and gpudash-device-plugin on the kubelet's real
//! device-plugin API — registered with the test's [`ControlPlane`] as a Jetson-like board.
//!
//! What it touches on the machine, and gives back on [`RealNode::stop`] (a test checks with
//! [`RealNode::left_as_found`]): a bridge `gd-node0` holding the node's IP (`.2` of the first
//! documentation network no route of the machine uses — the kubelet refuses loopback) that
//! the pods are attached to;
//! `/var/lib/kubelet` (the device-plugin directory is a fixed path there) with the kubelet's
//! bind mount of it and the pods' volume mounts; `/var/log/pods`, `/var/log/containers`;
//! containerd's shim sockets under `/run/containerd` and network namespaces under `/run/netns`;
//! the `kubepods` cgroups; the sysctls the kubelet sets. containerd's root, state, socket, CNI
//! configuration and IP leases live in the node's temp directory. One real node runs on a
//! machine at a time (a lock file); each test binary that uses one starts it once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use crate::control_plane::{binary, zombie, ControlPlane};
use crate::{free_port, Proc};

/// The networks the node may take (the documentation ranges, then a private one), the first
/// that no route of the machine names: this machine kind's own interface is on 192.0.2.0/24,
/// where pods would be unreachable (the first attempt put them there).
const NETWORKS: &[&str] = &["198.51.100", "203.0.113", "10.213.77", "192.0.2"];

/// The first of [`NETWORKS`] (as `a.b.c`) that no route names.
fn free_network() -> anyhow::Result<&'static str> {
    let routes = sh("ip", &["-o", "route", "show", "table", "all"])?;
    let addrs = sh("ip", &["-o", "addr"])?;
    NETWORKS
        .iter()
        .copied()
        .find(|n| !routes.contains(&format!("{n}.")) && !addrs.contains(&format!("{n}.")))
        .ok_or_else(|| anyhow!("every network the real node may take is in use here: {NETWORKS:?}"))
}
const BRIDGE: &str = "gd-node0";
const KUBELET_ROOT: &str = "/var/lib/kubelet";
const DEVICE_PLUGINS: &str = "/var/lib/kubelet/device-plugins";
/// Where the kubelet serves the pod-resources API.
pub const POD_RESOURCES: &str = "/var/lib/kubelet/pod-resources/kubelet.sock";

/// The sysctls the kubelet sets at start (`setupKernelTunables`) and the bridge may touch.
const SYSCTLS: &[&str] = &[
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
    "net/ipv4/ip_forward",
];

/// Paths a real node creates outside its temp directory.
const PATHS: &[&str] = &["/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/run/containerd", "/run/netns"];

/// What the machine looked like before the node started.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    sysctls: BTreeMap<String, String>,
    mounts: Vec<String>,
    links: Vec<String>,
    paths: Vec<(String, bool)>,
    cgroups: Vec<(String, bool)>,
    iptables: String,
}

fn read_found() -> Found {
    let sysctls = SYSCTLS
        .iter()
        .map(|s| (s.to_string(), std::fs::read_to_string(format!("/proc/sys/{s}")).unwrap_or_default().trim().into()))
        .collect();
    let mounts = mounts();
    let links = links();
    let paths = PATHS.iter().map(|p| (p.to_string(), Path::new(p).exists())).collect();
    let cgroups = cgroup_roots().into_iter().map(|r| (r.clone(), Path::new(&r).join("kubepods").exists())).collect();
    let iptables = Command::new("iptables-save")
        .output()
        .map(|o| {
            // Comments carry the time it was printed.
            String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n")
        })
        .unwrap_or_default();
    Found { sysctls, mounts, links, paths, cgroups, iptables }
}

/// Mount points, sorted.
fn mounts() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
        .collect();
    v.sort();
    v
}

fn links() -> Vec<String> {
    let out = Command::new("ip").args(["-o", "link", "show"]).output().map(|o| o.stdout).unwrap_or_default();
    let mut v: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split(": ").nth(1).map(|n| n.split('@').next().unwrap_or(n).to_string()))
        .collect();
    v.sort();
    v
}

/// Each cgroup v1 hierarchy's root (`/sys/fs/cgroup/memory`, …).
fn cgroup_roots() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/fs/cgroup")
        .map(|d| d.flatten().map(|e| e.path().display().to_string()).collect())
        .unwrap_or_default();
    v.sort();
    v.retain(|p| Path::new(p).join("cgroup.procs").exists());
    v
}

/// How the node's GPUs are shared: the NVIDIA device plugin's config file (version v1).
#[derive(Debug, Clone)]
pub struct Sharing {
    /// Time-slicing replicas per GPU (1: whole GPUs).
    pub replicas: u32,
    /// `failRequestsGreaterThanOne`.
    pub fail_requests_greater_than_one: bool,
}

/// A real node's settings.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// The node's name (`--hostname-override`).
    pub name: String,
    /// Its labels, beside the kubelet's own.
    pub labels: Vec<(String, String)>,
    /// GPUs the device plugin reports.
    pub gpus: u32,
    /// Their sharing.
    pub sharing: Sharing,
}

impl NodeSpec {
    /// A Jetson-like board: one GPU, the labels the GPU feature discovery prints on an Orin.
    pub fn jetson(name: &str, replicas: u32) -> Self {
        Self {
            name: name.into(),
            labels: vec![
                ("nvidia.com/gpu.present".into(), "true".into()),
                ("nvidia.com/gpu.product".into(), "Orin".into()),
                ("nvidia.com/gpu.family".into(), "ampere".into()),
            ],
            gpus: 1,
            sharing: Sharing { replicas, fail_requests_greater_than_one: replicas > 1 },
        }
    }
}

/// A running real node.
pub struct RealNode {
    /// Its settings.
    pub spec: NodeSpec,
    /// The node's IP (its InternalIP; the pods are on the same /24).
    pub node_ip: String,
    net: &'static str,
    dir: tempfile::TempDir,
    found: Found,
    containerd: Option<Proc>,
    kubelet: Option<Proc>,
    kubelet_args: Vec<String>,
    stopped: bool,
    _lock: std::fs::File,
}

/// Why a real node cannot run on this machine, if it cannot.
pub fn unavailable() -> Option<String> {
    let uid = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:").map(|r| r.split_whitespace().next().unwrap_or("").to_string()));
    if uid.as_deref() != Some("0") {
        return Some("a real node needs root (the kubelet, containerd, cgroups, mounts)".into());
    }
    for (what, path) in [
        ("containerd", "/usr/bin/containerd"),
        ("containerd's runc shim", "/usr/bin/containerd-shim-runc-v2"),
        ("ctr", "/usr/bin/ctr"),
        ("runc", "/usr/sbin/runc"),
        ("the CNI bridge plugin", "/usr/lib/cni/bridge"),
        ("iproute2", "/usr/sbin/ip"),
    ] {
        if !Path::new(path).exists() {
            return Some(format!("{what} is missing ({path}): scripts/setup.sh's ensure_real_node installs it"));
        }
    }
    if !Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
        return Some("no cgroup v1 memory controller at /sys/fs/cgroup/memory".into());
    }
    None
}

fn sh(program: &str, args: &[&str]) -> anyhow::Result<String> {
    let o = Command::new(program).args(args).output().with_context(|| format!("running {program}"))?;
    if !o.status.success() {
        bail!(
            "{program} {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

impl RealNode {
    /// Starts containerd, imports the images, starts the kubelet and the device plugin, and waits
    /// until the node is Ready with its GPUs allocatable.
    pub async fn start(plane: &ControlPlane, spec: NodeSpec) -> anyhow::Result<Self> {
        if let Some(why) = unavailable() {
            bail!("{why}");
        }
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("gpudash-real-node.lock"))?;
        // One real node per machine: the device-plugin directory is a fixed path.
        tokio::task::block_in_place(|| lock.lock()).context("locking the real node")?;
        if Path::new(KUBELET_ROOT).exists() {
            bail!("{KUBELET_ROOT} exists: another kubelet runs or ran here; a real node is not started beside it");
        }
        let found = read_found();
        let dir = tempfile::Builder::new().prefix("gpudash-node-").tempdir()?;
        let net = free_network()?;
        let mut node = Self {
            spec,
            node_ip: format!("{net}.2"),
            net,
            dir,
            found,
            containerd: None,
            kubelet: None,
            kubelet_args: Vec::new(),
            stopped: false,
            _lock: lock,
        };
        // From here on a failure stops what was started (drop runs stop).
        node.start_parts(plane).await?;
        Ok(node)
    }

    /// The node's temp directory (containerd's root and state, logs, the plugin's commands).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, f: &str) -> PathBuf {
        self.dir.path().join(f)
    }

    /// containerd's socket.
    pub fn containerd_socket(&self) -> PathBuf {
        self.path("containerd.sock")
    }

    async fn start_parts(&mut self, plane: &ControlPlane) -> anyhow::Result<()> {
        let d = self.dir.path().to_path_buf();
        // The node's address, on a bridge the pods are attached to.
        sh("ip", &["link", "add", BRIDGE, "type", "bridge"])?;
        let (ip, net) = (self.node_ip.clone(), self.net);
        sh("ip", &["addr", "add", &format!("{ip}/24"), "dev", BRIDGE])?;
        sh("ip", &["link", "set", BRIDGE, "up"])?;
        std::fs::create_dir_all(d.join("cni"))?;
        std::fs::write(
            d.join("cni/10-gpudash.conflist"),
            serde_json::json!({"cniVersion": "0.4.0", "name": "gpudash-node", "plugins": [{
                "type": "bridge", "bridge": BRIDGE, "isGateway": false, "ipMasq": false,
                "ipam": {"type": "host-local", "dataDir": d.join("cni-ipam").display().to_string(),
                         "ranges": [[{"subnet": format!("{net}.0/24"), "rangeStart": format!("{net}.16"), "rangeEnd": format!("{net}.250")}]]}}]})
            .to_string(),
        )?;
        let sock = self.containerd_socket();
        // root lacks CAP_SYS_RESOURCE on this machine kind: without restrict_oom_score_adj every
        // sandbox fails (runc: "can't get final child's PID from pipe: EOF").
        let config = format!(
            r#"version = 2
root = "{root}"
state = "{state}"
[grpc]
  address = "{sock}"
[ttrpc]
  address = "{sock}.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "gpudash.local/pause:3.10"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{opt}"
"#,
            root = d.join("containerd/root").display(),
            state = d.join("containerd/state").display(),
            sock = sock.display(),
            cni = d.join("cni").display(),
            opt = d.join("containerd/opt").display(),
        );
        std::fs::write(d.join("containerd.toml"), config)?;
        self.containerd = Some(Proc::spawn_logged(
            Path::new("/usr/bin/containerd"),
            &["--config".into(), d.join("containerd.toml").display().to_string()],
            &d.join("containerd.log"),
        )?);
        let t = Instant::now();
        while !sock.exists() {
            if t.elapsed() > Duration::from_secs(30) {
                bail!("containerd did not listen within 30 s:\n{}", self.tail("containerd.log", 30));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let images = binary("images.tar")?;
        let a = sock.display().to_string();
        tokio::task::block_in_place(|| {
            sh("ctr", &["--address", &a, "--namespace", "k8s.io", "images", "import", &images.display().to_string()])
        })
        .context("importing the node's images")?;

        // The device plugin's sharing, in the NVIDIA device plugin's own config format.
        let s = &self.spec.sharing;
        std::fs::write(
            d.join("sharing.yaml"),
            format!(
                "version: v1\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: {}\n    resources:\n    - name: nvidia.com/gpu\n      replicas: {}\n",
                s.fail_requests_greater_than_one, s.replicas
            ),
        )?;
        std::fs::create_dir_all(d.join("plugin"))?;
        std::fs::create_dir_all(d.join("plugin-config"))?;
        std::fs::rename(d.join("sharing.yaml"), d.join("plugin-config/sharing.yaml"))?;

        let kubelet_port = free_port();
        let healthz_port = free_port();
        std::fs::write(
            d.join("kubelet.yaml"),
            format!(
                r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://{sock}
address: {ip}
port: {kubelet_port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {healthz_port}
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: false}}
authorization:
  mode: AlwaysAllow
registerNode: true
nodeStatusUpdateFrequency: 2s
nodeStatusReportFrequency: 10s
syncFrequency: 5s
resolvConf: ""
maxPods: 20
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
evictionPressureTransitionPeriod: 5s
podLogsDir: /var/log/pods
"#,
                sock = sock.display(),
            ),
        )?;
        let labels = self.spec.labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
        self.kubelet_args = vec![
            format!("--config={}", d.join("kubelet.yaml").display()),
            format!("--kubeconfig={}", plane.kubeconfig.display()),
            format!("--hostname-override={}", self.spec.name),
            format!("--node-ip={ip}"),
            format!("--root-dir={KUBELET_ROOT}"),
            format!("--node-labels={labels}"),
            "--v=2".into(),
        ];
        self.start_kubelet()?;
        let name = self.spec.name.clone();
        self.wait_until(plane, "the node Ready", Duration::from_secs(60), |p| {
            p.kubectl(&["get", "node", &name, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"])
                .is_ok_and(|s| s == "True")
        })
        .await?;
        // The device plugin as a site runs NVIDIA's: a DaemonSet pod on the node.
        std::fs::create_dir_all(DEVICE_PLUGINS)?;
        plane.apply(&[self.plugin_daemonset()])?;
        let want = u64::from(self.spec.gpus * self.spec.sharing.replicas.max(1));
        self.wait_until(plane, "the node Ready with its GPUs allocatable", Duration::from_secs(90), |p| {
            let ready = p
                .kubectl(&["get", "node", &name, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"])
                .is_ok_and(|s| s == "True");
            ready && allocatable(p, &name).is_some_and(|n| n == want)
        })
        .await
    }

    /// Starts the kubelet (again).
    pub fn start_kubelet(&mut self) -> anyhow::Result<()> {
        self.kubelet = Some(Proc::spawn_logged(&binary("kubelet")?, &self.kubelet_args, &self.path("kubelet.log"))?);
        Ok(())
    }

    /// Kills the kubelet (SIGKILL): its pods keep running under containerd.
    pub fn kill_kubelet(&mut self) {
        if let Some(mut p) = self.kubelet.take() {
            p.kill();
        }
    }

    /// The device plugin's DaemonSet (`kube-system/nvidia-device-plugin`, as NVIDIA's Helm chart
    /// names it): gpudash-device-plugin's image, the kubelet's device-plugin directory, its
    /// sharing config and command directory from the node's temp directory.
    pub fn plugin_daemonset(&self) -> serde_json::Value {
        let d = self.dir.path();
        let labels = serde_json::json!({"app.kubernetes.io/name": "nvidia-device-plugin"});
        let host = |name: &str, path: &Path| serde_json::json!({"name": name, "hostPath": {"path": path.display().to_string()}});
        serde_json::json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "nvidia-device-plugin", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "nodeSelector": {"kubernetes.io/hostname": self.spec.name},
                "priorityClassName": "system-node-critical",
                "tolerations": [{"operator": "Exists"}],
                "automountServiceAccountToken": false,
                "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "nvidia-device-plugin-ctr", "image": "gpudash.local/nvidia-device-plugin:1",
                    "imagePullPolicy": "IfNotPresent",
                    "args": [format!("--gpus={}", self.spec.gpus), format!("--seed={}", self.spec.name),
                             "--config=/config/sharing.yaml", "--state=/state"],
                    "volumeMounts": [{"name": "device-plugin", "mountPath": DEVICE_PLUGINS},
                                     {"name": "config", "mountPath": "/config", "readOnly": true},
                                     {"name": "state", "mountPath": "/state"}]}],
                "volumes": [host("device-plugin", Path::new(DEVICE_PLUGINS)), host("config", &d.join("plugin-config")),
                            host("state", &d.join("plugin"))]}}}})
    }

    /// The agent as a site runs it: a pod labelled `app.kubernetes.io/name=gpudash-agent` in
    /// `namespace` on this node, reading the kubelet's pod-resources socket. Its binary is
    /// `agent`, this build's (dynamically linked: the host's libraries are mounted read-only and
    /// its loader runs it), in the model image.
    pub fn agent_pod(&self, namespace: &str, agent: &Path) -> serde_json::Value {
        // A hostPath is absolute: `./run.sh` names the binary relative to the checkout.
        let agent = std::fs::canonicalize(agent).unwrap_or_else(|_| agent.to_path_buf());
        let bin = agent.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = agent.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let host = |name: &str, path: &str| serde_json::json!({"name": name, "hostPath": {"path": path}});
        serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "gpudash-agent", "namespace": namespace, "labels": {"app.kubernetes.io/name": "gpudash-agent"}},
            "spec": {"nodeSelector": {"kubernetes.io/hostname": self.spec.name}, "tolerations": [{"operator": "Exists"}],
                "automountServiceAccountToken": false, "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "agent", "image": "gpudash.local/model:1", "imagePullPolicy": "IfNotPresent",
                    "command": ["/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", format!("/host-bin/{name}")],
                    "args": ["--listen=0.0.0.0:9401", format!("--node={}", self.spec.name), "--interval=0.5",
                             format!("--pod-resources={POD_RESOURCES}")],
                    "env": [{"name": "PATH", "value": "/"}],
                    "ports": [{"name": "report", "containerPort": 9401}],
                    "volumeMounts": [{"name": "bin", "mountPath": "/host-bin", "readOnly": true},
                                     {"name": "lib", "mountPath": "/lib/x86_64-linux-gnu", "readOnly": true},
                                     {"name": "pod-resources", "mountPath": "/var/lib/kubelet/pod-resources"}]}],
                "volumes": [host("bin", &bin.display().to_string()), host("lib", "/lib/x86_64-linux-gnu"),
                            host("pod-resources", "/var/lib/kubelet/pod-resources")]}})
    }

    /// The device plugin's log (its container's, as the kubelet keeps it).
    fn plugin_log(&self) -> String {
        let mut out = String::new();
        for e in std::fs::read_dir("/var/log/pods").into_iter().flatten().flatten() {
            if !e.file_name().to_string_lossy().starts_with("kube-system_nvidia-device-plugin-") {
                continue;
            }
            for f in std::fs::read_dir(e.path().join("nvidia-device-plugin-ctr")).into_iter().flatten().flatten() {
                out.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
            }
        }
        out
    }

    /// How many times the plugin has registered with a kubelet.
    pub fn registrations(&self) -> u32 {
        std::fs::read_to_string(self.path("plugin/registered")).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
    }

    /// The UUID of GPU `i`, as the plugin names it (`GPU-…`: the first 16 bytes of
    /// SHA-256("<node>/<i>") printed as nvidia-smi prints a UUID).
    pub fn gpu_uuid(&self, i: u32) -> String {
        use sha2::Digest;
        let h = sha2::Sha256::digest(format!("{}/{i}", self.spec.name).as_bytes());
        let x: String = h.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("GPU-{}-{}-{}-{}-{}", &x[0..8], &x[8..12], &x[12..16], &x[16..20], &x[20..32])
    }

    /// Marks GPUs unhealthy through the plugin (empty: all healthy again).
    pub fn set_unhealthy(&self, uuids: &[String]) -> anyhow::Result<()> {
        Ok(std::fs::write(self.path("plugin/unhealthy"), uuids.join("\n"))?)
    }

    /// Holds the plugin's (re-)registration while `hold` is true: a plugin slow to come back
    /// after a kubelet restart.
    pub fn hold_registration(&self, hold: bool) -> anyhow::Result<()> {
        let f = self.path("plugin/hold");
        if hold {
            std::fs::write(f, "")?;
        } else if f.exists() {
            std::fs::remove_file(f)?;
        }
        Ok(())
    }

    /// The last lines of one of the node's logs.
    pub fn tail(&self, log: &str, lines: usize) -> String {
        crate::last_lines(&std::fs::read_to_string(self.path(log)).unwrap_or_default(), lines)
    }

    /// The kubelet's, containerd's and the plugin's last lines.
    pub fn logs(&self, lines: usize) -> String {
        let mut out: String = ["kubelet.log", "containerd.log"]
            .iter()
            .map(|l| format!("--- {l} ---\n{}\n", self.tail(l, lines)))
            .collect();
        out.push_str(&format!("--- the device plugin ---\n{}\n", crate::last_lines(&self.plugin_log(), lines)));
        out
    }

    /// Polls `ok` until it holds or `limit` passes; the error carries the node's logs.
    pub async fn wait_until(
        &self,
        plane: &ControlPlane,
        what: &str,
        limit: Duration,
        ok: impl Fn(&ControlPlane) -> bool,
    ) -> anyhow::Result<()> {
        plane.wait_until(what, limit, ok).await.map_err(|e| anyhow!("{e}\n{}", self.logs(25)))
    }

    /// The environment of a container's first process on this node, read from /proc (what the
    /// device plugin handed the container, as the container sees it).
    pub fn container_env(&self, pod_uid: &str) -> Option<BTreeMap<String, String>> {
        for pid in cgroup_pids(pod_uid) {
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
            let map: BTreeMap<String, String> = env
                .split(|b| *b == 0)
                .filter_map(|kv| {
                    let s = String::from_utf8_lossy(kv);
                    s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect();
            if map.contains_key("NVIDIA_VISIBLE_DEVICES") {
                return Some(map);
            }
        }
        None
    }

    /// Stops everything the node started and gives the machine back as it was found: the
    /// kubelet and the plugin, every container and shim, containerd, the mounts, network
    /// namespaces and cgroups they made, the bridge, the sysctls, the paths. Returns what could
    /// not be undone.
    pub fn stop(&mut self) -> Vec<String> {
        if self.stopped {
            return Vec::new();
        }
        self.stopped = true;
        let mut problems = Vec::new();
        self.kill_kubelet();
        // Containers (in the kubepods cgroups) and their shims (started by this containerd).
        let sock = self.containerd_socket().display().to_string();
        for _ in 0..50 {
            let mut left = cgroup_pids("");
            left.extend(shims(&sock));
            left.retain(|p| !zombie(*p));
            if left.is_empty() {
                break;
            }
            for pid in left {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(mut c) = self.containerd.take() {
            c.kill();
        }
        // Mounts made since the start, deepest first.
        let before: std::collections::BTreeSet<String> = self.found.mounts.iter().cloned().collect();
        for _ in 0..3 {
            let mut new: Vec<String> = mounts().into_iter().filter(|m| !before.contains(m)).collect();
            if new.is_empty() {
                break;
            }
            new.sort_by_key(|m| std::cmp::Reverse(m.len()));
            for m in new {
                let _ = Command::new("umount").args(["-l", &m]).status();
            }
        }
        // cgroups: depth first, in every hierarchy where the kubelet made them.
        for (root, existed) in &self.found.cgroups {
            if !existed {
                remove_cgroup_tree(&Path::new(root).join("kubepods"), &mut problems);
            }
        }
        if links().iter().any(|l| l == BRIDGE) {
            if let Err(e) = sh("ip", &["link", "del", BRIDGE]) {
                problems.push(e.to_string());
            }
        }
        for (key, value) in &self.found.sysctls {
            let now = std::fs::read_to_string(format!("/proc/sys/{key}")).unwrap_or_default();
            if now.trim() != value && std::fs::write(format!("/proc/sys/{key}"), value).is_err() {
                problems.push(format!("could not restore sysctl {key} to {value}"));
            }
        }
        let iptables = read_found().iptables;
        if iptables != self.found.iptables {
            // The kubelet's canary chains, where iptables works: flushed and removed.
            for table in ["mangle", "nat", "filter"] {
                for chain in ["KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT", "KUBE-FIREWALL"] {
                    let _ = Command::new("iptables").args(["-t", table, "-F", chain]).output();
                    let _ = Command::new("iptables").args(["-t", table, "-X", chain]).output();
                }
            }
        }
        for (p, existed) in &self.found.paths {
            if !existed && Path::new(p).exists() {
                if let Err(e) = std::fs::remove_dir_all(p) {
                    problems.push(format!("could not remove {p}: {e}"));
                }
            }
        }
        problems
    }

    /// What differs from the machine as the node found it (empty: nothing). Call after `stop`.
    pub fn left_as_found(&self) -> Vec<String> {
        let now = read_found();
        let mut d = Vec::new();
        let f = &self.found;
        for (k, v) in &f.sysctls {
            if now.sysctls.get(k) != Some(v) {
                d.push(format!("sysctl {k}: {v} before, {:?} now", now.sysctls.get(k)));
            }
        }
        let extra = |a: &[String], b: &[String]| a.iter().filter(|x| !b.contains(x)).cloned().collect::<Vec<_>>();
        for m in extra(&now.mounts, &f.mounts) {
            d.push(format!("mount left: {m}"));
        }
        for l in extra(&now.links, &f.links) {
            d.push(format!("link left: {l}"));
        }
        if now.paths != f.paths {
            d.push(format!("paths: {:?} before, {:?} now", f.paths, now.paths));
        }
        if now.cgroups != f.cgroups {
            d.push(format!("kubepods cgroups: {:?} before, {:?} now", f.cgroups, now.cgroups));
        }
        if now.iptables != f.iptables {
            d.push(format!("iptables: before\n{}\nnow\n{}", f.iptables, now.iptables));
        }
        let names = ["kubelet", "containerd", "containerd-shim", "gpudash-device", "gpudash-workloa", "pause", "model"];
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            let ours = names.iter().any(|n| comm.trim() == *n || comm.trim().starts_with("containerd-shim"));
            if ours && !zombie(pid) {
                d.push(format!("process left: {pid} {}", comm.trim()));
            }
        }
        d
    }
}

impl Drop for RealNode {
    fn drop(&mut self) {
        let problems = self.stop();
        if !problems.is_empty() {
            eprintln!("the real node could not undo: {problems:?}");
        }
    }
}

/// The node's allocatable GPUs (`nvidia.com/gpu`), as the API server has them.
pub fn allocatable(plane: &ControlPlane, node: &str) -> Option<u64> {
    plane
        .kubectl(&["get", "node", node, "-o", "jsonpath={.status.allocatable.nvidia\\.com/gpu}"])
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// The node's GPU capacity (`nvidia.com/gpu`).
pub fn capacity(plane: &ControlPlane, node: &str) -> Option<u64> {
    plane
        .kubectl(&["get", "node", node, "-o", "jsonpath={.status.capacity.nvidia\\.com/gpu}"])
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Processes in the `kubepods` cgroups (the memory hierarchy), of one pod when `pod_uid` is
/// given.
fn cgroup_pids(pod_uid: &str) -> Vec<u32> {
    let root = Path::new("/sys/fs/cgroup/memory/kubepods");
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
        if !pod_uid.is_empty() && !d.display().to_string().contains(&format!("pod{pod_uid}")) {
            continue;
        }
        let procs = std::fs::read_to_string(d.join("cgroup.procs")).unwrap_or_default();
        out.extend(procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
    }
    out
}

/// The runc shims this containerd started.
fn shims(sock: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        if cmd.contains("containerd-shim") && cmd.contains(sock) {
            out.push(pid);
        }
    }
    out
}

fn remove_cgroup_tree(dir: &Path, problems: &mut Vec<String>) {
    if !dir.exists() {
        return;
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.path().is_dir() {
                remove_cgroup_tree(&e.path(), problems);
            }
        }
    }
    // A cgroup directory is removed with rmdir (its files are the kernel's).
    let mut last = None;
    for _ in 0..20 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    problems.push(format!(
        "could not remove cgroup {}: {}",
        dir.display(),
        last.map(|e| e.to_string()).unwrap_or_default()
    ));
}
