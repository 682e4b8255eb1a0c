#!/usr/bin/env bash
# The real Kubernetes control plane the tests run against, built from Go modules:
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from k8s.io/kubernetes
# (tests/control-plane/go.mod, which replaces each staging module with its published release),
# kine (K3s's etcd shim, SQLite backend) and kwok (plays the kubelets); for the real node, the
# kubelet from the same module, and from tests/control-plane/cmd/ gpudash-device-plugin (the
# kubelet's device-plugin API, NVIDIA's device IDs and sharing config), gpudash-workload (the
# pause and model images' one static binary) and gpudash-node-images (writes them as one
# tarball containerd imports: images.tar beside the binaries).
#
#   scripts/control-plane.sh build    build what is missing, print the bin directory
#   scripts/control-plane.sh bin      print the bin directory (fails when not built)
#
# Each set is built once per machine into ~/.cache/gpudash/control-plane/<key>/ (key: the three
# versions and the wrapper's go.sum), then copied to target/control-plane/bin/; Go's module and
# build caches (outside the work tree) make a rebuild after a change cheap. GPUDASH_CONTROL_PLANE_CACHE
# moves the machine cache.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

wrapper=tests/control-plane
k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2 }' "$wrapper/go.mod")
[ -n "$k8s_version" ] || { echo "no k8s.io/kubernetes version in $wrapper/go.mod" >&2; exit 1; }
kine_version=v0.17.5
kwok_version=v0.8.0
# The Prometheus Operator's CRDs (PrometheusRule, ServiceMonitor), so that the chart's alerting
# objects meet the real API server's schema: from the operator's module on the Go module proxy
# (v0.85.0 is the newest version of the root module it serves; the files are in its example/).
prometheus_operator_version=v0.85.0
crds=target/control-plane/crds
key="k8s-${k8s_version}_kine-${kine_version}_kwok-${kwok_version}_$(cat "$wrapper/go.sum" "$wrapper"/cmd/*/*.go | sha256sum | cut -c1-12)"
cache="${GPUDASH_CONTROL_PLANE_CACHE:-$HOME/.cache/gpudash/control-plane}/$key"
out=target/control-plane/bin
binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl kine kwok kubelet
  gpudash-device-plugin gpudash-workload gpudash-node-images)
# Everything the build leaves: the binaries (executable) and the node's image tarball.
present() {
  local d=$1 b
  for b in "${binaries[@]}"; do [ -x "$d/$b" ] || { echo "$b"; return 1; }; done
  [ -f "$d/images.tar" ] || { echo images.tar; return 1; }
}

complete() {
  present "$1" >/dev/null && [ "$(cat "$1/KEY" 2>/dev/null)" = "$key" ]
}

fail() {
  # $1: what was being built, $2: its log
  echo "control-plane build failed: $1" >&2
  tail -n 30 "$2" >&2
  cat >&2 <<EOF

What to try: the Go module proxy must serve that module at that version, and the machine's Go
($(go version 2>/dev/null || echo "no go on PATH")) must be at least what its go.mod asks. For
k8s.io/kubernetes, change the version in $wrapper/go.mod (require and every replace: the
staging modules are published as v0.X.Y of release v1.X.Y), then run 'go mod tidy' in $wrapper.
Full log: $2
EOF
  exit 1
}

build() {
  command -v go >/dev/null || { echo "control-plane build needs Go (1.26): none on PATH" >&2; exit 1; }
  if ! complete "$cache"; then
    local tmp log start stamp minor
    tmp="$cache.partial.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    log=$(mktemp)
    start=$(date +%s)
    minor=$(echo "$k8s_version" | cut -d. -f2)
    stamp="-X k8s.io/component-base/version.gitVersion=$k8s_version"
    stamp+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
    stamp+=" -X k8s.io/component-base/version.gitTreeState=clean"
    stamp+=" -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version"
    say "building kube-apiserver, kube-controller-manager, kube-scheduler and kubectl $k8s_version (k8s.io/kubernetes; cold: about 16 minutes on 2 cores, once per machine)"
    (cd "$wrapper" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $stamp" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl) >"$log" 2>&1 \
      || fail "k8s.io/kubernetes $k8s_version (module $wrapper)" "$log"
    say "building the kubelet $k8s_version and the real node's device plugin and images"
    (cd "$wrapper" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $stamp" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kubelet ./cmd/gpudash-device-plugin ./cmd/gpudash-workload \
      ./cmd/gpudash-node-images) >"$log" 2>&1 \
      || fail "the kubelet $k8s_version and tests/control-plane/cmd (module $wrapper)" "$log"
    "$tmp/gpudash-node-images" --workload "$tmp/gpudash-workload" --plugin "$tmp/gpudash-device-plugin" --out "$tmp/images.tar" >"$log" 2>&1 \
      || fail "the real node's images" "$log"
    say "building kine $kine_version (github.com/k3s-io/kine, SQLite through cgo)"
    GOBIN="$tmp" CGO_ENABLED=1 go install -trimpath \
      -tags "sqlite_unlock_notify,sqlite_stat4,sqlite_math_functions" \
      -ldflags "-s -w -X github.com/k3s-io/kine/pkg/version.Version=$kine_version" \
      "github.com/k3s-io/kine@$kine_version" >"$log" 2>&1 \
      || fail "github.com/k3s-io/kine $kine_version" "$log"
    say "building kwok $kwok_version (sigs.k8s.io/kwok/cmd/kwok)"
    GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
      "sigs.k8s.io/kwok/cmd/kwok@$kwok_version" >"$log" 2>&1 \
      || fail "sigs.k8s.io/kwok $kwok_version" "$log"
    missing=$(present "$tmp") || fail "$missing: not where the build was to put it ($tmp)" "$log"
    echo "$key" >"$tmp/KEY"
    echo "$(($(date +%s) - start))" >"$tmp/BUILD_SECONDS"
    rm -rf "$cache"
    mv "$tmp" "$cache"
    # Builds of other keys (~0.5 GB each): the newest other one stays (a branch switched back).
    ls -dt "$(dirname "$cache")"/k8s-* 2>/dev/null | tail -n +3 | while read -r old; do rm -rf "$old"; done
    rm -f "$log"
    say "control plane built in $(cat "$cache/BUILD_SECONDS") s: $cache"
  fi
  if ! complete "$out"; then
    rm -rf "$out"
    mkdir -p "$out"
    cp -p "$cache"/* "$out"/
  fi
  fetch_crds
  say "control plane: $("$out/kube-apiserver" --version), kine $kine_version, kwok $kwok_version in $out"
  echo "$PWD/$out"
}

fetch_crds() {
  local want=(monitoring.coreos.com_prometheusrules.yaml monitoring.coreos.com_servicemonitors.yaml) f dir tmp
  if [ "$(cat "$crds/VERSION" 2>/dev/null)" = "$prometheus_operator_version" ]; then return 0; fi
  tmp=$(mktemp -d)
  # Outside any module: a plain download into Go's module cache, nothing built.
  dir=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json \
    "github.com/prometheus-operator/prometheus-operator@$prometheus_operator_version" 2>&1 \
    | awk -F'"' '$2 == "Dir" { print $4 }')
  rm -rf "$tmp"
  if [ -z "$dir" ]; then
    say "warning: github.com/prometheus-operator/prometheus-operator $prometheus_operator_version not served: the chart's PrometheusRule and ServiceMonitor are not dry-run on the real API server"
    return 0
  fi
  rm -rf "$crds"
  mkdir -p "$crds"
  for f in "${want[@]}"; do cp "$dir/example/prometheus-operator-crd/$f" "$crds/"; done
  chmod u+w "$crds"/*
  echo "$prometheus_operator_version" >"$crds/VERSION"
  say "Prometheus Operator CRDs $prometheus_operator_version in $crds"
}

case "${1:-}" in
  build) build ;;
  bin) complete "$out" || { echo "control plane not built: run scripts/control-plane.sh build" >&2; exit 1; }; echo "$PWD/$out" ;;
  *) echo "usage: $0 build|bin" >&2; exit 2 ;;
esac
