#!/usr/bin/env bash
# Runs gpudash: against the cluster of the current kubeconfig when there is one, otherwise in
# demo mode with the built-in simulated K3s edge cluster. The first log line says which.
# Extra arguments go to `gpudash serve` (e.g. ./run.sh --listen 0.0.0.0:8080).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/setup.sh

ensure_rust
build_site
say "building gpudash (release)"
cargo build --release -p gpudash
say "starting: open http://${GPUDASH_LISTEN:-127.0.0.1:8080}/"
exec target/release/gpudash serve --demo-if-no-cluster --site-root target/site "$@"
