#!/usr/bin/env bash
# Builds the upstream endpoint pickers of the Gateway API Inference Extension from the Go module
# proxy, for e2e/inference/upstream-epp.test.ts (a test tool, never shipped):
#   lwepp  sigs.k8s.io/gateway-api-inference-extension/cmd/lwepp @ v1.6.0 (the lightweight
#          reference picker: round robin, the conformance steering header, the served-endpoint
#          report in the response phase)
#   epp    sigs.k8s.io/gateway-api-inference-extension/cmd/epp   @ v1.5.0 (the full picker: queue,
#          KV-cache and prefix scorers over the pods' vLLM /metrics; v1.6.0 moved it out of the module)
# `go install pkg@version` is refused here (it asks the proxy for the module's version list to
# look for a deprecation, and the proxy answers 403 for that list), so each is built from a tiny
# wrapper module that requires the exact version, as ../shared/tools/k8s/build.sh does for
# kube-apiserver. Cached under ~/.cache/portcullis-epp (a stamp per binary: name, version, Go);
# nothing fetched enters the repository.
# Usage: build-epp.sh [lwepp|epp|all]   (default: all). Prints the bin directory last.
set -euo pipefail

EPP_TOOLS=${EPP_TOOLS:-$HOME/.cache/portcullis-epp}
LWEPP_VERSION=${LWEPP_VERSION:-v1.6.0}
EPP_VERSION=${EPP_VERSION:-v1.5.0}
NICE=${NICE:-nice -n 10}
BIN=$EPP_TOOLS/bin
SRC=$EPP_TOOLS/src
TIMES=$EPP_TOOLS/build-times.txt
mkdir -p "$BIN" "$SRC"

command -v go >/dev/null || { echo "build-epp.sh: go not found on PATH" >&2; exit 1; }
export CGO_ENABLED=0
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
GOV=$(go env GOVERSION)

log() { printf '[build-epp.sh] %s\n' "$*" >&2; }

# build NAME VERSION PACKAGE
build() {
  local name=$1 version=$2 pkg=$3
  local key="$name $version $GOV"
  if [[ -x $BIN/$name && -f $BIN/.$name.stamp && "$(cat "$BIN/.$name.stamp")" == "$key" ]]; then
    log "$name $version up to date"
    return
  fi
  local d=$SRC/$name
  mkdir -p "$d"
  cat >"$d/go.mod" <<EOF
module portcullis.test/$name-build

go 1.26.0

require sigs.k8s.io/gateway-api-inference-extension $version

tool $pkg
EOF
  rm -f "$d/go.sum"
  local t0 t1
  t0=$(date +%s)
  (cd "$d" && go mod tidy && $NICE go build -trimpath -ldflags "-s -w" -o "$BIN/$name" "$pkg")
  t1=$(date +%s)
  printf '%s\t%s\t%ss\t%s\t%s\n' "$name" "$version" "$((t1 - t0))" "$(date -u +%FT%TZ)" "$GOV" >>"$TIMES"
  log "$name $version built in $((t1 - t0))s"
  printf '%s' "$key" >"$BIN/.$name.stamp"
}

what=${1:-all}
case $what in
  lwepp) build lwepp "$LWEPP_VERSION" sigs.k8s.io/gateway-api-inference-extension/cmd/lwepp ;;
  epp) build epp "$EPP_VERSION" sigs.k8s.io/gateway-api-inference-extension/cmd/epp ;;
  all)
    build lwepp "$LWEPP_VERSION" sigs.k8s.io/gateway-api-inference-extension/cmd/lwepp
    build epp "$EPP_VERSION" sigs.k8s.io/gateway-api-inference-extension/cmd/epp
    ;;
  *) echo "usage: build-epp.sh [lwepp|epp|all]" >&2; exit 2 ;;
esac
echo "$BIN"
