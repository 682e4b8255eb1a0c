//! The `gpudash` binary: parse the command line, run, and turn any start-up error into one line
//! and a non-zero exit.

use clap::Parser;
use gpudash::cli::{Cli, Cmd};

/// glibc's malloc settings gpudash runs with (see [`tune_malloc`]).
const MALLOC_TUNABLES: &str =
    "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=262144:glibc.malloc.trim_threshold=1048576:glibc.malloc.hugetlb=1";

/// Starts gpudash again, as the same process, with glibc's malloc tuned — unless the
/// environment already sets `GLIBC_TUNABLES` (an operator's choice is kept). glibc reads the
/// tunables only at process start, and setting them in code needs `mallopt` (unsafe code), so
/// the binary re-executes itself once. Why: by default glibc gives each thread its own arena
/// (up to 8 a core) and raises its mmap threshold after the first large free, so the megabytes
/// of a full view's JSON and of each revision's buffers stayed in the heap; at 1,000 nodes
/// under churn that was 30–60 MiB of RSS over the live heap (docs/benchmarks.md, "Memory").
/// Two arenas, buffers over 256 KiB mapped (returned on free) and the heap trimmed above 1 MiB.
/// And transparent huge pages asked for the heap (`hugetlb=1`: `madvise`; nothing changes where
/// the kernel's THP is `never`): the first list fills ~130 MiB of new memory, and faulting it
/// in 4 KiB pages was 3–6 % of gpudash's CPU to its first view. By hand at 1,000 nodes, in
/// turn: median 0.366 → 0.327 s to `/readyz`, CPU 0.46 → 0.40 s; churn RSS unchanged within
/// the runs' spread (docs/benchmarks.md, twenty-fifth round).
/// An arm64 binary run by qemu-user without binfmt_misc cannot execute itself (the host kernel
/// refuses it and glibc hands it to `/bin/sh`): there, set `GLIBC_TUNABLES` (the tests do).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("GLIBC_TUNABLES").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    // `exec` returns only when it failed; then gpudash runs untuned.
    let e =
        std::process::Command::new(exe).args(std::env::args_os().skip(1)).env("GLIBC_TUNABLES", MALLOC_TUNABLES).exec();
    eprintln!("gpudash: note: running with glibc's default malloc settings ({e})");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

fn main() -> std::process::ExitCode {
    tune_malloc();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt.block_on(run()),
        Err(e) => {
            eprintln!("gpudash: error: cannot start the async runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Serve(a) => gpudash::startup::serve(*a).await,
        Cmd::Sim(a) => gpudash::startup::sim(a).await,
        Cmd::Fleet(a) => gpudash::startup::fleet(*a).await,
        Cmd::Mcp(a) => gpudash::mcp::run(a).await,
        Cmd::SimTegrastats(a) => gpudash_sim::kubelet::tegrastats::replay(
            &a.board,
            std::time::Duration::from_millis(a.interval.clamp(10, 60_000)),
            a.count,
            a.work,
        )
        .map_err(|e| anyhow::anyhow!(e)),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpudash: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
