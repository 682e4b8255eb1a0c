#!/usr/bin/env bash
# Formatting and clippy for both feature sets (server `ssr`, browser `hydrate`), warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy -p gpudash-core -p gpudash-web -p gpudash-fleet -p gpudash -p gpudash-agent -p gpudash-sim -p gpudash-tests -p gpudash-bench -p xtask -p gpudash-model -p app -p kubectl-gpudash --all-targets -- -D warnings
cargo clippy -p frontend -p gpudash-model -p app --target wasm32-unknown-unknown -- -D warnings
# The views only render: no arithmetic, quantity comparisons, length decisions, joins,
# slicing or parsing in app/src/views (a parser walks them, view! macros included).
cargo xtask views-lint
