//! GPU memory per process from NVML, where nvmap is not: Jetson Thor (JetPack 7, the
//! `nvidia.ko` stack, whose CUDA allocations bypass nvmap) and discrete GPUs. The maintained
//! binding (`nvml-wrapper`) loads `libnvidia-ml.so` at run time: on a node without the library
//! the reading's error says so, and nothing else changes. Each process's compute and graphics
//! entries over all GPUs are merged by PID (the larger of its two figures, as a process that
//! appears in both lists holds one allocation), then mapped to pods like nvmap's table.

use std::path::Path;

use crate::gpumem::{self, NvmapTable, Process};

/// An initialised NVML.
pub struct Nvml(nvml_wrapper::Nvml);

/// Loads NVML: the system's `libnvidia-ml.so` (`auto`) or the library at `lib`.
pub fn open(lib: &str) -> Result<Nvml, String> {
    let got = if lib == "auto" {
        nvml_wrapper::Nvml::init()
    } else {
        nvml_wrapper::Nvml::builder().lib_path(std::ffi::OsStr::new(lib)).init()
    };
    got.map(Nvml).map_err(|e| {
        let what = if lib == "auto" { "libnvidia-ml.so" } else { lib };
        format!(
            "cannot load NVML ({what}): {e} — per-process GPU memory is unknown; mount the driver's \
             libnvidia-ml.so into the agent (Jetson Thor, discrete GPUs) or use --nvmap on nvgpu Jetsons"
        )
    })
}

/// Every process using a GPU, with the GPU memory NVML says it holds; a process whose figure
/// NVML does not give is counted in `skipped`.
fn table(n: &Nvml, proc_dir: &Path) -> Result<NvmapTable, String> {
    let count = n.0.device_count().map_err(|e| format!("NVML device count: {e}"))?;
    let mut t = NvmapTable::default();
    for i in 0..count {
        let d = n.0.device_by_index(i).map_err(|e| format!("NVML device {i}: {e}"))?;
        let mut list = d.running_compute_processes().map_err(|e| format!("NVML device {i} processes: {e}"))?;
        // Graphics contexts are listed apart; a driver without them answers an error.
        list.extend(d.running_graphics_processes().unwrap_or_default());
        for p in list {
            let nvml_wrapper::enums::device::UsedGpuMemory::Used(bytes) = p.used_gpu_memory else {
                t.skipped += 1;
                continue;
            };
            match t.processes.iter_mut().find(|q| q.pid == p.pid) {
                Some(q) => q.bytes = q.bytes.max(bytes),
                None => {
                    let comm =
                        gpumem::read_capped(&proc_dir.join(p.pid.to_string()).join("comm"), 64).unwrap_or_default();
                    t.processes.push(Process { pid: p.pid, name: comm.trim().to_string(), bytes });
                }
            }
        }
    }
    t.total_bytes = Some(t.processes.iter().map(|p| p.bytes).sum());
    Ok(t)
}

/// GPU memory by pod from NVML, processes mapped by their cgroup under `proc_dir`.
pub fn read(n: &Nvml, proc_dir: &Path) -> Result<gpumem::GpuMemory, String> {
    let t = table(n, proc_dir)?;
    let cgroup_of = |pid: u32| gpumem::read_capped(&proc_dir.join(pid.to_string()).join("cgroup"), 64 << 10);
    Ok(gpumem::attribute("nvml", t, cgroup_of, None))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_node_without_the_library_is_told_what_to_mount() {
        // This machine has no NVIDIA driver: the binding's own loader fails, and says so.
        let e = super::open("/nonexistent/libnvidia-ml.so.1").err().unwrap_or_default();
        assert!(e.contains("cannot load NVML (/nonexistent/libnvidia-ml.so.1)") && e.contains("unknown"), "{e}");
        if std::path::Path::new("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").exists() {
            return;
        }
        let e = super::open("auto").err().unwrap_or_default();
        assert!(e.contains("libnvidia-ml.so"), "{e}");
    }
}
