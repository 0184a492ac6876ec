#!/usr/bin/env bash
# conformance.sh — the official Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance,
# the version conformance/go.mod pins, unmodified) against Portcullis installed with helm from
# charts/portcullis on a single-node cluster that runs pods (scripts/k8s-node). Writes the
# suite's report YAML.
#   scripts/conformance.sh [REPORT]   default REPORT: charts/portcullis/conformance/<file named
#                                     after the suite and Portcullis versions>
# Builds what is missing first (all cached under ~/.cache; cold: see scripts/k8s-node/README.md),
# starts a fresh cluster in a temporary folder and stops it at the end (KEEP=1 keeps it running,
# CLUSTER_DIR chooses the folder). PROFILES (default GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TLS,GATEWAY-TCP,GATEWAY-UDP), RUN_TEST (one
# test), SUITE_ARGS (more suite flags) and GO_TEST_TIMEOUT (default 80m) tune the run. The
# supported features are the ones the GatewayClass publishes (the suite reads its status).
# TOTALS=FILE writes "N passed, N failed" there: the suite's tests that ran (each top-level test
# of a claimed feature; those of features not claimed are skipped by the suite and not counted),
# or "0 passed, 1 failed" when the run did not get that far. .ci/run adds it to npm test's.
# Exit status: the suite's (non-zero when a test of a claimed feature fails).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
SHARED_K8S=$REPO/../shared/tools/k8s
[[ -d $SHARED_K8S ]] || SHARED_K8S=$REPO/../../shared/tools/k8s
K8S_TOOLS=${K8S_TOOLS:-$HOME/.cache/portcullis-k8s}
NODE_TOOLS=${NODE_TOOLS:-$HOME/.cache/portcullis-k8s-node}
export K8S_TOOLS NODE_TOOLS GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false}
PROFILES=${PROFILES:-GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TLS,GATEWAY-TCP,GATEWAY-UDP}
SUITE_VERSION=$(sed -n 's/^require sigs.k8s.io\/gateway-api\/conformance \(v[^ ]*\)$/\1/p' conformance/go.mod)
CHART_VERSION=$(sed -n 's/^version: *//p' charts/portcullis/Chart.yaml)
APP_VERSION=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/portcullis/Chart.yaml)
HOME_URL=$(sed -n 's/^home: *//p' charts/portcullis/Chart.yaml)
REPORT=${1:-charts/portcullis/conformance/gateway-api-$SUITE_VERSION-portcullis-$APP_VERSION.yaml}
REPORT=$(realpath -m "$REPORT")
T0=$(date +%s)
TOTALS=${TOTALS:-}
[[ -z $TOTALS ]] || echo "0 passed, 1 failed" >"$TOTALS"
log() { printf '[conformance.sh %4ss] %s\n' "$(($(date +%s) - T0))" "$*" >&2; }

# ------------------------------------------------------------------ build (cached)
log "building what is missing"
bash "$SHARED_K8S/build.sh" >/dev/null
bash scripts/k8s-node/build.sh >/dev/null
bash scripts/k8s-node/images.sh >/dev/null 2>&1
bash scripts/build-images.sh all >/dev/null
# Portcullis's images as archives containerd imports (docker.io/ is how the CRI spells the
# chart's short names)
ARCH=$(mktemp -d)
trap 'rm -rf "$ARCH"' EXIT
for img in controller nginx; do
  buildah --storage-driver vfs push --quiet "portcullis/$img:$APP_VERSION" \
    "docker-archive:$ARCH/$img.tar:docker.io/portcullis/$img:$APP_VERSION" >/dev/null
done

# ------------------------------------------------------------------ cluster
DIR=${CLUSTER_DIR:-$(mktemp -d /tmp/portcullis-conformance.XXXXXX)}
stop_cluster() {
  local status=$?
  rm -rf "$ARCH"
  [[ ${KEEP:-0} == 1 ]] && return
  bash scripts/k8s-node/stop.sh "$DIR" >/dev/null 2>&1 || true
  # A folder of our own is ~1.2 GB (images unpacked, the kubelet's and etcd's data): each run
  # left one behind. A passing run removes it; a failing one keeps its logs only.
  [[ -n ${CLUSTER_DIR:-} ]] && return
  if [[ $status == 0 ]]; then
    rm -rf "$DIR"
  else
    rm -rf "$DIR/containerd/root" "$DIR/kubelet/root"
    log "cluster logs kept in $DIR"
  fi
}
trap stop_cluster EXIT
log "starting the cluster in $DIR"
IMAGE_ARCHIVES="$ARCH/controller.tar $ARCH/nginx.tar" bash scripts/k8s-node/start.sh "$DIR"
# shellcheck disable=SC1091
source "$DIR/env"
# The experimental channel: the suite's extended tests use its fields, and the suite checks
# that the CRDs are the version it was released with.
kubectl apply --server-side -k "$K8S_TOOLS/crds/gateway-api-$SUITE_VERSION/experimental" >/dev/null
kubectl wait --for condition=Established crd --all --timeout=60s >/dev/null

log "helm install charts/portcullis"
helm install portcullis charts/portcullis -n portcullis-system --create-namespace \
  --set nginx.service.type=ClusterIP --wait --timeout 5m >/dev/null

# ------------------------------------------------------------------ the suite
log "suite $SUITE_VERSION, profiles $PROFILES"
mkdir -p "$(dirname "$REPORT")"
args=(
  --gateway-class=portcullis
  --conformance-profiles="$PROFILES"
  --report-output="$REPORT"
  --organization=portcullis --project=portcullis
  --url="$HOME_URL" --version="v$APP_VERSION" --contact="$HOME_URL/issues"
  --cleanup-base-resources=false
  # GatewayStaticAddresses: a free address of the cluster's Service range (scripts/k8s-node:
  # 10.0.0.0/24; Kubernetes keeps the low addresses of a range for Services that ask for one),
  # and one outside the range, which Kubernetes refuses.
  --usable-address="${USABLE_ADDRESS:-10.0.0.13}"
  --unusable-address="${UNUSABLE_ADDRESS:-10.1.0.13}"
)
[[ -n ${RUN_TEST:-} ]] && args+=(--run-test="$RUN_TEST")
# shellcheck disable=SC2206
[[ -n ${SUITE_ARGS:-} ]] && args+=($SUITE_ARGS)
set +e
# -ldflags: no symbol table or DWARF in the test binary, a shorter link (stack traces keep their
# function names and lines); scripts/install.sh compiles the packages with the same flags.
(cd conformance && go test -v -count=1 -ldflags='-s -w' -timeout "${GO_TEST_TIMEOUT:-80m}" -run TestConformance . -args "${args[@]}") \
  >"$DIR/suite.log" 2>&1
rc=$?
set -e
# one line per top-level test: "    --- PASS: TestConformance/Name (1.2s)"
passed=$(grep -cE '^    --- PASS: TestConformance/[^/ ]+ ' "$DIR/suite.log" || true)
failed=$(grep -cE '^    --- FAIL: TestConformance/[^/ ]+ ' "$DIR/suite.log" || true)
skipped=$(grep -cE '^    --- SKIP: TestConformance/[^/ ]+ ' "$DIR/suite.log" || true)
# a run that ended before its tests (setup failed, timeout) is a failure even with no FAIL line
if [[ $rc != 0 && $failed == 0 ]]; then failed=1; fi
[[ -z $TOTALS ]] || echo "$passed passed, $failed failed" >"$TOTALS"
grep -E '^    --- FAIL: TestConformance/[^/ ]+ ' "$DIR/suite.log" >&2 || true
log "suite exit $rc: $passed passed, $failed failed, $skipped skipped (features not claimed); log $DIR/suite.log; report $REPORT"
exit $rc
