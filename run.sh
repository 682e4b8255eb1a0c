#!/usr/bin/env bash
# Runs gpudash: against the cluster of the current kubeconfig when there is one, otherwise in
# demo mode with the built-in simulated K3s edge cluster. The first log line says which.
# Extra arguments go to `gpudash serve` (e.g. ./run.sh --listen 0.0.0.0:8080).
#
# ./run.sh --local-cluster [args…]: a real control plane (kube-apiserver, controller-manager,
# scheduler on kine/SQLite, kwok as the kubelets; built from Go modules once) shaped like the
# demo cluster, and gpudash against it; its kubeconfig is target/control-plane/kubeconfig. As
# root with containerd, runc and the CNI plugins (installed here when missing), one real node
# joins: a real kubelet with the device plugin and gpudash-agent (--no-real-node: kwok only).
#
# gpudash and the agent are built as the tests build them (the dev profile: no optimisation,
# ~4 min from nothing on 2 cores, shared with ./test.sh); pages render in ~10 ms instead of
# ~2, which a demo does not notice. ./run.sh --release [args…] builds the release profile
# (thin LTO, ~12 min from nothing) — what images and the benchmark use.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/setup.sh

profile=(); bin=target/debug
if [ "${1:-}" = "--release" ]; then shift; profile=(--release); bin=target/release; fi
started=$(date +%s)
ensure_rust
say "building gpudash and gpudash-agent (${bin#target/}; the demo runs a real agent per GPU node)"
build_site_beside "${profile[@]}" -p gpudash -p gpudash-agent
say "built in $(( $(date +%s) - started )) s"
if [ "${1:-}" = "--local-cluster" ]; then
  shift
  ensure_control_plane
  ensure_real_node || say "containerd, runc or the CNI plugins could not be installed: no real node"
  say "building the local-cluster runner"
  cargo build -q -p gpudash-tests --bin gpudash-local-cluster
  ours=()
  if [ "${1:-}" = "--no-real-node" ]; then ours+=(--no-real-node); shift; fi
  exec target/debug/gpudash-local-cluster "$bin/gpudash" "${ours[@]}" -- "$@"
fi
say "starting: open http://${GPUDASH_LISTEN:-127.0.0.1:8080}/"
exec "$bin/gpudash" serve --demo-if-no-cluster --site-root target/site "$@"
