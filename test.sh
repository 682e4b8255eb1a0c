#!/usr/bin/env bash
# Runs every gpudash test: installs what is missing, builds the browser bundle and the binary,
# then tests each package (never `cargo test --workspace`: it would build `app` with the ssr and
# hydrate features together).
set -euo pipefail
cd "$(dirname "$0")"
. scripts/setup.sh

ensure_rust
ensure_test_tools
ensure_mcp_client
ensure_arm64
ensure_control_plane
ensure_oidc_provider
ensure_real_node
# The same package set as the test run below, so that dependencies are built once with one
# feature set and the end-to-end tests find target/debug/gpudash.
packages=(-p gpudash-sim -p gpudash-model -p app -p gpudash-core -p gpudash-web -p gpudash-fleet -p gpudash -p gpudash-agent -p kubectl-gpudash -p gpudash-tests)
say "building gpudash"
build_site_beside "${packages[@]}"
# gpudash and the agent for Jetson (arm64), debug like the rest; the arm64 smoke test runs them
# under qemu-user. Reused from target/ on the next run like every other build.
say "building gpudash and gpudash-agent for aarch64-unknown-linux-gnu"
cargo build --target aarch64-unknown-linux-gnu -p gpudash -p gpudash-agent
export GPUDASH_ARM64_SMOKE=1
# One cargo invocation for every package, so that features unify once (app gets `ssr` from the
# server) and nothing is built twice.
say "tests: simulator, view model and views, server (quantities, derivation, scheduler messages,"
say "database), end-to-end (kubectl, Python client, kube-rs watcher, gpudash serve, headless Chromium,"
say "a real control plane: kine, kube-apiserver, controller-manager, scheduler, kwok)"
# The soak tests (stream clients, kiosk browser) run for several minutes in the full run.
export GPUDASH_SOAK_SECONDS="${GPUDASH_SOAK_SECONDS:-180}"
log=$(mktemp)
set +e
# The views lint and its own tests (a planted `a * 100 / b` must be found), in their own
# invocation: xtask's dependencies stay out of the feature set of the packages below.
say "views lint: the views only render"
cargo test -p xtask 2>&1 | tee "$log"
lint_status=${PIPESTATUS[0]}
cargo xtask views-lint 2>&1 | tee -a "$log"
views_status=${PIPESTATUS[0]}
cargo test "${packages[@]}" 2>&1 | tee -a "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] && status=$lint_status
[ "$status" -eq 0 ] && status=$views_status
set -e
read -r passed failed < <(awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } } END { print p + 0, f + 0 }' "$log")
rm -f "$log"
echo "tests: ${passed} passed, ${failed} failed"
exit "$status"
