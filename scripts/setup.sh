#!/usr/bin/env bash
# Installs what gpudash needs to build and test on Debian 12 with rustup, skipping what is there.
# Sourced by run.sh and test.sh. Needs root (or sudo) only when a Debian package is missing.
set -euo pipefail

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $*" >&2; return 1; fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    as_root apt-get update -qq
    apt_updated=1
  fi
  say "apt-get install $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ensure_rust() {
  command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup first (https://rustup.rs)" >&2; exit 1; }
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
}

ensure_test_tools() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
  /usr/bin/python3 -c "import kubernetes" 2>/dev/null || missing+=(python3-kubernetes)
  /usr/bin/python3 -c "import prometheus_client" 2>/dev/null || missing+=(python3-prometheus-client)
  # The image's kubectl is newer than Debian's: install Debian's only where none exists.
  command -v kubectl >/dev/null || missing+=(kubernetes-client)
  command -v curl >/dev/null || missing+=(curl)
  # The real control plane's service-account key is made with openssl.
  command -v openssl >/dev/null || missing+=(openssl)
  # The fleet tests start a throwaway PostgreSQL cluster (initdb/pg_ctl in a temp directory).
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  # A Japanese face, so the Japanese screenshots show text rather than empty boxes (a kiosk's
  # own browser brings its fonts).
  [ -e /usr/share/fonts/opentype/ipafont-gothic/ipag.ttf ] || missing+=(fonts-ipafont-gothic)
  # The alerting rules are unit-tested with promtool and run end to end through a real Prometheus
  # and Alertmanager (the tests start their own, on 127.0.0.1; the packages' services are not used).
  command -v promtool >/dev/null || missing+=(prometheus)
  command -v prometheus-alertmanager >/dev/null || missing+=(prometheus-alertmanager)
  if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; else say "chromium, chromedriver, python3-kubernetes, kubectl, postgresql, Japanese font, Prometheus, Alertmanager: present"; fi
}

ensure_mcp_client() {
  # The official MCP Python SDK, the client `gpudash mcp` is tested with (tests/tests/mcp.rs):
  # PyPI's `mcp`, pinned, in a virtual environment of Debian's python3 under target/.
  local venv=target/mcp-venv
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import importlib.metadata as m; assert m.version("mcp") == "2.3.0"' 2>/dev/null; then
    say "the MCP Python SDK: present"; return
  fi
  /usr/bin/python3 -c "import ensurepip" 2>/dev/null || apt_install python3-venv
  say "installing the MCP Python SDK (mcp 2.3.0 from PyPI) into $venv"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "mcp==2.3.0"
}

ensure_arm64() {
  # The Jetson build: Debian's cross gcc links it (.cargo/config.toml names the linker) and
  # qemu-user runs it in the arm64 smoke test.
  local missing=()
  command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
  command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
  if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; else say "arm64 cross gcc and qemu-user: present"; fi
  if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    say "rustup target add aarch64-unknown-linux-gnu"
    rustup target add aarch64-unknown-linux-gnu
  fi
}

ensure_wasm_opt() {
  # wasm-opt from npm's binaryen (Debian's binaryen 108 breaks hydration) and terser (minifies
  # wasm-bindgen's JS glue): optional, shrink the browser bundle by about two thirds.
  if [ -x node_modules/.bin/wasm-opt ] && [ -x node_modules/.bin/terser ]; then return; fi
  if command -v npm >/dev/null; then
    say "npm ci (binaryen's wasm-opt and terser for the browser bundle)"
    npm ci --no-audit --no-fund --loglevel=error || say "npm ci failed: building without wasm-opt"
  else
    say "npm not found: building the browser bundle without wasm-opt"
  fi
}

build_site() {
  ensure_wasm_opt
  say "building the browser bundle (cargo xtask site)"
  cargo xtask site
}

# build_site_beside ARGS…: the browser bundle and `cargo build ARGS…` at once. Their serial
# phases (the bundles' LTO links, wasm-opt, the compressors; the binaries' links) overlap the
# other's parallel compiling: a fresh machine's first ./run.sh took 372 s one after the other.
# They lock different build directories (the bundle's are target/wasm-release and its wasm32
# folder); xtask itself is built first, in the dev profile the other build uses.
build_site_beside() {
  ensure_wasm_opt
  cargo build -q -p xtask
  say "building the browser bundle (cargo xtask site, log: target/site-build.log) and: cargo build $*"
  mkdir -p target
  cargo xtask site > target/site-build.log 2>&1 &
  local site=$!
  local rc=0
  cargo build "$@" || rc=$?
  if ! wait "$site"; then
    tail -n 40 target/site-build.log >&2
    echo "the browser bundle did not build (target/site-build.log)" >&2
    return 1
  fi
  grep '^xtask: .*gzip' target/site-build.log >&2 || true
  return "$rc"
}

ensure_real_node() {
  # The real node beside kwok (tests/src/real_node.rs): the kubelet runs pods through Debian's
  # containerd and runc, attached by the CNI bridge plugin. Nothing is started here (the packages
  # start no service without systemd; the tests start and stop their own containerd).
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v ip >/dev/null || missing+=(iproute2)
  if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; else say "containerd, runc, CNI plugins: present"; fi
}

ensure_oidc_provider() {
  # The OpenID Provider the sign-in tests run against (tests/oidc-provider: zitadel/oidc's
  # example provider), built from the Go module proxy into target/oidc-provider, again only
  # when its sources change.
  local dir=target/oidc-provider key
  key=$(cat tests/oidc-provider/go.mod tests/oidc-provider/go.sum tests/oidc-provider/main.go | sha256sum | cut -c1-12)
  if [ -x "$dir/bin/gpudash-oidc-provider" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then
    say "OIDC provider of the sign-in tests: built"
    return
  fi
  command -v go >/dev/null || { echo "the OIDC provider needs Go (1.26): none on PATH" >&2; return 1; }
  say "building the OIDC provider of the sign-in tests (zitadel/oidc, from the Go module proxy)"
  mkdir -p "$dir/bin"
  (cd tests/oidc-provider && CGO_ENABLED=0 go build -trimpath -o "../../$dir/bin/gpudash-oidc-provider" .)
  echo "$key" >"$dir/key"
}

ensure_control_plane() {
  # kube-apiserver, controller-manager, scheduler, kubectl, kine and kwok, built from Go modules
  # once per machine (scripts/control-plane.sh; a cold build is long, a cached one instant).
  scripts/control-plane.sh build >/dev/null
}
