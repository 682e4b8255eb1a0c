//! The `gpudash` binary: parse the command line, run, and turn any start-up error into one line
//! and a non-zero exit.

use clap::Parser;
use gpudash::cli::{Cli, Cmd};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Serve(a) => gpudash::startup::serve(*a).await,
        Cmd::Sim(a) => gpudash::startup::sim(a).await,
        Cmd::Fleet(a) => gpudash::startup::fleet(*a).await,
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
