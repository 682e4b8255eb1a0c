//! What a simulated Jetson's host shows of GPU memory per process: nvmap's client table
//! (`sys/kernel/debug/nvmap/iovmm/clients`), `/proc/meminfo` with `NvMapMemUsed`, and a
//! `/proc/<pid>/cgroup` per model process — a small tree per board under the demo's directory,
//! rewritten every second from the simulator's pods so that the node agents read per-pod GPU
//! memory that moves with the models. Written here in the kernel's formats (nvmap_dev.c's
//! `"%-18s %18s %8u %10lluK"`, meminfo's `"%-15s %8lu kB"`), apart from the agent's parser.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::{resources, Simulator};

/// The trees being written; dropping it stops the writer (the files stay with their directory).
#[derive(Debug)]
pub struct NvmapTrees {
    /// Node → (nvmap table, `/proc`).
    pub roots: BTreeMap<String, (PathBuf, PathBuf)>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for NvmapTrees {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A process of the simulated board.
struct Proc {
    pid: u32,
    comm: String,
    kib: u64,
    cgroup: String,
}

fn quantity_kib(q: &Value) -> Option<u64> {
    let s = q.as_str()?;
    let (n, mult) = [("Ki", 1u64), ("Mi", 1 << 10), ("Gi", 1 << 20), ("Ti", 1 << 30)]
        .iter()
        .find_map(|(suffix, m)| s.strip_suffix(suffix).map(|n| (n, *m)))
        .unwrap_or((s, 0));
    let n: u64 = n.parse().ok()?;
    Some(if mult == 0 { n / 1024 } else { n * mult })
}

/// The model processes of one node's running pods: each container that asks for a GPU holds
/// about 30 % of its memory request as GPU memory, moving ±10 % over a minute.
fn processes(node: &str, pods: &[&Value], systemd: bool, t: f64) -> Vec<Proc> {
    let mut out = Vec::new();
    for p in pods {
        if p["spec"]["nodeName"].as_str() != Some(node) || p["status"]["phase"].as_str() != Some("Running") {
            continue;
        }
        let uid = p["metadata"]["uid"].as_str().unwrap_or("");
        let qos = match p["status"]["qosClass"].as_str() {
            Some("Guaranteed") => "",
            Some("BestEffort") => "besteffort",
            _ => "burstable",
        };
        let asks = |c: &Value| {
            ["requests", "limits"]
                .iter()
                .any(|k| c["resources"][k].as_object().is_some_and(|m| m.keys().any(|k| k.starts_with("nvidia.com/"))))
        };
        let containers = p["spec"]["containers"].as_array().map(Vec::as_slice).unwrap_or_default();
        // A pod run by the NVIDIA runtime reaches the GPU without asking the scheduler for one
        // (on a board without the device plugin, the only way): its model holds GPU memory.
        let unasked = !containers.iter().any(asks)
            && p["spec"]["runtimeClassName"].as_str().is_some_and(|r| r.starts_with("nvidia"));
        for c in containers {
            let r = &c["resources"];
            let gpu = unasked || asks(c);
            let Some(req) = quantity_kib(&r["requests"]["memory"]).or_else(|| quantity_kib(&r["limits"]["memory"]))
            else {
                continue;
            };
            if !gpu || uid.is_empty() {
                continue;
            }
            let name = c["name"].as_str().unwrap_or("main");
            let h = super::devices::fnv(&format!("{uid}/{name}"));
            let phase = (h % 60) as f64;
            let wave = 1.0 + 0.1 * (std::f64::consts::TAU * (t + phase) / 60.0).sin();
            let kib = (req as f64 * 0.3 * wave) as u64;
            let id = format!(
                "{:016x}{:016x}{:016x}{:016x}",
                h,
                super::devices::fnv(name),
                h.rotate_left(17),
                h ^ 0x5bd1_e995
            );
            let cgroup = if systemd {
                let slice = if qos.is_empty() { String::new() } else { format!("kubepods-{qos}.slice/") };
                let pod = if qos.is_empty() { "kubepods".to_string() } else { format!("kubepods-{qos}") };
                format!("0::/kubepods.slice/{slice}{pod}-pod{}.slice/cri-containerd-{id}.scope", uid.replace('-', "_"))
            } else {
                let level = if qos.is_empty() { String::new() } else { format!("{qos}/") };
                format!("0::/kubepods/{level}pod{uid}/{id}")
            };
            let comm: String = c["image"]
                .as_str()
                .unwrap_or(name)
                .rsplit('/')
                .next()
                .unwrap_or(name)
                .split(':')
                .next()
                .unwrap_or(name)
                .chars()
                .take(15)
                .collect();
            out.push(Proc { pid: 1000 + (h % 60_000) as u32, comm, kib, cgroup });
        }
    }
    // A desktop session on the developer kit: GPU memory held outside Kubernetes.
    out.push(Proc { pid: 1731, comm: "Xorg".into(), kib: 18_140, cgroup: "0::/system.slice/gdm.service".into() });
    out.push(Proc {
        pid: 1012,
        comm: "nvargus-daemon".into(),
        kib: 0,
        cgroup: "0::/system.slice/nvargus-daemon.service".into(),
    });
    out
}

/// nvmap's client table as the kernel prints it.
fn table(procs: &[Proc]) -> String {
    let mut s = format!("{:<18} {:>18} {:>8} {:>11}\n", "CLIENT", "PROCESS", "PID", "SIZE");
    let mut total = 0;
    for p in procs {
        let _ = writeln!(s, "{:<18} {:>18} {:>8} {:>10}K", "user", p.comm, p.pid, p.kib);
        total += p.kib;
    }
    let _ = writeln!(s, "{:<18} {:<18} {:>8} {:>10}K", "total", "", "", total);
    s
}

/// `/proc/meminfo`'s first lines and nvmap's, for a board of `total_kib`.
fn meminfo(total_kib: u64, nvmap_kib: u64) -> String {
    let avail = total_kib.saturating_sub(nvmap_kib).saturating_sub(total_kib / 5);
    let line = |k: &str, v: u64| format!("{:<15} {:>8} kB\n", format!("{k}:"), v);
    [
        line("MemTotal", total_kib),
        line("MemFree", avail.saturating_sub(total_kib / 20)),
        line("MemAvailable", avail),
        line("Buffers", 38_972),
        line("Cached", total_kib / 10),
        line("NvMapMemFree", 94_784),
        line("NvMapMemUsed", nvmap_kib),
    ]
    .concat()
}

/// Writes `text` to `path` whole (a reader never sees half a file).
fn put(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Writes one board's tree from the simulator's state at `t` seconds.
fn write_tree(sim: &Simulator, node: &str, root: &Path, t: f64) -> std::io::Result<()> {
    let (procs, total_kib) = {
        let store = sim.shared.store();
        let kind = |k| resources::by_kind_name(k).map(|r| store.objects(r));
        let pods: Vec<&Value> = kind("Pod").into_iter().flat_map(|m| m.values().map(|v| &**v)).collect();
        let node_obj = kind("Node").and_then(|n| n.get(&(String::new(), node.to_string())).cloned());
        let total =
            node_obj.as_deref().and_then(|n| quantity_kib(&n["status"]["capacity"]["memory"])).unwrap_or(8 << 20);
        // JetPack 6 boards run systemd's cgroup driver here, the others K3s's cgroupfs.
        let systemd = node.contains("agx");
        (processes(node, &pods, systemd, t), total)
    };
    let nvmap = root.join("sys/kernel/debug/nvmap/iovmm");
    let proc_dir = root.join("proc");
    std::fs::create_dir_all(&nvmap)?;
    std::fs::create_dir_all(&proc_dir)?;
    for p in &procs {
        let d = proc_dir.join(p.pid.to_string());
        std::fs::create_dir_all(&d)?;
        put(&d.join("cgroup"), &format!("{}\n", p.cgroup))?;
    }
    // Processes that ended: their /proc entries go first, then the table (as on a host, a
    // reader may still find one in the table whose entry is gone).
    for e in std::fs::read_dir(&proc_dir)?.flatten() {
        let pid = e.file_name().to_string_lossy().parse::<u32>().ok();
        if pid.is_some_and(|pid| !procs.iter().any(|p| p.pid == pid)) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let used: u64 = procs.iter().map(|p| p.kib).sum();
    put(&proc_dir.join("meminfo"), &meminfo(total_kib, used))?;
    put(&nvmap.join("clients"), &table(&procs))
}

/// Writes a tree for each of `nodes` under `dir/<node>/host`, now and every second.
pub fn serve(sim: &Simulator, dir: &Path, nodes: &[String]) -> std::io::Result<NvmapTrees> {
    let started = std::time::Instant::now();
    let mut roots = BTreeMap::new();
    for n in nodes {
        let root = dir.join(n).join("host");
        write_tree(sim, n, &root, 0.0)?;
        roots.insert(n.clone(), (root.join("sys/kernel/debug/nvmap/iovmm/clients"), root.join("proc")));
    }
    let (sim, dir, nodes) = (sim.clone(), dir.to_path_buf(), nodes.to_vec());
    let task = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            let t = started.elapsed().as_secs_f64();
            for n in &nodes {
                if let Err(e) = write_tree(&sim, n, &dir.join(n).join("host"), t) {
                    tracing::warn!(node = %n, error = %e, "simulated nvmap tree not written");
                }
            }
        }
    });
    Ok(NvmapTrees { roots, task })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_printed_as_nvmap_prints_it() {
        let procs = vec![
            Proc { pid: 7979, comm: "gpu_burn".into(), kib: 23_525_644, cgroup: String::new() },
            Proc { pid: 8119, comm: "gnome_shell".into(), kib: 5800, cgroup: String::new() },
        ];
        let t = table(&procs);
        let lines: Vec<&str> = t.lines().collect();
        // Column for column as the recording in agent/fixtures/nvmap (htop's Orin).
        assert_eq!(lines[0], "CLIENT                        PROCESS      PID        SIZE");
        assert_eq!(lines[1], "user                         gpu_burn     7979   23525644K");
        assert_eq!(lines[2], "user                      gnome_shell     8119       5800K");
        assert_eq!(lines[3].split_whitespace().collect::<Vec<_>>(), ["total", "23531444K"]);
        assert_eq!(meminfo(8_038_788, 805_068).lines().last(), Some("NvMapMemUsed:     805068 kB"));
    }
}
