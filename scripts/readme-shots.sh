#!/usr/bin/env bash
# Refreshes the README's screenshots (docs/screenshots/) from the ones the test suite takes of
# the built-in demo (tests/tests/agent.rs writes screenshots/tour-*.png and jetson-gpu-memory-*.png).
# Run after ./test.sh (or `cargo test -p gpudash-tests --test agent`), then commit the images.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/screenshots
for f in tour-overview tour-dra-node tour-quotas tour-pending tour-diagnoses jetson-gpu-memory-en jetson-gpu-memory-ja timezone-tokyo-overview; do
  if [ -f "screenshots/$f.png" ]; then cp "screenshots/$f.png" "docs/screenshots/$f.png"; else echo "missing screenshots/$f.png: run the tests first" >&2; exit 1; fi
done
echo "docs/screenshots refreshed"
