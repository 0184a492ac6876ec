#!/usr/bin/env bash
# start.sh DIR — a single-node Kubernetes cluster that runs pods, for tests:
#   control plane  ../shared/tools/k8s/start.sh (etcd, kube-apiserver, kube-controller-manager)
#   node           containerd + runc, the CNI bridge, kubelet, kube-proxy (nftables mode),
#                  kube-scheduler, and CoreDNS for cluster.local names
# built by scripts/k8s-node/build.sh and images.sh (cached under ~/.cache). Images are imported
# from archives into containerd; nothing is pulled (an image that is not there fails its pod
# with ErrImageNeverPull / ImagePullBackOff).
#
# Network, all on this machine: pods get 10.123.0.0/24 on the bridge pcn0 (the node is
# 10.123.0.1), Services 10.0.0.0/24 (the control plane's range). Pods have routes to those two
# ranges only, and the host forwards nothing between pcn0 and any other interface, so pod
# traffic never leaves the machine. The apiserver listens on all addresses (pods reach it
# through the `kubernetes` Service at 10.0.0.1), but only loopback and pcn0 may connect.
# One cluster per machine at a time (the bridge and the two ranges are fixed).
#
# DIR gets cp/ (the control plane's DIR), containerd/, kubelet/, logs, PID files and env
# (source it: KUBECONFIG, PATH with kubectl, helm, crictl, ctr). Needs root.
#
# Environment: NODE_TOOLS (default ~/.cache/portcullis-k8s-node), K8S_TOOLS (default
# ~/.cache/portcullis-k8s), IMAGE_ARCHIVES (more docker/OCI archives to import, space-separated),
# READY_TIMEOUT (seconds, default 180), KEEP_ON_FAIL=1 (do not stop on failure).
set -euo pipefail

DIR=${1:?usage: start.sh DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# beside the repository (a worktree one folder deeper finds it one more level up)
SHARED_K8S=${SHARED_K8S:-$REPO/../shared/tools/k8s}
[[ -d $SHARED_K8S ]] || SHARED_K8S=$REPO/../../shared/tools/k8s
NODE_TOOLS=${NODE_TOOLS:-$HOME/.cache/portcullis-k8s-node}
K8S_TOOLS=${K8S_TOOLS:-$HOME/.cache/portcullis-k8s}
READY_TIMEOUT=${READY_TIMEOUT:-180}
NBIN=$NODE_TOOLS/bin
KBIN=$K8S_TOOLS/bin
BRIDGE=pcn0
NODE_IP=10.123.0.1
POD_CIDR=10.123.0.0/24
SERVICE_CIDR=10.0.0.0/24
DNS_IP=10.0.0.10
NODE_NAME=portcullis-node
CGROUP_ROOT=/portcullis-node
T0=$(date +%s.%N)

[[ $(id -u) == 0 ]] || { echo "start.sh: needs root (network, cgroups, mounts)" >&2; exit 1; }
for b in containerd containerd-shim-runc-v2 ctr crictl runc kubelet kube-proxy kube-scheduler; do
  [[ -x $NBIN/$b ]] || { echo "start.sh: $NBIN/$b missing: run scripts/k8s-node/build.sh" >&2; exit 1; }
done
for f in pause.tar echo-basic.tar coredns.tar; do
  [[ -s $NODE_TOOLS/images/$f ]] || { echo "start.sh: $NODE_TOOLS/images/$f missing: run scripts/k8s-node/images.sh" >&2; exit 1; }
done
if ip link show "$BRIDGE" >/dev/null 2>&1; then
  echo "start.sh: $BRIDGE exists: another cluster runs on this machine (stop.sh its DIR)" >&2
  exit 1
fi

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
log() { printf '[k8s-node/start.sh %5.1fs] %s\n' "$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$*" >&2; }
fail() {
  echo "start.sh: $1" >&2
  [[ -n ${2:-} && -f $2 ]] && tail -30 "$2" >&2
  # KEEP_ON_FAIL=1 leaves everything running to look at (then stop.sh DIR)
  [[ ${KEEP_ON_FAIL:-0} == 1 ]] || "$HERE/stop.sh" "$DIR" >&2 || true
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# start NAME CMD...: a background process with its log and PID file in DIR
start() {
  local name=$1; shift
  "$@" >"$DIR/$name.log" 2>&1 &
  echo $! >"$DIR/$name.pid"
}

# ------------------------------------------------------------------ network
# The saved settings are put back by stop.sh.
{
  echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
  echo "bridge_nf=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables)"
} >"$DIR/saved-sysctls"
ip link add "$BRIDGE" type bridge
ip addr add "$NODE_IP/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
# Service addresses are routed to the bridge (kube-proxy's DNAT picks the pod), never out of
# the machine when no rule matches.
ip route add "$SERVICE_CIDR" dev "$BRIDGE" src "$NODE_IP"
# Pod -> Service -> pod on the same bridge is routed by the host, and the reply comes back
# bridged: the kernel must forward, and see bridged frames in netfilter for the reverse NAT.
echo 1 >/proc/sys/net/ipv4/ip_forward
echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
iptables -w -N PCN-FORWARD 2>/dev/null || iptables -w -F PCN-FORWARD
iptables -w -A PCN-FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
iptables -w -A PCN-FORWARD -i "$BRIDGE" -j DROP
iptables -w -A PCN-FORWARD -o "$BRIDGE" -j DROP
iptables -w -I FORWARD 1 -j PCN-FORWARD

# ------------------------------------------------------------------ control plane
APISERVER_PORT=$(free_port)
iptables -w -N PCN-APISERVER 2>/dev/null || iptables -w -F PCN-APISERVER
iptables -w -A PCN-APISERVER -i lo -j RETURN
iptables -w -A PCN-APISERVER -i "$BRIDGE" -j RETURN
iptables -w -A PCN-APISERVER -j DROP
iptables -w -I INPUT 1 -p tcp --dport "$APISERVER_PORT" -j PCN-APISERVER
echo "$APISERVER_PORT" >"$DIR/apiserver-port"
# Pods reach the apiserver at the `kubernetes` Service: it must listen beyond loopback and
# advertise the node's address, whose endpoint the lease reconciler then writes. Its client
# certificate lets it read pod logs from the kubelet.
log "control plane"
APISERVER_PORT=$APISERVER_PORT \
  APISERVER_ARGS="--kubelet-preferred-address-types=InternalIP --bind-address=0.0.0.0 --advertise-address=$NODE_IP --endpoint-reconciler-type=lease --kubelet-client-certificate=$DIR/cp/pki/admin.crt --kubelet-client-key=$DIR/cp/pki/admin.key ${APISERVER_ARGS:-}" \
  K8S_TOOLS=$K8S_TOOLS bash "$SHARED_K8S/start.sh" "$DIR/cp" >"$DIR/control-plane.log" 2>&1 ||
  fail "the control plane did not start" "$DIR/control-plane.log"
# shellcheck disable=SC1091
source "$DIR/cp/env"
export PATH=$NBIN:$PATH

# ------------------------------------------------------------------ containerd
CTRD=$DIR/containerd
mkdir -p "$CTRD" "$DIR/cni/net.d" "$DIR/cni/networks" "$DIR/pod-logs"
cat >"$DIR/cni/net.d/10-portcullis.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "portcullis-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "isDefaultGateway": false,
      "hairpinMode": true,
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "$DIR/cni/networks",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
        "routes": [{"dst": "$SERVICE_CIDR"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
cat >"$CTRD/config.toml" <<EOF
version = 3
root = "$CTRD/root"
state = "$CTRD/state"
[grpc]
  address = "$CTRD/containerd.sock"
[ttrpc]
  address = "$CTRD/containerd.sock.ttrpc"
[debug]
  level = "warn"
[plugins."io.containerd.cri.v1.runtime"]
  # no process here may lower its oom_score_adj (CAP_SYS_RESOURCE is outside the bounding
  # set): pods keep containerd's own value instead of the kubelet's -998 and QoS scores
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$NBIN/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$NODE_TOOLS/cni/bin"]
    conf_dir = "$DIR/cni/net.d"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "registry.k8s.io/pause:3.10.2"
[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
log "containerd"
# the shim is found on PATH
start containerd env PATH="$NBIN:$PATH" "$NBIN/containerd" --config "$CTRD/config.toml"
for _ in $(seq 1 300); do
  [[ -S $CTRD/containerd.sock ]] && ctr --address "$CTRD/containerd.sock" version >/dev/null 2>&1 && break
  kill -0 "$(cat "$DIR/containerd.pid")" 2>/dev/null || fail "containerd exited" "$DIR/containerd.log"
  sleep 0.1
done
CTR=(ctr --address "$CTRD/containerd.sock" -n k8s.io)
log "importing images"
for f in "$NODE_TOOLS"/images/*.tar ${IMAGE_ARCHIVES:-}; do
  "${CTR[@]}" images import --snapshotter overlayfs "$f" >>"$DIR/image-import.log" 2>&1 ||
    fail "importing $f failed" "$DIR/image-import.log"
done

# ------------------------------------------------------------------ kubelet
KL=$DIR/kubelet
mkdir -p "$KL/root" "$KL/plugins"
: >"$KL/resolv.conf" # pods resolve cluster names through CoreDNS only
KUBELET_PORT=$(free_port)
KUBELET_HEALTHZ=$(free_port)
cat >"$KL/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# this machine has cgroup v1 (hybrid) and no systemd
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failSwapOn: false
# its default -999 cannot be set here (see restrict_oom_score_adj above)
oomScoreAdj: 0
containerRuntimeEndpoint: unix://$CTRD/containerd.sock
imageServiceEndpoint: unix://$CTRD/containerd.sock
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ
podLogsDir: $DIR/pod-logs
resolvConf: $KL/resolv.conf
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/cp/pki/ca.crt}
authorization: {mode: Webhook}
# a shared test machine: never evict or collect images because of its disk or memory
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 250
EOF
# The kubelet wants its cgroup root to exist in every hierarchy (pods go below it, and stop.sh
# finds what is left there); a v1 cpuset cgroup is usable once it has cpus and mems.
for h in /sys/fs/cgroup/*/; do
  [[ $h == */unified/ ]] && continue
  mkdir -p "$h${CGROUP_ROOT#/}"
done
if [[ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]]; then
  cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.cpus"
  cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.mems"
fi
log "kubelet"
start kubelet "$NBIN/kubelet" --config="$KL/config.yaml" --kubeconfig="$DIR/cp/kubeconfig" \
  --root-dir="$KL/root" --cert-dir="$KL/pki" --volume-plugin-dir="$KL/plugins" \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1

# ------------------------------------------------------------------ kube-proxy, scheduler
cat >"$DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: $DIR/cp/kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$(free_port)
metricsBindAddress: 127.0.0.1:$(free_port)
# node ports only on the bridge address, never on this machine's other interfaces
nodePortAddresses: ["$NODE_IP/32"]
# leave the machine's conntrack settings alone
oomScoreAdj: 0
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
log "kube-proxy, kube-scheduler"
start kube-proxy "$NBIN/kube-proxy" --config="$DIR/kube-proxy.yaml" --v=1
start kube-scheduler "$NBIN/kube-scheduler" --kubeconfig="$DIR/cp/kubeconfig" \
  --authentication-kubeconfig="$DIR/cp/kubeconfig" --authorization-kubeconfig="$DIR/cp/kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$(free_port)" --leader-elect=false --v=1

cat >"$DIR/env" <<EOF
export KUBECONFIG=$DIR/cp/kubeconfig
export K8S_API_SERVER=$K8S_API_SERVER
export K8S_CA_FILE=$K8S_CA_FILE
export K8S_ADMIN_TOKEN=$K8S_ADMIN_TOKEN
export CONTAINER_RUNTIME_ENDPOINT=unix://$CTRD/containerd.sock
export CONTAINERD_ADDRESS=$CTRD/containerd.sock
export CONTAINERD_NAMESPACE=k8s.io
export PATH=$KBIN:$NBIN:\$PATH
EOF

deadline=$(($(date +%s) + READY_TIMEOUT))
until [[ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]; do
  for p in kubelet kube-proxy kube-scheduler containerd; do
    kill -0 "$(cat "$DIR/$p.pid")" 2>/dev/null || fail "$p exited" "$DIR/$p.log"
  done
  kill -0 "$(cat "$DIR/cp/kube-controller-manager.pid")" 2>/dev/null ||
    fail "kube-controller-manager exited" "$DIR/cp/kube-controller-manager.log"
  (($(date +%s) < deadline)) || fail "node not Ready after ${READY_TIMEOUT}s" "$DIR/kubelet.log"
  sleep 0.5
done
log "node Ready"

# ------------------------------------------------------------------ CoreDNS
# cluster.local names only; any other name is refused (no forwarding out of the machine)
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    cluster.local:53 in-addr.arpa:53 {
        errors
        kubernetes cluster.local in-addr.arpa {
            pods insecure
        }
        cache 5
        ready :8181
    }
    .:53 {
        template ANY ANY {
            rcode REFUSED
        }
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      containers:
      - name: coredns
        image: registry.k8s.io/coredns/coredns:v1.12.2
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        securityContext:
          capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
          periodSeconds: 1
        volumeMounts: [{name: config, mountPath: /etc/coredns}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
kubectl -n kube-system rollout status deployment/coredns --timeout="${READY_TIMEOUT}s" >/dev/null ||
  fail "CoreDNS did not become ready" "$DIR/kubelet.log"
log "CoreDNS ready; cluster up (source $DIR/env)"
