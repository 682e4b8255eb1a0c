//! GPU memory per process on a Jetson, and per pod: nvmap's client table (debugfs, root only),
//! each PID mapped to its pod by its cgroup path, `NvMapMemUsed` from `/proc/meminfo`, and the
//! GPU's load from devfreq. Parsers are pure (text in, values out); [`read`] reads the files.
//!
//! nvmap (the nvgpu stack: Orin, Xavier, TX2) prints one line per client in
//! `/sys/kernel/debug/nvmap/iovmm/clients` (`%-18s %18s %8u %10lluK`: client, process, PID,
//! size), and the same client lines, each followed by its handles, in `iovmm/maps`; both end in
//! a `total` line. A client's size is its handles' sizes, each divided by the number of clients
//! sharing it, so the clients add up to the total. A process may open several clients: they are
//! summed by PID.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where nvmap's client table is on the host (root only; debugfs mounted).
pub const NVMAP_CLIENTS: &str = "/sys/kernel/debug/nvmap/iovmm/clients";

/// One process holding GPU memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    /// Its PID on the host.
    pub pid: u32,
    /// Its command name as the kernel keeps it (at most 15 characters).
    pub name: String,
    /// GPU memory it holds, bytes.
    pub bytes: u64,
}

/// nvmap's client table, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvmapTable {
    /// Per process (clients of one PID summed), in the table's order.
    pub processes: Vec<Process>,
    /// The `total` line, bytes (absent when the table was cut short).
    pub total_bytes: Option<u64>,
    /// Lines that are neither a client, a handle, the header nor the total: skipped, counted.
    pub skipped: u32,
}

/// `1234K` (nvmap prints kibibytes; `M` and `G` read too, as older kernels were said to print).
fn size(s: &str) -> Option<u64> {
    let (n, unit) = s.split_at(s.len().checked_sub(1)?);
    let n: u64 = n.parse().ok()?;
    let shift = match unit {
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// Reads nvmap's `clients` or `maps` table. Handle and mapping lines (indented) are passed
/// over; a line that cannot be read is skipped and counted, never fatal. Text without the
/// table's header is not nvmap's: an error.
pub fn parse_nvmap(text: &str) -> Result<NvmapTable, String> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let header = lines.next().unwrap_or("");
    let cols: Vec<&str> = header.split_whitespace().collect();
    if cols.first() != Some(&"CLIENT") || !cols.contains(&"PID") {
        return Err(format!("not nvmap's client table (first line {:?})", header.chars().take(80).collect::<String>()));
    }
    let mut t = NvmapTable::default();
    let mut at: BTreeMap<u32, usize> = BTreeMap::new();
    for line in lines {
        if line.trim().is_empty() || line.starts_with([' ', '\t']) {
            // A handle or a mapping of the client above (the `maps` table), or the second
            // header line.
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"total") {
            match words.last().and_then(|w| size(w)) {
                Some(b) => t.total_bytes = Some(b),
                None => t.skipped += 1,
            }
            continue;
        }
        // client, process (a command name may hold spaces), PID, size: read from the right.
        let n = words.len();
        let parsed = (n >= 4).then(|| (words[n - 2].parse::<u32>().ok(), size(words[n - 1])));
        let Some((Some(pid), Some(bytes))) = parsed else {
            t.skipped += 1;
            continue;
        };
        let name = words[1..n - 2].join(" ");
        match at.get(&pid) {
            Some(&i) => t.processes[i].bytes = t.processes[i].bytes.saturating_add(bytes),
            None => {
                at.insert(pid, t.processes.len());
                t.processes.push(Process { pid, name, bytes });
            }
        }
    }
    Ok(t)
}

/// A `/proc/meminfo` field in bytes (`NvMapMemUsed:     805068 kB`).
pub fn meminfo_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let mut w = v.split_whitespace();
        let n: u64 = w.next()?.parse().ok()?;
        match w.next() {
            Some("kB") => n.checked_mul(1024),
            None => Some(n),
            Some(_) => None,
        }
    })
}

/// A devfreq `load` (tenths of a percent: `367` is 36.7 %) as a percent; out-of-range or
/// unreadable values are `None`.
pub fn devfreq_load(text: &str) -> Option<f32> {
    // Some kernels print `load@frequency`.
    let n: u32 = text.trim().split('@').next()?.trim().parse().ok()?;
    (n <= 1000).then(|| n as f32 / 10.0)
}

/// The pod (UID) and container (runtime ID) a process's cgroup names, from
/// `/proc/<pid>/cgroup`: cgroup v2 (`0::/…`) or v1 (any hierarchy), the systemd driver
/// (`kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope`) or cgroupfs
/// (`/kubepods/burstable/pod<uid>/<id>`). `None` for a process outside any pod.
pub fn pod_of_cgroup(text: &str) -> Option<(String, Option<String>)> {
    text.lines().find_map(|l| {
        let path = l.splitn(3, ':').nth(2)?;
        if !path.contains("kubepods") {
            return None;
        }
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let i = parts.iter().position(|p| pod_uid(p).is_some())?;
        let uid = pod_uid(parts[i])?;
        let container = parts.get(i + 1).map(|c| container_id(c)).filter(|c| !c.is_empty());
        Some((uid, container))
    })
}

/// `pod0a1b…` (cgroupfs) or `kubepods-besteffort-pod0a1b_….slice` (systemd) → the pod's UID.
fn pod_uid(part: &str) -> Option<String> {
    let part = part.strip_suffix(".slice").unwrap_or(part);
    let at = part.rfind("pod")?;
    let uid = &part[at + 3..];
    let uid = uid.replace('_', "-");
    let ok = uid.len() >= 32 && uid.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    ok.then_some(uid)
}

/// `cri-containerd-<id>.scope`, `docker-<id>.scope`, `crio-<id>.scope` or a bare `<id>` → `<id>`.
fn container_id(part: &str) -> String {
    let part = part.strip_suffix(".scope").unwrap_or(part);
    let id = part.rsplit('-').next().unwrap_or(part);
    if id.len() >= 12 && id.chars().all(|c| c.is_ascii_hexdigit()) {
        id.to_string()
    } else {
        String::new()
    }
}

/// GPU memory one pod's processes hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PodUse {
    /// The pod's UID (from its cgroup path).
    pub uid: String,
    /// Bytes, all its processes.
    pub bytes: u64,
    /// By container runtime ID (`containerd://<id>` in the pod's status without the prefix);
    /// processes whose cgroup names no container are under "".
    pub containers: Vec<(String, u64)>,
    /// How many processes.
    pub processes: u32,
}

/// What the agent read of GPU memory by process and pod.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuMemory {
    /// Where it came from: `nvmap` (Jetson, nvgpu stack) or `nvml` (Thor, discrete GPUs).
    pub source: String,
    /// Per pod, largest first.
    pub pods: Vec<PodUse>,
    /// Held by processes outside any pod (the desktop, a model run by hand), bytes.
    pub outside_bytes: u64,
    /// The largest of those processes (at most [`MAX_OUTSIDE`]).
    pub outside: Vec<Process>,
    /// The table's total, bytes.
    pub total_bytes: Option<u64>,
    /// `NvMapMemUsed` from `/proc/meminfo`: all GPU memory nvmap holds on the board, bytes.
    pub nvmap_used_bytes: Option<u64>,
    /// Table lines that could not be read (skipped).
    pub skipped_lines: u32,
    /// Processes that ended between the table and their cgroup (left out).
    pub exited: u32,
}

/// Processes outside pods listed by name.
pub const MAX_OUTSIDE: usize = 8;

/// Where to read.
#[derive(Debug, Clone)]
pub struct Sources {
    /// nvmap's client (or maps) table.
    pub nvmap: std::path::PathBuf,
    /// The host's `/proc` (mounted into the agent's container, e.g. at `/host/proc`).
    pub proc: std::path::PathBuf,
}

/// Largest table read (a board with thousands of clients prints well under this).
const MAX_TABLE: u64 = 4 << 20;

/// Reads at most `cap` bytes of a file as text.
pub fn read_capped(path: &Path, cap: u64) -> std::io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(path)?.take(cap).read_to_string(&mut s)?;
    Ok(s)
}

/// Reads the table, maps each PID to its pod, and sums. An unreadable table is an error that
/// says what to mount (per-pod GPU memory is then unknown, not zero).
pub fn read(src: &Sources) -> Result<GpuMemory, String> {
    let text = read_capped(&src.nvmap, MAX_TABLE).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound => {
                "mount the host's /sys/kernel/debug read-only into the agent (debugfs must be mounted on the \
                 host; boards with the nvidia.ko stack, Jetson Thor, have no nvmap)"
            }
            std::io::ErrorKind::PermissionDenied => {
                "debugfs is readable by root only: run the agent as root (read-only)"
            }
            _ => "check the agent's mounts",
        };
        format!("cannot read {}: {e} — per-pod GPU memory is unknown; {hint}", src.nvmap.display())
    })?;
    let table = parse_nvmap(&text).map_err(|e| format!("{}: {e}", src.nvmap.display()))?;
    let cgroup_of = |pid: u32| read_capped(&src.proc.join(pid.to_string()).join("cgroup"), 64 << 10);
    Ok(attribute("nvmap", table, cgroup_of, read_capped(&src.proc.join("meminfo"), 64 << 10).ok().as_deref()))
}

/// Sums a table by pod, given each PID's cgroup file (an error: the process has ended).
pub fn attribute(
    source: &str,
    table: NvmapTable,
    cgroup_of: impl Fn(u32) -> std::io::Result<String>,
    meminfo: Option<&str>,
) -> GpuMemory {
    let mut m = GpuMemory {
        source: source.into(),
        total_bytes: table.total_bytes,
        nvmap_used_bytes: meminfo.and_then(|t| meminfo_field(t, "NvMapMemUsed")),
        skipped_lines: table.skipped,
        ..GpuMemory::default()
    };
    let mut by_pod: BTreeMap<String, PodUse> = BTreeMap::new();
    let mut outside = Vec::new();
    for p in table.processes {
        // PID 0 is nvmap's own (kernel) client.
        let cgroup = if p.pid == 0 { Ok(String::new()) } else { cgroup_of(p.pid) };
        match cgroup {
            Err(_) => m.exited += 1,
            Ok(text) => match pod_of_cgroup(&text) {
                Some((uid, container)) => {
                    let e = by_pod.entry(uid.clone()).or_insert_with(|| PodUse { uid, ..PodUse::default() });
                    e.bytes = e.bytes.saturating_add(p.bytes);
                    e.processes += 1;
                    let c = container.unwrap_or_default();
                    match e.containers.iter_mut().find(|(id, _)| *id == c) {
                        Some((_, b)) => *b = b.saturating_add(p.bytes),
                        None => e.containers.push((c, p.bytes)),
                    }
                }
                None => {
                    m.outside_bytes = m.outside_bytes.saturating_add(p.bytes);
                    outside.push(p);
                }
            },
        }
    }
    m.pods = by_pod.into_values().collect();
    m.pods.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.uid.cmp(&b.uid)));
    outside.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.pid.cmp(&b.pid)));
    outside.truncate(MAX_OUTSIDE);
    m.outside = outside;
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn real_client_tables_read_with_their_totals() {
        // An Orin running gpu_burn (htop's Jetson support, as printed there).
        let t = parse_nvmap(&fixture("nvmap/orin-gpu-burn-clients.txt")).unwrap();
        assert_eq!(t.processes.len(), 3);
        assert_eq!(t.processes[0], Process { pid: 7979, name: "gpu_burn".into(), bytes: 23_525_644 << 10 });
        assert_eq!(t.total_bytes, Some(23_549_320 << 10));
        assert_eq!(t.processes.iter().map(|p| p.bytes).sum::<u64>(), 23_549_320 << 10, "clients add up to the total");
        assert_eq!(t.skipped, 0);
        // A Jetson desktop with a camera daemon holding nothing.
        let t = parse_nvmap(&fixture("nvmap/jetson-desktop-clients.txt")).unwrap();
        assert_eq!(t.processes.len(), 4);
        assert_eq!(t.processes[3], Process { pid: 1012, name: "nvargus-daemon".into(), bytes: 0 });
        assert_eq!(t.total_bytes, Some(141_896 << 10));
    }

    #[test]
    fn the_maps_table_reads_as_its_client_lines_and_bad_lines_are_counted() {
        // Printed as nvmap_dev.c's maps table prints: a client line, its handles and their
        // mappings indented under it.
        let text = "\
CLIENT                        PROCESS      PID        SIZE
                                       BASE        SIZE    FLAGS  SHARE       UID                  MAPS            MAPSIZE
user                          python3     4412     1048576K
                                          0     1048576K        0      1 ffffff80a1b2c000                           1048576K
                                                                                 ffff8a000000-ffff8e000000   65536K
user                          python3     4412        2048K
user                      trtexec --x     5120       4096K
garbage line without numbers
user                            Xorg      notapid    17876K
total                                             1054720K
";
        let t = parse_nvmap(text).unwrap();
        assert_eq!(
            t.processes,
            vec![
                Process { pid: 4412, name: "python3".into(), bytes: 1_050_624 << 10 },
                Process { pid: 5120, name: "trtexec --x".into(), bytes: 4096 << 10 },
            ],
            "two clients of one process are summed; a name with a space is kept"
        );
        assert_eq!((t.skipped, t.total_bytes), (2, Some(1_054_720 << 10)));
        assert!(parse_nvmap("MemTotal: 5 kB\n").is_err(), "not the table");
        assert!(parse_nvmap("").is_err());
    }

    #[test]
    fn meminfo_and_devfreq() {
        let tx2 = fixture("meminfo/tx2-jetpack-4.6.txt");
        assert_eq!(meminfo_field(&tx2, "NvMapMemUsed"), Some(805_068 * 1024));
        assert_eq!(meminfo_field(&tx2, "MemTotal"), Some(8_038_788 * 1024));
        assert_eq!(meminfo_field(&tx2, "HugePages_Total"), Some(0));
        assert_eq!(meminfo_field(&tx2, "NoSuchField"), None);
        assert_eq!(meminfo_field("NvMapMemUsed: x kB", "NvMapMemUsed"), None);
        assert_eq!(devfreq_load("367\n"), Some(36.7));
        assert_eq!(devfreq_load("1000"), Some(100.0));
        assert_eq!(devfreq_load("120@1300500000"), Some(12.0));
        assert_eq!(devfreq_load("1001"), None);
        assert_eq!(devfreq_load("busy"), None);
    }

    #[test]
    fn cgroup_paths_of_every_driver_and_version_name_the_pod() {
        let uid = "0b3c9a52-7e43-4a51-9d4b-2f3c1e6a8b90";
        let id = "5f1e3c0d9b8a7f6e5d4c3b2a19080706f5e4d3c2b1a0f9e8d7c6b5a493827160";
        // cgroup v2, systemd driver (K3s on JetPack 6).
        let v2 = format!(
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{id}.scope\n",
            uid.replace('-', "_")
        );
        assert_eq!(pod_of_cgroup(&v2), Some((uid.into(), Some(id.into()))));
        // cgroup v2, cgroupfs driver (K3s's default), a Guaranteed pod (no QoS level).
        let v2fs = format!("0::/kubepods/pod{uid}/{id}\n");
        assert_eq!(pod_of_cgroup(&v2fs), Some((uid.into(), Some(id.into()))));
        // cgroup v1 (JetPack 4/5), cgroupfs, many hierarchies.
        let v1 = format!(
            "12:pids:/kubepods/besteffort/pod{uid}/{id}\n11:memory:/kubepods/besteffort/pod{uid}/{id}\n1:name=systemd:/kubepods/besteffort/pod{uid}/{id}\n"
        );
        assert_eq!(pod_of_cgroup(&v1), Some((uid.into(), Some(id.into()))));
        // The pod's own cgroup (a process in the pause sandbox's parent): pod without container.
        assert_eq!(pod_of_cgroup(&format!("0::/kubepods/burstable/pod{uid}\n")), Some((uid.into(), None)));
        // Outside Kubernetes: a desktop session, a system service.
        assert_eq!(pod_of_cgroup("0::/user.slice/user-1000.slice/session-2.scope\n"), None);
        assert_eq!(pod_of_cgroup("0::/system.slice/nvargus-daemon.service\n"), None);
        assert_eq!(pod_of_cgroup("0::/kubepods.slice/kubepods-burstable.slice\n"), None, "no pod level");
        assert_eq!(pod_of_cgroup(""), None);
    }

    #[test]
    fn processes_are_summed_by_pod_and_one_that_exits_is_left_out() {
        let uid_a = "0b3c9a52-7e43-4a51-9d4b-2f3c1e6a8b90";
        let uid_b = "7d2a9e11-0c4b-4e8f-a1d3-6b5c4a392817";
        let table = NvmapTable {
            processes: vec![
                Process { pid: 10, name: "python3".into(), bytes: 3 << 30 },
                Process { pid: 11, name: "python3".into(), bytes: 1 << 30 },
                Process { pid: 12, name: "trtexec".into(), bytes: 2 << 30 },
                Process { pid: 13, name: "Xorg".into(), bytes: 17 << 20 },
                Process { pid: 14, name: "gone".into(), bytes: 5 << 20 },
                Process { pid: 0, name: "kernel".into(), bytes: 1 << 20 },
            ],
            total_bytes: Some(6 << 30),
            skipped: 1,
        };
        let cgroup = |pid: u32| match pid {
            10 => Ok(format!("0::/kubepods/burstable/pod{uid_a}/aaaaaaaaaaaa1\n")),
            11 => Ok(format!("0::/kubepods/burstable/pod{uid_a}/bbbbbbbbbbbb2\n")),
            12 => Ok(format!("0::/kubepods/pod{uid_b}/cccccccccccc3\n")),
            13 => Ok("0::/user.slice/user-1000.slice/session-2.scope\n".to_string()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        };
        let m = attribute("nvmap", table, cgroup, Some("MemTotal: 8 kB\nNvMapMemUsed:  6291456 kB\n"));
        assert_eq!(m.pods.len(), 2);
        assert_eq!((m.pods[0].uid.as_str(), m.pods[0].bytes, m.pods[0].processes), (uid_a, 4 << 30, 2));
        assert_eq!(
            m.pods[0].containers,
            vec![("aaaaaaaaaaaa1".to_string(), 3 << 30), ("bbbbbbbbbbbb2".to_string(), 1 << 30)]
        );
        assert_eq!((m.pods[1].uid.as_str(), m.pods[1].bytes), (uid_b, 2 << 30));
        assert_eq!(m.outside_bytes, (17 << 20) + (1 << 20), "the desktop and nvmap's kernel client");
        assert_eq!(m.outside[0].name, "Xorg");
        assert_eq!((m.exited, m.skipped_lines), (1, 1));
        assert_eq!(m.nvmap_used_bytes, Some(6 << 30));
    }

    #[test]
    fn an_unreadable_table_says_what_to_mount() {
        let dir = tempfile::tempdir().unwrap();
        let src = Sources { nvmap: dir.path().join("nvmap/iovmm/clients"), proc: dir.path().join("proc") };
        let e = read(&src).err().unwrap_or_default();
        assert!(e.contains("per-pod GPU memory is unknown") && e.contains("/sys/kernel/debug"), "{e}");
        std::fs::create_dir_all(dir.path().join("nvmap/iovmm")).unwrap();
        std::fs::write(&src.nvmap, "<html>").unwrap();
        assert!(read(&src).err().unwrap_or_default().contains("not nvmap's client table"));
    }
}
