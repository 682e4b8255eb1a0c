//! A real Kubernetes control plane for the tests, shaped like K3s: kine on a temp SQLite file,
//! kube-apiserver (self-signed serving certificate, a static admin token, service-account keys,
//! Node and RBAC authorization, the default admission plugins with NodeRestriction, an audit
//! log of every request), kube-controller-manager, kube-scheduler and kwok playing the kubelets,
//! all on loopback. Built by `scripts/control-plane.sh build` into `target/control-plane/bin/`.
//!
//! One plane per test binary (its start costs seconds); each test uses its own namespace. Every
//! process is killed on drop; the logs stay in the plane's directory and are printed when a
//! component does not become ready.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use crate::{free_port, Proc};

/// The static admin token (the `--token-auth-file`'s one line; group `system:masters`).
const ADMIN_TOKEN: &str = "gpudash-test-admin-token-0123456789";

/// Where `scripts/control-plane.sh build` puts the binaries.
pub fn bin_dir() -> PathBuf {
    crate::target_dir().join("control-plane/bin")
}

/// A binary of the control plane, or an error that says how to build it.
pub fn binary(name: &str) -> anyhow::Result<PathBuf> {
    let p = bin_dir().join(name);
    if p.exists() {
        Ok(p)
    } else {
        bail!("{} is missing: run scripts/control-plane.sh build (./test.sh does)", p.display())
    }
}

/// The kubectl of the control plane's release (the machine's may be far older).
pub fn kubectl_bin() -> PathBuf {
    bin_dir().join("kubectl")
}

/// One component: how to start it again and the running process.
struct Component {
    name: &'static str,
    program: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    proc: Option<Proc>,
}

impl Component {
    fn start(&mut self) -> anyhow::Result<()> {
        self.proc = Some(Proc::spawn_logged(&self.program, &self.args, &self.log)?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.kill();
        }
    }

    /// The last lines of its log, for an error message.
    fn tail(&self, lines: usize) -> String {
        crate::last_lines(&std::fs::read_to_string(&self.log).unwrap_or_default(), lines)
    }
}

/// A running control plane.
pub struct ControlPlane {
    /// `https://127.0.0.1:port`, the API server.
    pub server: String,
    /// The admin kubeconfig (static token, the serving certificate as CA).
    pub kubeconfig: PathBuf,
    /// The API server's audit log (JSON lines, one per request at Metadata level).
    pub audit_log: PathBuf,
    /// The API server's serving certificate (its own self-signed CA and certificate).
    pub ca_file: PathBuf,
    // Stopped in reverse order: kwok, scheduler, controller-manager, API server, kine.
    components: Vec<Component>,
    dir: tempfile::TempDir,
}

const KINE: usize = 0;
const APISERVER: usize = 1;

impl ControlPlane {
    /// Starts kine, the API server, the controller-manager, the scheduler and kwok, and waits
    /// until each is ready.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with(&[], &[]).await
    }

    /// As `start`, with extra kine flags (e.g. `--compact-interval=2s`) and kube-apiserver
    /// flags (e.g. `--watch-cache=false`).
    pub async fn start_with(kine_extra: &[&str], apiserver_extra: &[&str]) -> anyhow::Result<Self> {
        for b in ["kine", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"] {
            binary(b)?;
        }
        let dir = tempfile::Builder::new().prefix("gpudash-plane-").tempdir()?;
        let d = dir.path().to_path_buf();
        let path = |f: &str| d.join(f).display().to_string();
        write_support_files(&d)?;

        let kine_port = free_port();
        let api_port = free_port();
        let server = format!("https://127.0.0.1:{api_port}");
        let mut components = vec![
            Component {
                name: "kine",
                program: binary("kine")?,
                args: vec![
                    format!("--listen-address=127.0.0.1:{kine_port}"),
                    // K3s's default datastore: SQLite through kine, in WAL mode.
                    format!("--endpoint=sqlite://{}?_journal=WAL&cache=shared&_busy_timeout=30000", path("state.db")),
                    "--metrics-bind-address=0".into(),
                ]
                .into_iter()
                .chain(kine_extra.iter().map(|s| s.to_string()))
                .collect(),
                log: d.join("kine.log"),
                proc: None,
            },
            Component {
                name: "kube-apiserver",
                program: binary("kube-apiserver")?,
                args: [
                    format!("--etcd-servers=http://127.0.0.1:{kine_port}"),
                    "--bind-address=127.0.0.1".into(),
                    "--advertise-address=127.0.0.1".into(),
                    format!("--secure-port={api_port}"),
                    format!("--cert-dir={}", path("pki")),
                    format!("--token-auth-file={}", path("tokens.csv")),
                    format!("--service-account-key-file={}", path("sa.key")),
                    format!("--service-account-signing-key-file={}", path("sa.key")),
                    "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
                    "--service-cluster-ip-range=10.43.0.0/16".into(),
                    "--authorization-mode=Node,RBAC".into(),
                    "--enable-admission-plugins=NodeRestriction".into(),
                    "--allow-privileged=true".into(),
                    format!("--audit-policy-file={}", path("audit-policy.yaml")),
                    format!("--audit-log-path={}", path("audit.log")),
                    "--audit-log-format=json".into(),
                    "--audit-log-mode=blocking".into(),
                    "--profiling=false".into(),
                ]
                .into_iter()
                .chain(apiserver_extra.iter().map(|s| s.to_string()))
                .collect(),
                log: d.join("kube-apiserver.log"),
                proc: None,
            },
        ];
        let kubeconfig = d.join("admin.kubeconfig");
        let ca_file = d.join("pki/apiserver.crt");
        let mut plane = Self { server, kubeconfig, audit_log: d.join("audit.log"), ca_file, components, dir };
        plane.components[KINE].start()?;
        plane.wait_tcp(KINE, kine_port, Duration::from_secs(30)).await?;
        plane.components[APISERVER].start()?;
        plane.wait_apiserver(Duration::from_secs(90)).await?;
        std::fs::write(&plane.kubeconfig, kubeconfig_text(&plane.server, &plane.ca_file, ADMIN_TOKEN))?;

        let kc = plane.kubeconfig.display().to_string();
        let kcm_port = free_port();
        let sched_port = free_port();
        let kwok_port = free_port();
        // What the controller-manager and scheduler share: the admin kubeconfig for their work
        // and for delegated authentication of their own /healthz, on loopback.
        let served = |port: u16, certs: &str| -> Vec<String> {
            vec![
                format!("--kubeconfig={kc}"),
                format!("--authentication-kubeconfig={kc}"),
                format!("--authorization-kubeconfig={kc}"),
                // No client-certificate authentication here, so no
                // extension-apiserver-authentication ConfigMap to look up.
                "--authentication-skip-lookup=true".into(),
                "--bind-address=127.0.0.1".into(),
                format!("--secure-port={port}"),
                format!("--cert-dir={}", path(certs)),
                "--leader-elect=false".into(),
            ]
        };
        components = vec![
            Component {
                name: "kube-controller-manager",
                program: binary("kube-controller-manager")?,
                args: [
                    served(kcm_port, "kcm-pki"),
                    vec![
                        format!("--service-account-private-key-file={}", path("sa.key")),
                        format!("--root-ca-file={}", plane.ca_file.display()),
                        "--use-service-account-credentials=true".into(),
                        // A board that stops answering is marked NotReady (and its pods tainted for
                        // eviction) sooner than the default 50 s, so the tests need not wait.
                        "--node-monitor-grace-period=20s".into(),
                        "--node-monitor-period=2s".into(),
                        "--concurrent-deployment-syncs=10".into(),
                        "--concurrent-replicaset-syncs=10".into(),
                    ],
                ]
                .concat(),
                log: d.join("kube-controller-manager.log"),
                proc: None,
            },
            Component {
                name: "kube-scheduler",
                program: binary("kube-scheduler")?,
                args: served(sched_port, "sched-pki"),
                log: d.join("kube-scheduler.log"),
                proc: None,
            },
            Component {
                name: "kwok",
                program: binary("kwok")?,
                args: vec![
                    format!("--kubeconfig={kc}"),
                    format!("--config={}", crate::root().join("tests/control-plane/kwok-stages.yaml").display()),
                    // Nodes the tests mark as kwok's; a node without the mark has no kubelet.
                    "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake".into(),
                    format!("--server-address=127.0.0.1:{kwok_port}"),
                    "--node-ip=127.0.0.1".into(),
                    "--cidr=10.42.0.0/16".into(),
                    "--node-lease-duration-seconds=40".into(),
                ],
                log: d.join("kwok.log"),
                proc: None,
            },
        ];
        for c in components {
            plane.components.push(c);
            let i = plane.components.len() - 1;
            plane.components[i].start()?;
        }
        let https = |port: u16| format!("https://127.0.0.1:{port}/healthz");
        plane.serve_on(2, kcm_port, https, Duration::from_secs(60)).await?;
        plane.serve_on(3, sched_port, https, Duration::from_secs(60)).await?;
        plane
            .serve_on(4, kwok_port, |port| format!("http://127.0.0.1:{port}/healthz"), Duration::from_secs(60))
            .await?;
        // The namespace controller and service-account tokens need the default namespace's
        // service account; wait until the controllers made it (they run).
        plane
            .wait_until("the default ServiceAccount", Duration::from_secs(60), |p| {
                p.kubectl(&["get", "serviceaccount", "default", "-n", "default"]).is_ok()
            })
            .await?;
        Ok(plane)
    }

    /// The directory holding the datastore, certificates, kubeconfigs and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs the plane's kubectl with the admin kubeconfig; stdout on success, else an error
    /// with what it printed.
    pub fn kubectl(&self, args: &[&str]) -> anyhow::Result<String> {
        kubectl_with(&self.kubeconfig, args, None)
    }

    /// As `kubectl`, its output parsed as JSON (`-o json`, `get --raw`, `version -o json`).
    pub fn kubectl_json(&self, args: &[&str]) -> anyhow::Result<serde_json::Value> {
        let text = self.kubectl(args)?;
        serde_json::from_str(&text).with_context(|| format!("kubectl {}: not JSON", args.join(" ")))
    }

    /// As `kubectl`, feeding `stdin` (for `apply -f -`).
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> anyhow::Result<String> {
        kubectl_with(&self.kubeconfig, args, Some(stdin))
    }

    /// Applies objects given as JSON values (server-side validation, as a user's kubectl does).
    pub fn apply(&self, objects: &[serde_json::Value]) -> anyhow::Result<String> {
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
        self.kubectl_stdin(&["apply", "-f", "-"], &list.to_string())
    }

    /// Creates `count` pods `batch-0000`… in `namespace`, bound to `node`, each with one
    /// `nvidia.com/gpu`, 500 to a `kubectl create`.
    pub fn create_bound_gpu_pods(&self, namespace: &str, node: &str, count: usize) -> anyhow::Result<()> {
        for start in (0..count).step_by(500) {
            let pods: Vec<serde_json::Value> = (start..(start + 500).min(count))
                .map(|i| {
                    serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": format!("batch-{i:04}"), "namespace": namespace},
                        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox",
                                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
                })
                .collect();
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": pods});
            self.kubectl_stdin(&["create", "-f", "-"], &list.to_string())?;
        }
        Ok(())
    }

    /// Creates a cluster of this shape (`demo_shape`): setup objects, then the nodes, each given
    /// its resources by a status patch and waited for until kwok has it Ready, then the
    /// workloads, for the real scheduler and controllers to place.
    pub async fn create_shape(&self, shape: &crate::demo_shape::Shape) -> anyhow::Result<()> {
        if !shape.setup.is_empty() {
            self.apply(&shape.setup)?;
        }
        self.add_nodes(&shape.nodes).await?;
        if !shape.workloads.is_empty() {
            self.apply(&shape.workloads)?;
        }
        let want = shape.placed_pods;
        self.wait_until(
            &format!("the {want} pods the scenario had placed bound by the scheduler"),
            Duration::from_secs(90),
            |p| {
                p.kubectl(&["get", "pods", "-A", "-o", "jsonpath={.items[*].spec.nodeName}"])
                    .is_ok_and(|t| t.split_whitespace().count() >= want)
            },
        )
        .await?;
        if !shape.waiting.is_empty() {
            self.apply(&shape.waiting)?;
        }
        Ok(())
    }

    /// An HTTP client for the API server as the admin: its serving certificate trusted, the
    /// admin token sent.
    pub fn http_client(&self) -> anyhow::Result<reqwest::Client> {
        let pem = std::fs::read(&self.ca_file)?;
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {ADMIN_TOKEN}").parse()?);
        let mut b = reqwest::Client::builder().default_headers(headers);
        for cert in reqwest::Certificate::from_pem_bundle(&pem)? {
            b = b.add_root_certificate(cert);
        }
        Ok(b.build()?)
    }

    /// Creates kwok nodes and gives each its resources by a status patch (as a kubelet and the
    /// device plugin report them), waiting until kwok has it Ready with them.
    pub async fn add_nodes(&self, nodes: &[(serde_json::Value, serde_json::Value)]) -> anyhow::Result<()> {
        let objects: Vec<serde_json::Value> = nodes.iter().map(|(n, _)| n.clone()).collect();
        if !objects.is_empty() {
            self.apply(&objects)?;
        }
        for (n, patch) in nodes {
            let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
            self.wait_until(&format!("node {name} Ready with its resources"), Duration::from_secs(60), |p| {
                let _ = p.kubectl(&[
                    "patch",
                    "node",
                    &name,
                    "--subresource=status",
                    "--type=merge",
                    "-p",
                    &patch.to_string(),
                ]);
                p.kubectl_json(&["get", "node", &name, "-o", "json"])
                    .is_ok_and(|node| crate::demo_shape::node_done(&node, patch))
            })
            .await?;
        }
        Ok(())
    }

    /// Writes a kubeconfig for `token` (e.g. a ServiceAccount's from `kubectl create token`).
    pub fn kubeconfig_for_token(&self, token: &str, file: &str) -> anyhow::Result<PathBuf> {
        let p = self.dir.path().join(file);
        std::fs::write(&p, kubeconfig_text(&self.server, &self.ca_file, token))?;
        Ok(p)
    }

    /// A kubelet of its own for one node: a second kwok managing only `node` (give the node the
    /// annotation `kwok.x-k8s.io/node: solo` so the plane's kwok leaves it alone). Killing the
    /// returned process is a board going dark: its heartbeats and lease stop, and the real
    /// node-lifecycle controller does the rest.
    pub fn kubelet_for(&self, node: &str) -> anyhow::Result<Proc> {
        let args = vec![
            format!("--kubeconfig={}", self.kubeconfig.display()),
            format!("--config={}", crate::root().join("tests/control-plane/kwok-stages.yaml").display()),
            format!("--manage-single-node={node}"),
            format!("--server-address=127.0.0.1:{}", free_port()),
            "--node-ip=127.0.0.1".into(),
            "--cidr=10.44.0.0/16".into(),
            "--node-lease-duration-seconds=40".into(),
        ];
        Proc::spawn_logged(&binary("kwok")?, &args, &self.dir.path().join(format!("kwok-{node}.log")))
    }

    /// Kills the API server with SIGKILL, as a crash or an OOM kill would.
    pub fn kill_apiserver(&mut self) {
        self.components[APISERVER].stop();
    }

    /// Starts the API server again on the same datastore, certificates and port.
    pub async fn restart_apiserver(&mut self) -> anyhow::Result<()> {
        self.components[APISERVER].start()?;
        self.wait_apiserver(Duration::from_secs(90)).await
    }

    /// The process id of a running component (`kine`, `kube-apiserver`, `kwok`, …), for the
    /// benchmark's CPU and memory figures.
    pub fn pid(&self, name: &str) -> Option<u32> {
        self.components.iter().find(|c| c.name == name).and_then(|c| c.proc.as_ref()).map(Proc::pid)
    }

    /// Every component's log, last lines first per component, for a failing test's output.
    pub fn logs(&self, lines: usize) -> String {
        self.components.iter().map(|c| format!("--- {} ---\n{}\n", c.name, c.tail(lines))).collect()
    }

    /// Polls `ok` (run off the async workers) until it holds or `limit` passes.
    pub async fn wait_until(&self, what: &str, limit: Duration, ok: impl Fn(&Self) -> bool) -> anyhow::Result<()> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if tokio::task::block_in_place(|| ok(self)) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        bail!("{what}: not within {limit:?}\n{}", self.logs(15))
    }

    /// Waits until the one pod of `namespace` labelled `label` (`app=x`) is Running.
    pub async fn wait_one_running(&self, namespace: &str, label: &str, limit: Duration) -> anyhow::Result<()> {
        self.wait_until(&format!("the {label} pod running"), limit, |p| {
            p.kubectl(&["get", "pods", "-n", namespace, "-l", label, "-o", "jsonpath={.items[*].status.phase}"])
                .is_ok_and(|s| s == "Running")
        })
        .await
    }

    async fn wait_tcp(&self, i: usize, port: u16, limit: Duration) -> anyhow::Result<()> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return Ok(());
            }
            self.check_alive(i)?;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(self.not_ready(i, limit))
    }

    async fn wait_apiserver(&mut self, limit: Duration) -> anyhow::Result<()> {
        let url = format!("{}/readyz", self.server);
        self.wait_http(APISERVER, &url, limit).await
    }

    /// Waits until component `i` answers `url(port)` and is still running: another process can
    /// take a port between [`free_port`] and the component's bind (any outgoing connection on
    /// the machine may be given it — a controller-manager once found its port taken and a
    /// `/healthz` on it answered by someone else). A component that exited saying its address
    /// was in use is started again on another port, at most three times in all.
    async fn serve_on(
        &mut self,
        i: usize,
        mut port: u16,
        url: impl Fn(u16) -> String,
        limit: Duration,
    ) -> anyhow::Result<u16> {
        for attempt in 1..=3 {
            let ready = self.wait_http(i, &url(port), limit).await;
            // Long enough for a component that failed to bind to have exited.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let alive = self.check_alive(i);
            if ready.is_ok() && alive.is_ok() {
                return Ok(port);
            }
            let taken = self.components[i].tail(40).contains("address already in use");
            if !taken || attempt == 3 {
                ready?;
                return alive.map(|()| port);
            }
            let (old, new) = (port.to_string(), free_port());
            let c = &mut self.components[i];
            for a in &mut c.args {
                if a.ends_with(&format!("={old}")) || a.ends_with(&format!(":{old}")) {
                    *a = a.replacen(&old, &new.to_string(), 1);
                }
            }
            c.stop();
            c.start()?;
            port = new;
        }
        Ok(port)
    }

    async fn wait_http(&self, i: usize, url: &str, limit: Duration) -> anyhow::Result<()> {
        // Readiness only: the components' serving certificates are their own self-signed ones.
        let client = reqwest::Client::builder().danger_accept_invalid_certs(true).build()?;
        let t = Instant::now();
        while t.elapsed() < limit {
            let r = client.get(url).bearer_auth(ADMIN_TOKEN).timeout(Duration::from_secs(2)).send().await;
            if r.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            self.check_alive(i)?;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(self.not_ready(i, limit))
    }

    fn check_alive(&self, i: usize) -> anyhow::Result<()> {
        let c = &self.components[i];
        // `exited` needs `&mut`; a dead process is found through /proc instead.
        let alive =
            c.proc.as_ref().is_some_and(|p| Path::new(&format!("/proc/{}", p.pid())).exists() && !zombie(p.pid()));
        if alive {
            Ok(())
        } else {
            Err(anyhow!("{} exited while starting; the last lines of its log:\n{}", c.name, c.tail(30)))
        }
    }

    fn not_ready(&self, i: usize, limit: Duration) -> anyhow::Error {
        let c = &self.components[i];
        anyhow!("{} did not become ready within {limit:?}; the last lines of its log:\n{}", c.name, c.tail(30))
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        for c in self.components.iter_mut().rev() {
            c.stop();
        }
        if std::thread::panicking() {
            eprintln!("control plane logs ({}):\n{}", self.dir.path().display(), self.logs(40));
        }
    }
}

/// Whether a process is gone or a zombie (this machine's init may take a while to reap what it
/// inherits): not running either way.
pub(crate) fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

fn kubeconfig_text(server: &str, ca: &Path, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: {server}\n    \
         certificate-authority: {}\nusers:\n- name: user\n  user:\n    token: {token}\ncontexts:\n\
         - name: local\n  context: {{cluster: local, user: user}}\ncurrent-context: local\n",
        ca.display()
    )
}

/// The files the API server reads at start: the token file, service-account key, audit policy.
fn write_support_files(d: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(d.join("pki"))?;
    std::fs::write(d.join("tokens.csv"), format!("{ADMIN_TOKEN},admin,admin-uid,system:masters\n"))?;
    let out = Command::new("openssl")
        .args(["genrsa", "-out"])
        .arg(d.join("sa.key"))
        .arg("2048")
        .stderr(Stdio::piped())
        .output()
        .context("openssl not found (Debian's openssl package): it makes the service-account key")?;
    if !out.status.success() {
        bail!("openssl genrsa failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    // Every request at Metadata level: who asked for what with which verb (the read-only check).
    std::fs::write(
        d.join("audit-policy.yaml"),
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    )?;
    Ok(())
}

/// Runs the plane's kubectl with a kubeconfig.
pub fn kubectl_with(kc: &Path, args: &[&str], stdin: Option<&str>) -> anyhow::Result<String> {
    use std::io::Write;
    let mut child = Command::new(kubectl_bin())
        .arg("--kubeconfig")
        .arg(kc)
        .arg("--cache-dir")
        .arg(crate::kubectl_cache_dir(kc))
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{} (scripts/control-plane.sh build makes it)", kubectl_bin().display()))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        bail!("kubectl {}: {}{}", args.join(" "), stdout, String::from_utf8_lossy(&out.stderr))
    }
}

/// The audit log's entries: (user, verb, resource, namespace), one per request.
pub fn audit_entries(log: &Path) -> Vec<(String, String, String, String)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|e| {
            let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
            (s(&e["user"]["username"]), s(&e["verb"]), s(&e["objectRef"]["resource"]), s(&e["objectRef"]["namespace"]))
        })
        .collect()
}
