#!/usr/bin/env bash
# images.sh — the container images a test cluster runs that are not Portcullis's own, built
# here (nothing is pulled from a registry) and written as docker-archive files that start.sh
# imports into containerd under the names manifests use:
#   registry.k8s.io/pause:3.10.2     the pod sandbox: kubernetes' own build/pause/linux/pause.c
#                                    (from the k8s.io/kubernetes module), linked statically
#   registry.k8s.io/gateway-api/echo-basic:{v1.5.1,v1.6.0-dev.2,v1.6.0-dev.3}
#                                    the conformance suite's HTTP/gRPC echo backend, built from
#                                    the suite's own module version (conformance/go.mod), packed
#                                    like its Dockerfile (static binary, user 65532, /echo-basic)
#   registry.k8s.io/coredns/coredns:v1.12.2
#                                    coredns (scripts/k8s-node/build.sh), like its Dockerfile
# The three echo-basic tags the suite's manifests name are one build of the suite's version:
# registry.k8s.io's own images of those tags are older builds of the same program.
# Archives and stamps go to $NODE_TOOLS/images (default ~/.cache/portcullis-k8s-node/images).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
NODE_TOOLS=${NODE_TOOLS:-$HOME/.cache/portcullis-k8s-node}
K8S_VERSION=${K8S_VERSION:-v1.37.2}
OUT=$NODE_TOOLS/images
BUILDAH=(buildah --storage-driver vfs)
mkdir -p "$OUT"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
GOV=$(go env GOVERSION)
log() { printf '[k8s-node/images.sh] %s\n' "$*" >&2; }

# pack FILE KEY USER ENTRYPOINT NAME... : an image of the files under $ctx, written as one
# docker-archive per NAME (FILE, FILE-2.tar, ...: ctr import names an image after its archive's
# RepoTags, and buildah writes one tag per archive)
pack() {
  local file=$1 key=$2 user=$3 entry=$4; shift 4
  local c i=1 n f
  c=$("${BUILDAH[@]}" from scratch)
  "${BUILDAH[@]}" copy --quiet "$c" "$ctx/" / >/dev/null
  "${BUILDAH[@]}" config --entrypoint "$entry" --cmd '' --user "$user" --workingdir / "$c"
  "${BUILDAH[@]}" commit --quiet --rm "$c" "$1" >/dev/null
  rm -f "${file%.tar}"*.tar
  for n in "$@"; do
    f=$file; [[ $i == 1 ]] || f=${file%.tar}-$i.tar
    "${BUILDAH[@]}" push --quiet "$1" "docker-archive:$f:$n" >/dev/null
    i=$((i + 1))
  done
  "${BUILDAH[@]}" rmi "$1" >/dev/null
  printf '%s' "$key" >"$file.stamp"
  log "$(basename "$file"): $*"
}
fresh() { [[ -s $1 && -f $1.stamp && "$(cat "$1.stamp")" == "$2" ]]; }
base_files() { # base_files DIR: /etc/passwd and /etc/group with nonroot, /tmp (as distroless has)
  mkdir -p "$1/etc" "$1/tmp"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$1/etc/group"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------- pause
PAUSE=registry.k8s.io/pause:3.10.2
key="pause $K8S_VERSION $(gcc -dumpversion)"
if ! fresh "$OUT/pause.tar" "$key"; then
  t0=$(date +%s)
  json=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION")
  dir=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  ctx=$work/pause; mkdir -p "$ctx"
  # as build/pause/Makefile compiles it
  gcc -Os -Wall -Werror -static -DVERSION=v3.10.2-portcullis -o "$ctx/pause" "$dir/build/pause/linux/pause.c"
  pack "$OUT/pause.tar" "$key" 65535:65535 '["/pause"]' "$PAUSE"
  log "pause image in $(( $(date +%s) - t0 ))s"
else
  log "pause image up to date"
fi

# ---------------------------------------------------------------- echo-basic
ECHO_TAGS=(v1.5.1 v1.6.0-dev.2 v1.6.0-dev.3)
CONF_VERSION=$(sed -n 's/^require sigs.k8s.io\/gateway-api\/conformance \(v[^ ]*\)$/\1/p' conformance/go.mod)
key="echo-basic $CONF_VERSION $GOV ${ECHO_TAGS[*]}"
if ! fresh "$OUT/echo-basic.tar" "$key"; then
  t0=$(date +%s)
  ctx=$work/echo; mkdir -p "$ctx"; base_files "$ctx"
  # as its Dockerfile builds it
  (cd conformance && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags="-buildid= -s -w" \
    -o "$ctx/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic)
  names=(); for t in "${ECHO_TAGS[@]}"; do names+=("registry.k8s.io/gateway-api/echo-basic:$t"); done
  pack "$OUT/echo-basic.tar" "$key" 65532:65532 '["/echo-basic"]' "${names[@]}"
  printf '%s\t%s\t%ss\t%s\t%s\n' echo-basic-image "$key" "$(( $(date +%s) - t0 ))" "$(date -u +%FT%TZ)" "$GOV" >>"$NODE_TOOLS/build-times.txt"
  log "echo-basic image in $(( $(date +%s) - t0 ))s"
else
  log "echo-basic image up to date"
fi

# ---------------------------------------------------------------- coredns
COREDNS=registry.k8s.io/coredns/coredns:v1.12.2
key="coredns $(cat "$NODE_TOOLS/bin/coredns.stamp" 2>/dev/null)"
if ! fresh "$OUT/coredns.tar" "$key"; then
  [[ -x $NODE_TOOLS/bin/coredns ]] || bash "$REPO/scripts/k8s-node/build.sh" coredns
  key="coredns $(cat "$NODE_TOOLS/bin/coredns.stamp")"
  ctx=$work/coredns; mkdir -p "$ctx"; base_files "$ctx"
  cp "$NODE_TOOLS/bin/coredns" "$ctx/coredns"
  t0=$(date +%s)
  pack "$OUT/coredns.tar" "$key" 65532:65532 '["/coredns"]' "$COREDNS"
  log "coredns image in $(( $(date +%s) - t0 ))s"
else
  log "coredns image up to date"
fi
"${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true
ls -l "$OUT"/*.tar >&2
