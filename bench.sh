#!/usr/bin/env bash
# The benchmark: builds release, then runs gpudash-bench (see docs/benchmarks.md for the method).
#   ./bench.sh                          # demo, 100 and 1000 nodes; 1 and 200 clients; 200 changes/s
#   ./bench.sh --sizes demo --clients 1 --seconds 10
#   ./bench.sh --peer …                 # also installs and runs kubectl-view-allocations
#   ./bench.sh --agent 60               # the node agent's RSS and CPU at 1 s sampling, binary sizes
#   ./bench.sh --real                   # on a real control plane (kine, kube-apiserver, scheduler,
#                                       # controller-manager, kwok): 100 and 1000 nodes, 20 changes/s
#   ./bench.sh --real-hold 600 --sizes 1000  # that plane with the generated cluster, held 600 s
#                                       # for experiments by hand (prints its kubeconfig)
#   ./bench.sh --fleet 100              # gpudash fleet over 100 sites × 10 nodes under churn (PostgreSQL)
#   ./bench.sh --fleet 100 --big 10     # … and 10 sites of 1,000 nodes (--big-nodes) beside them
#   ./bench.sh --hostile-lists 30       # 10,000 Pending pods, 90 days of history, 20 readers each of
#                                       # /pending, /diagnoses, the reports page and API (#58's probe)
set -euo pipefail
cd "$(dirname "$0")"
. scripts/setup.sh
ensure_rust
if [[ " $* " == *" --peer "* ]] && [ ! -x target/peer/bin/kubectl-view-allocations ]; then
  say "installing kubectl-view-allocations (the peer) from the Rust crate registry into target/peer"
  cargo install --locked --root target/peer kubectl-view-allocations
fi
if [[ " $* " == *" --real"* ]]; then ensure_control_plane; fi
args=()
for a in "$@"; do [ "$a" = "--peer" ] || args+=("$a"); done
build_site
say "building release binaries"
cargo build --release -p gpudash -p gpudash-bench -p gpudash-agent
if [[ " $* " == *" --agent "* ]]; then
  # Sizes on the boards they run on: arm64 (Jetson), cross-compiled.
  ensure_arm64
  cargo build --release --target aarch64-unknown-linux-gnu -p gpudash -p gpudash-agent
fi
exec target/release/gpudash-bench "${args[@]}"
