#!/usr/bin/env bash
# npm test and CI's test phase: the type check (tsc --noEmit) runs beside jest instead of
# before it (the first suites wait on processes and disk more than on CPU), and jest runs its
# suites in parallel workers (JEST_WORKERS, default 3 on this 2-core machine: the suites start
# nginx, git, PostgreSQL and kube-apiserver and spend much of their time waiting on them).
# Each phase prints its wall time; the last line is the totals, "N passed, N failed", with a
# failed type check counted as one failure. Arguments go to jest.
set -uo pipefail
cd "$(dirname "$0")/.."
WORKERS=${JEST_WORKERS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s)
( s=$(date +%s); npx tsc -p tsconfig.json --noEmit >"$tmp/tsc.log" 2>&1; echo $? >"$tmp/tsc.rc"; echo $(( $(date +%s) - s )) >"$tmp/tsc.secs" ) &
tsc_pid=$!
rm -f .test-totals
s=$(date +%s)
npx jest --maxWorkers="$WORKERS" "$@"
jest_rc=$?
jest_secs=$(( $(date +%s) - s ))
wait "$tsc_pid"
tsc_rc=$(cat "$tmp/tsc.rc" 2>/dev/null || echo 1)
echo "[phase] type check (tsc --noEmit, beside jest): $(cat "$tmp/tsc.secs" 2>/dev/null || echo '?') s, exit $tsc_rc"
echo "[phase] jest ($WORKERS workers): $jest_secs s, exit $jest_rc"
echo "[phase] tests total (type check + jest, wall): $(( $(date +%s) - t0 )) s"
if [ "$tsc_rc" != 0 ]; then cat "$tmp/tsc.log"; fi
line=$(tail -1 .test-totals 2>/dev/null)
if [ -z "$line" ]; then line="0 passed, 1 failed"; jest_rc=1; echo "$line" >.test-totals; fi
if [ "$tsc_rc" != 0 ]; then
  line=$(echo "$line" | awk -F', ' '{ split($2, f, " "); $2 = (f[1] + 1) " failed"; print }' OFS=', ')
  echo "$line" >.test-totals
fi
echo "$line"
[ "$jest_rc" = 0 ] && [ "$tsc_rc" = 0 ]
