#!/usr/bin/env bash
# Runs every gpudash test: installs what is missing, builds the browser bundle and the binary,
# then tests each package (never `cargo test --workspace`: it would build `app` with the ssr and
# hydrate features together).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/setup.sh

ensure_rust
ensure_test_tools
build_site
say "building gpudash"
cargo build -p gpudash
say "unit tests: simulator"
cargo test -p gpudash-sim
say "unit tests: views and view model"
cargo test -p app --features ssr
say "unit tests: server (quantities, derivation, scheduler messages, database)"
cargo test -p gpudash
say "end-to-end: kubectl, Python client, kube-rs watcher, gpudash serve, headless Chromium"
cargo test -p gpudash-tests
say "all tests passed"
