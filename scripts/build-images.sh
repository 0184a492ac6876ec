#!/usr/bin/env bash
# Builds the two container images of the chart's defaults with buildah (vfs storage, chroot
# isolation: no daemon, no registry):
#   portcullis/controller:<version>  the controller (entry point portcullis-controller)
#   portcullis/nginx:<version>       nginx (scripts/build-nginx.sh) + portcullis-agent
# The base root filesystem is Debian 12 minbase made by mmdebstrap from the configured Debian
# mirror, cached under ~/.cache/portcullis-images keyed by its package list, so only the first
# build on a machine pays for it. Node.js is the machine's own (/usr/bin/node, >= 20.19); each
# command is bundled into one file (images/bundle.ts).
#   scripts/build-images.sh [controller|nginx|all|base] [--archive-dir=DIR]   (base: only the
#   cached root filesystem, which scripts/install.sh makes beside its other downloads)
# Env: PORTCULLIS_IMAGE_TAG (default: package.json version), PORTCULLIS_CACHE (default
# ~/.cache), NGINX_BIN (default: scripts/build-nginx.sh's build). --archive-dir writes
# <name>.oci.tar archives a cluster can load. Prints one "image NAME" line per image built.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
what=${1:-all}; shift || true
archive_dir=
for a in "$@"; do case $a in --archive-dir=*) archive_dir=${a#*=} ;; *) echo "unknown argument $a" >&2; exit 64 ;; esac; done
TAG=${PORTCULLIS_IMAGE_TAG:-$(node -p "require('./package.json').version")}
CACHE="${PORTCULLIS_CACHE:-$HOME/.cache}/portcullis-images"
BUILDAH=(buildah --storage-driver vfs)
mkdir -p "$CACHE"

SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! command -v buildah >/dev/null || ! command -v mmdebstrap >/dev/null; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq buildah mmdebstrap >/dev/null
fi

# --- base root filesystem (shared by both images) ---------------------------------------
# libssl3, libpcre2-8-0 and zlib1g are nginx's libraries; ca-certificates for TLS clients.
PACKAGES=ca-certificates,libpcre2-8-0,libssl3,zlib1g
SUITE=bookworm
uri=http://deb.debian.org/debian; sec=http://deb.debian.org/debian-security
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  u=$(awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/debian.sources | grep -v security | head -1); [ -n "$u" ] && uri=$u
  s=$(awk '/^URIs:/{print $2}' /etc/apt/sources.list.d/debian.sources | grep security | head -1); [ -n "$s" ] && sec=$s
fi
MIRRORS=("deb $uri $SUITE main" "deb $uri $SUITE-updates main" "deb $sec $SUITE-security main")
BASE_KEY=$(printf '%s\n' "$SUITE" "$PACKAGES" "${MIRRORS[@]}" v1 | sha256sum | cut -c1-12)
BASE="$CACHE/base-$SUITE-$BASE_KEY.tar"
if [ ! -s "$BASE" ]; then
  t0=$(date +%s)
  # Documentation, man pages and translations are left out of the image (the copyright files stay).
  mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
    "$SUITE" "$CACHE/partial-$BASE_KEY.tar" "${MIRRORS[@]}"
  mv "$CACHE/partial-$BASE_KEY.tar" "$BASE"
  echo "base root filesystem: $(du -h "$BASE" | cut -f1) in $(( $(date +%s) - t0 )) s" >&2
else
  echo "base root filesystem: up to date ($BASE)" >&2
fi

[ "$what" != base ] || exit 0

NODE=${NODE_BIN:-$(command -v node)}
NODE=$(readlink -f "$NODE")

# command CONTEXT NAME ENTRY.ts: bundles ENTRY into /app/dist/NAME/bin/NAME.js with the files its
# code reads next to its sources at run time, and puts NAME on the PATH. The bundles sit three
# folders below /app, as the sources sit below the repository root, so the controller finds
# /app/templates where it looks for <repository>/templates.
command_into() {
  local ctx=$1 name=$2 entry=$3
  local dir=$ctx/overlay/app/dist/$name/bin
  mkdir -p "$dir"
  "$REPO/node_modules/.bin/tsx" "$REPO/images/bundle.ts" "$entry" "$dir/$name.js"
  chmod 0755 "$dir/$name.js"
  # proto-loader reads the ext_proc schema from the folder of the code that loads it.
  if [ -f controller/src/inference/ext_proc.proto ]; then cp controller/src/inference/ext_proc.proto "$dir/"; fi
  ln -sfn "/app/dist/$name/bin/$name.js" "$ctx/overlay/usr/local/bin/$name"
}

# Context: base.tar (hard link to the cache when on one filesystem) + overlay/ (copied over /).
context() { # context DIR
  local ctx=$1
  mkdir -p "$ctx/overlay/usr/local/bin" "$ctx/overlay/app" "$ctx/overlay/tmp"
  chmod 1777 "$ctx/overlay/tmp"
  ln "$BASE" "$ctx/base.tar" 2>/dev/null || cp "$BASE" "$ctx/base.tar"
  cp "$NODE" "$ctx/overlay/usr/local/bin/node"
  # Users for the images' uids: without a passwd entry os.homedir() (Node, and libraries that
  # look for ~/.kube) fails with ENOENT.
  mkdir -p "$ctx/overlay/etc"
  tar -xOf "$BASE" ./etc/passwd >"$ctx/overlay/etc/passwd"
  tar -xOf "$BASE" ./etc/group >"$ctx/overlay/etc/group"
  printf 'nginx:x:101:101:nginx:/nonexistent:/usr/sbin/nologin\nportcullis:x:65532:65532:portcullis:/nonexistent:/usr/sbin/nologin\n' >>"$ctx/overlay/etc/passwd"
  printf 'nginx:x:101:\nportcullis:x:65532:\n' >>"$ctx/overlay/etc/group"
}

# An image is rebuilt only when what goes into it changed: its key hashes the Containerfile, the
# base root filesystem's key and every file of the overlay (bundles, templates, node, nginx), and
# a kept image whose key matches is reused. The bundling runs each time (a few seconds); the
# buildah build it saves copies the whole root filesystem (vfs storage).
input_key() { # input_key CONTAINERFILE CONTEXT
  { sha256sum <"$1"; echo "$BASE_KEY"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$2" -cf - overlay | sha256sum
  } | sha256sum | cut -c1-16
}

build() { # build NAME CONTAINERFILE CONTEXT
  local key stamp
  key=$(input_key "$2" "$3")
  stamp="$CACHE/image-$(echo "$1" | tr '/:' '__').key"
  if [[ -f $stamp && "$(cat "$stamp")" == "$key" ]] && "${BUILDAH[@]}" inspect --type image "$1" >/dev/null 2>&1; then
    echo "image $1 (unchanged, key $key)"
  else
    rm -f "$stamp"
    "${BUILDAH[@]}" bud --quiet --isolation chroot --layers=false -f "$2" -t "$1" "$3" >/dev/null
    echo "$key" >"$stamp"
    echo "image $1"
  fi
  if [ -n "$archive_dir" ]; then
    mkdir -p "$archive_dir"
    local file="$archive_dir/$(basename "${1%%:*}").oci.tar"
    rm -f "$file"
    "${BUILDAH[@]}" push --quiet "$1" "oci-archive:$file:$1" >/dev/null
    echo "archive $file"
  fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$what" = all ] || [ "$what" = controller ]; then
  ctx=$work/controller; context "$ctx"
  command_into "$ctx" portcullis-controller controller/src/cli.ts
  cp -r templates "$ctx/overlay/app/templates"
  build "portcullis/controller:$TAG" images/controller/Containerfile "$ctx"
fi

if [ "$what" = all ] || [ "$what" = nginx ]; then
  ctx=$work/nginx; context "$ctx"
  nginx_bin=${NGINX_BIN:-$(bash scripts/build-nginx.sh | tail -1)}
  cp "$nginx_bin" "$ctx/overlay/usr/local/bin/nginx"
  # nginx runs as uid 101; its prefix, pid and temp files go where the agent points it (a
  # writable emptyDir in the pod), everything else is read-only. The agent applies configs to nginx; the inference hop runs beside it when a Gateway's
  # routes use InferencePools.
  command_into "$ctx" portcullis-agent controller/src/agent/cli.ts
  if [ -f controller/src/inference/hop-cli.ts ]; then
    command_into "$ctx" portcullis-inference-hop controller/src/inference/hop-cli.ts
  fi
  cp -r templates "$ctx/overlay/app/templates"
  build "portcullis/nginx:$TAG" images/nginx/Containerfile "$ctx"
fi

# A rebuild moves the tag: drop the untagged images it leaves behind (vfs keeps every layer as
# a full copy, ~240 MB per image).
"${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true
