#!/usr/bin/env bash
# build.sh — build what a single-node Kubernetes cluster needs beyond the control plane of
# ../shared/tools/k8s (etcd, kube-apiserver, kube-controller-manager, kubectl, helm): a node
# that runs pods. Everything comes from the Go module proxy through the ordinary `go` client:
#   kubelet, kube-scheduler, kube-proxy  k8s.io/kubernetes/cmd/...  (wrapper module, the same
#                                        version and flags as the control plane, so the Go build
#                                        cache the control plane filled is reused)
#   containerd, containerd-shim-runc-v2, github.com/containerd/containerd/v2/cmd/...
#   ctr
#   crictl                               sigs.k8s.io/cri-tools/cmd/crictl (stop.sh removes pods
#                                        through the CRI, so their network namespaces go too)
#   runc                                 github.com/opencontainers/runc (cgo: nsenter, seccomp)
#   bridge, host-local, loopback,        github.com/containernetworking/plugins/plugins/...
#   portmap (CNI plugins)
#   coredns                              github.com/coredns/coredns (an image the Gateway API
#                                        conformance suite's base manifests run)
# Idempotent: a binary whose stamp (name, version, flags, Go version) is unchanged is skipped.
# Build times go to $NODE_TOOLS/build-times.txt.
#
# Environment (all optional):
#   NODE_TOOLS          install root (default $HOME/.cache/portcullis-k8s-node)
#   K8S_VERSION         v1.37.2 (must match the control plane's)
#   CONTAINERD_VERSION  v2.4.2      RUNC_VERSION  v1.5.3
#   CNI_VERSION         v1.10.0     COREDNS_VERSION v1.12.2     CRICTL_VERSION v1.37.0
#   NICE                command prefix for builds (default "nice -n 10")
#   FORCE=1             rebuild regardless of stamps
# Usage: build.sh [all|kube|containerd|crictl|runc|cni|coredns]...   (default: all)
set -euo pipefail

NODE_TOOLS=${NODE_TOOLS:-$HOME/.cache/portcullis-k8s-node}
K8S_VERSION=${K8S_VERSION:-v1.37.2}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
RUNC_VERSION=${RUNC_VERSION:-v1.5.3}
CNI_VERSION=${CNI_VERSION:-v1.10.0}
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.2}
CRICTL_VERSION=${CRICTL_VERSION:-v1.37.0}
NICE=${NICE:-nice -n 10}
FORCE=${FORCE:-0}

BIN=$NODE_TOOLS/bin
CNI_BIN=$NODE_TOOLS/cni/bin
SRC=$NODE_TOOLS/src
TIMES=$NODE_TOOLS/build-times.txt
mkdir -p "$BIN" "$CNI_BIN" "$SRC"

command -v go >/dev/null || { echo "build.sh: go not found on PATH" >&2; exit 1; }
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
GOV=$(go env GOVERSION)

log() { printf '[k8s-node/build.sh] %s\n' "$*" >&2; }

# fresh PATH KEY -> 0 if PATH exists and was built with KEY
fresh() {
  [[ $FORCE != 1 && -x $1 && -f $1.stamp && "$(cat "$1.stamp")" == "$2" ]]
}
# timed PATH KEY CMD...: run CMD, record wall seconds, write the stamp
timed() {
  local out=$1 key=$2; shift 2
  local t0 t1
  t0=$(date +%s)
  "$@"
  t1=$(date +%s)
  printf '%s\t%s\t%ss\t%s\t%s\n' "$(basename "$out")" "$key" "$((t1 - t0))" "$(date -u +%FT%TZ)" "$GOV" >>"$TIMES"
  log "$(basename "$out") built in $((t1 - t0))s"
  printf '%s' "$key" >"$out.stamp"
}
json_field() { sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" "$1" | head -n1; }

# wrapper DIR MODULE VERSION GOVERSION [TOOL...]: a module that requires MODULE@VERSION (whose
# own replace directives do not apply to a dependency), resolved once with go mod tidy.
wrapper() {
  local d=$1 mod=$2 ver=$3 gover=$4; shift 4
  mkdir -p "$d"
  local want
  want=$(
    echo "module portcullis.test/$(basename "$d")-build"
    echo
    echo "go $gover"
    echo
    echo "require $mod $ver"
    echo
    for t in "$@"; do echo "tool $t"; done
  )
  if [[ ! -f $d/go.mod.in || "$(cat "$d/go.mod.in")" != "$want" ]]; then
    printf '%s\n' "$want" >"$d/go.mod"
    rm -f "$d/go.sum"
    log "resolving $mod $ver (go mod tidy)"
    (cd "$d" && go mod tidy)
    printf '%s\n' "$want" >"$d/go.mod.in"
  fi
}

# ---------------------------------------------------------------- kubernetes node parts
kube_module() {
  local d=$SRC/kubernetes
  mkdir -p "$d"
  local sv="v0.${K8S_VERSION#v1.}" json gomod
  json=$(mktemp)
  go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >"$json"
  gomod=$(json_field "$json" GoMod)
  KUBE_TIME=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$(json_field "$json" Info)")
  rm -f "$json"
  local want
  want=$(
    echo "module portcullis.test/k8s-node-build"
    echo
    echo "go $(sed -n 's/^go //p' "$gomod")"
    echo
    sed -n '/^godebug /p' "$gomod"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    # each ./staging replace of a module kubernetes requires at v0.0.0 -> its published twin
    awk '/^replace \(/{r=1;next} r&&/^\)/{r=0} r&&/=> \.\/staging/{print $1}' "$gomod" |
      while read -r m; do
        if grep -q "^[[:space:]]$m v0\.0\.0" "$gomod"; then printf '\t%s => %s %s\n' "$m" "$m" "$sv"; fi
      done
    echo ")"
    echo
    echo "tool ("
    echo "	k8s.io/kubernetes/cmd/kubelet"
    echo "	k8s.io/kubernetes/cmd/kube-scheduler"
    echo "	k8s.io/kubernetes/cmd/kube-proxy"
    echo ")"
  )
  if [[ ! -f $d/go.mod.in || "$(cat "$d/go.mod.in")" != "$want" ]]; then
    printf '%s\n' "$want" >"$d/go.mod"
    rm -f "$d/go.sum"
    log "resolving k8s.io/kubernetes $K8S_VERSION (go mod tidy)"
    (cd "$d" && go mod tidy)
    printf '%s\n' "$want" >"$d/go.mod.in"
  fi
}

build_kube() {
  local names=(kubelet kube-scheduler kube-proxy) key="$K8S_VERSION $GOV cgo0" n todo=()
  for n in "${names[@]}"; do fresh "$BIN/$n" "$n $key" || todo+=("$n"); done
  if [[ ${#todo[@]} == 0 ]]; then log "kubernetes $K8S_VERSION node binaries up to date"; return; fi
  kube_module
  local d=$SRC/kubernetes v=${K8S_VERSION#v} major minor ld="-s -w" pkg kv
  major=${v%%.*}; minor=$(echo "$v" | cut -d. -f2)
  # the same flags as ../shared/tools/k8s/build.sh, so the packages the control plane built
  # come from the Go build cache
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    for kv in "gitVersion=$K8S_VERSION" "gitMajor=$major" "gitMinor=$minor" \
      "gitTreeState=clean" "gitCommit=module-$K8S_VERSION" "buildDate=$KUBE_TIME"; do
      ld+=" -X $pkg.$kv"
    done
  done
  # One `go build` for all of them (-o a directory: one binary per main package): the packages
  # they share load and hash once, and one binary's link overlaps the others' compiles.
  local pkgs=() t0 t1
  for n in "${todo[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$n"); done
  t0=$(date +%s)
  (cd "$d" && CGO_ENABLED=0 $NICE go build -trimpath -tags selinux,notest,grpcnotrace \
    -ldflags "$ld" -o "$BIN/" "${pkgs[@]}")
  t1=$(date +%s)
  for n in "${todo[@]}"; do
    printf '%s\t%s\t%ss\t%s\t%s\n' "$n" "$n $key" "$((t1 - t0))" "$(date -u +%FT%TZ)" "$GOV" >>"$TIMES"
    printf '%s' "$n $key" >"$BIN/$n.stamp"
  done
  log "${todo[*]} built in $((t1 - t0))s (one go build)"
}

# ---------------------------------------------------------------- containerd
build_containerd() {
  local m=github.com/containerd/containerd/v2 key="containerd $CONTAINERD_VERSION $GOV cgo0"
  local names=(containerd containerd-shim-runc-v2 ctr) n todo=()
  for n in "${names[@]}"; do fresh "$BIN/$n" "$n $key" || todo+=("$n"); done
  if [[ ${#todo[@]} == 0 ]]; then log "containerd $CONTAINERD_VERSION up to date"; return; fi
  local d=$SRC/containerd
  wrapper "$d" "$m" "$CONTAINERD_VERSION" 1.26.8 "$m/cmd/containerd" "$m/cmd/containerd-shim-runc-v2" "$m/cmd/ctr"
  # Like its Makefile's static build: no btrfs (cgo) snapshotter; the overlayfs and native
  # snapshotters stay.
  local ld="-s -w -X $m/version.Version=$CONTAINERD_VERSION -X $m/version.Revision=module-$CONTAINERD_VERSION -X $m/version.Package=$m"
  for n in "${todo[@]}"; do
    do_ctrd() {
      (cd "$d" && CGO_ENABLED=0 $NICE go build -trimpath -tags "no_btrfs no_devmapper no_zfs urfave_cli_no_docs" \
        -ldflags "$ld" -o "$BIN/$n" "$m/cmd/$n")
    }
    timed "$BIN/$n" "$n $key" do_ctrd
  done
}

# ---------------------------------------------------------------- runc
build_runc() {
  local m=github.com/opencontainers/runc key="runc $RUNC_VERSION $GOV seccomp"
  if fresh "$BIN/runc" "$key"; then log "runc $RUNC_VERSION up to date"; return; fi
  command -v gcc >/dev/null || { echo "build.sh: runc needs gcc (cgo: nsenter)" >&2; exit 1; }
  pkg-config --exists libseccomp 2>/dev/null || { echo "build.sh: runc needs libseccomp-dev and pkg-config" >&2; exit 1; }
  local d=$SRC/runc
  wrapper "$d" "$m" "$RUNC_VERSION" 1.25.0 "$m"
  do_runc() {
    # runc's Makefile: cgo (libcontainer/nsenter is C), tag seccomp (containerd gives every
    # RuntimeDefault pod a seccomp profile; a runc without it refuses such containers)
    (cd "$d" && CGO_ENABLED=1 $NICE go build -trimpath -tags "seccomp urfave_cli_no_docs" \
      -ldflags "-s -w -X main.version=${RUNC_VERSION#v} -X main.gitCommit=module-$RUNC_VERSION" \
      -o "$BIN/runc" "$m")
  }
  timed "$BIN/runc" "$key" do_runc
}

# ---------------------------------------------------------------- CNI plugins
build_cni() {
  local m=github.com/containernetworking/plugins key="cni $CNI_VERSION $GOV"
  local plugins=(main/bridge ipam/host-local main/loopback meta/portmap) p n todo=()
  for p in "${plugins[@]}"; do n=${p#*/}; fresh "$CNI_BIN/$n" "$n $key" || todo+=("$p"); done
  if [[ ${#todo[@]} == 0 ]]; then log "CNI plugins $CNI_VERSION up to date"; return; fi
  local d=$SRC/cni tools=()
  for p in "${plugins[@]}"; do tools+=("$m/plugins/$p"); done
  wrapper "$d" "$m" "$CNI_VERSION" 1.26.8 "${tools[@]}"
  for p in "${todo[@]}"; do
    n=${p#*/}
    do_cni() {
      (cd "$d" && CGO_ENABLED=0 $NICE go build -trimpath \
        -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_VERSION" \
        -o "$CNI_BIN/$n" "$m/plugins/$p")
    }
    timed "$CNI_BIN/$n" "$n $key" do_cni
  done
}

# ---------------------------------------------------------------- crictl
build_crictl() {
  local m=sigs.k8s.io/cri-tools key="crictl $CRICTL_VERSION $GOV"
  if fresh "$BIN/crictl" "$key"; then log "crictl $CRICTL_VERSION up to date"; return; fi
  local d=$SRC/crictl
  wrapper "$d" "$m" "$CRICTL_VERSION" 1.26.8 "$m/cmd/crictl"
  do_crictl() {
    (cd "$d" && CGO_ENABLED=0 $NICE go build -trimpath \
      -ldflags "-s -w -X $m/pkg/version.Version=$CRICTL_VERSION" -o "$BIN/crictl" "$m/cmd/crictl")
  }
  timed "$BIN/crictl" "$key" do_crictl
}

# ---------------------------------------------------------------- coredns
# Only the plugins the cluster's Corefiles use (start.sh's cluster DNS: errors, kubernetes,
# cache, ready, template; the conformance suite's base manifests: forward, log, errors, whoami):
# CoreDNS's own main package links all ~60, among them the AWS, Azure and Google Cloud SDKs,
# which took most of its ~260 s cold build. A Corefile naming another plugin fails to start
# with "Unknown directive": add the plugin here.
COREDNS_PLUGINS="errors log forward whoami kubernetes cache ready template"
build_coredns() {
  local m=github.com/coredns/coredns key="coredns $COREDNS_VERSION $GOV plugins: $COREDNS_PLUGINS"
  if fresh "$BIN/coredns" "$key"; then log "coredns $COREDNS_VERSION up to date"; return; fi
  local d=$SRC/coredns gover json gomod p
  json=$(mktemp)
  go mod download -json "$m@$COREDNS_VERSION" >"$json"
  gomod=$(json_field "$json" GoMod)
  rm -f "$json"
  gover=$(sed -n 's/^go //p' "$gomod")
  mkdir -p "$d"
  {
    echo "// Generated by scripts/k8s-node/build.sh: CoreDNS with the plugins listed there."
    echo "package main"
    echo
    echo "import ("
    echo "	_ \"$m/core/dnsserver\""
    for p in $COREDNS_PLUGINS; do echo "	_ \"$m/plugin/$p\""; done
    echo
    echo "	\"$m/coremain\""
    echo ")"
    echo
    echo "func main() { coremain.Run() }"
  } >"$d/main.go.new"
  if ! cmp -s "$d/main.go.new" "$d/main.go"; then mv "$d/main.go.new" "$d/main.go"; rm -f "$d/go.mod.in"; else rm -f "$d/main.go.new"; fi
  wrapper "$d" "$m" "$COREDNS_VERSION" "$gover"
  do_coredns() {
    (cd "$d" && CGO_ENABLED=0 $NICE go build -trimpath \
      -ldflags "-s -w -X $m/coremain.GitCommit=module-$COREDNS_VERSION" -o "$BIN/coredns" .)
  }
  timed "$BIN/coredns" "$key" do_coredns
}

steps=("$@")
[[ ${#steps[@]} == 0 ]] && steps=(all)
for s in "${steps[@]}"; do
  case $s in
    all) build_runc; build_cni; build_containerd; build_crictl; build_kube; build_coredns ;;
    kube) build_kube ;;
    containerd) build_containerd ;;
    runc) build_runc ;;
    cni) build_cni ;;
    crictl) build_crictl ;;
    coredns) build_coredns ;;
    *) echo "usage: build.sh [all|kube|containerd|crictl|runc|cni|coredns]..." >&2; exit 2 ;;
  esac
done
log "binaries in $BIN and $CNI_BIN"
