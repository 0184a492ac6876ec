#!/usr/bin/env bash
# stop.sh DIR — stop what start.sh DIR started and put the machine back as it was: pods are
# removed through the CRI (so their network namespaces and addresses go), then the node's
# processes by the PIDs in DIR/*.pid, then any process still left in the node's cgroups (a
# container the runtime did not reap), the control plane (../shared/tools/k8s/stop.sh), the
# bridge, routes, firewall chains and sysctls. Keeps DIR (logs); delete it afterwards.
set -uo pipefail
DIR=${1:?usage: stop.sh DIR}
DIR=$(cd "$DIR" 2>/dev/null && pwd) || { echo "stop.sh: no $1" >&2; exit 0; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# beside the repository (a worktree one folder deeper finds it one more level up)
SHARED_K8S=${SHARED_K8S:-$REPO/../shared/tools/k8s}
[[ -d $SHARED_K8S ]] || SHARED_K8S=$REPO/../../shared/tools/k8s
NODE_TOOLS=${NODE_TOOLS:-$HOME/.cache/portcullis-k8s-node}
NBIN=$NODE_TOOLS/bin
BRIDGE=pcn0
SERVICE_CIDR=10.0.0.0/24
CGROUP_ROOT=/portcullis-node

# stop_pid NAME: SIGTERM the process in DIR/NAME.pid if it is still that binary, SIGKILL after 10 s
stop_pid() {
  local f=$DIR/$1.pid pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "${1:0:15}" ]]; then
    kill -TERM "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}

stop_pid kube-scheduler
stop_pid kubelet
SOCK=$DIR/containerd/containerd.sock
if [[ -S $SOCK ]] && [[ -f $DIR/containerd.pid ]] && kill -0 "$(cat "$DIR/containerd.pid")" 2>/dev/null; then
  # stopping a pod sandbox tears down its network (CNI DEL) and its namespace
  "$NBIN/crictl" --runtime-endpoint "unix://$SOCK" --timeout 30s rmp --all --force >/dev/null 2>&1 ||
    echo "stop.sh: crictl rmp failed; containers are killed below" >&2
fi
stop_pid kube-proxy
stop_pid containerd
# Whatever still runs in the node's cgroups was started by this node (containers, shims).
for _ in 1 2 3; do
  left=$(find "/sys/fs/cgroup/pids$CGROUP_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
  [[ -z $left ]] && break
  for pid in $left; do kill -KILL "$pid" 2>/dev/null; done
  sleep 0.3
done
# shims exit when containerd's tasks are gone; any left over is ours by its address
for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
# empty cgroups, deepest first
for h in /sys/fs/cgroup/*/; do
  [[ -d $h${CGROUP_ROOT#/} ]] && find "$h${CGROUP_ROOT#/}" -depth -type d -exec rmdir {} + 2>/dev/null
done
# the kubelet's volume mounts and containerd's overlay mounts, deepest first
grep -F " $DIR/" /proc/self/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
KCM=1 K8S_TOOLS=${K8S_TOOLS:-$HOME/.cache/portcullis-k8s} bash "$SHARED_K8S/stop.sh" "$DIR/cp"

ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null
ip link del "$BRIDGE" 2>/dev/null
if [[ -f $DIR/apiserver-port ]]; then
  iptables -w -D INPUT -p tcp --dport "$(cat "$DIR/apiserver-port")" -j PCN-APISERVER 2>/dev/null
fi
iptables -w -F PCN-APISERVER 2>/dev/null && iptables -w -X PCN-APISERVER 2>/dev/null
iptables -w -D FORWARD -j PCN-FORWARD 2>/dev/null
iptables -w -F PCN-FORWARD 2>/dev/null && iptables -w -X PCN-FORWARD 2>/dev/null
# kube-proxy's own table (nftables mode)
nft delete table ip kube-proxy 2>/dev/null
nft delete table ip6 kube-proxy 2>/dev/null
if [[ -f $DIR/saved-sysctls ]]; then
  # shellcheck disable=SC1091
  source "$DIR/saved-sysctls"
  echo "$ip_forward" >/proc/sys/net/ipv4/ip_forward
  echo "$bridge_nf" >/proc/sys/net/bridge/bridge-nf-call-iptables
  rm -f "$DIR/saved-sysctls"
fi
echo "node stopped ($DIR)"
