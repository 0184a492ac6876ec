#!/usr/bin/env bash
# Builds the nginx Portcullis ships and tests with (1.26.3: `http2 on` serves HTTP/1.1 and h2c
# prior knowledge on one plaintext port, which Debian 12's 1.22 cannot) from Debian's own
# source archive (the trixie source package), and caches it under
# ~/.cache/portcullis-nginx/<version>-<hash of the configure flags> (linked as .../lean).
# Idempotent: a cached build returns at once. Prints the binary's path on its last line.
# Usage: scripts/build-nginx.sh   (env: PORTCULLIS_NGINX_VERSION, PORTCULLIS_CACHE)
set -euo pipefail
VERSION="${PORTCULLIS_NGINX_VERSION:-1.26.3}"
CACHE="${PORTCULLIS_CACHE:-$HOME/.cache}/portcullis-nginx"
# Without every module the rendered config never uses: each http module with location settings
# costs every location (and every `if` block, which is a location too) an allocated config and a
# merge at each reload, and phase handlers (access, limit_conn, auth_basic...) run on every
# request. 1,000 routes on one host: `nginx -t` ~73 -> ~52 ms of CPU. A module the templates
# start to use must come back here (nginx refuses an unknown directive: e2e/images and the apply
# tests show it); controller/src/apply/nginx-binary.ts reads -V for the temp paths to set.
# The stream modules serve TLSRoute, TCPRoute and UDPRoute listeners: stream (TCP and UDP
# proxying, its round-robin balancer with weights, map, split_clients, return), stream_ssl
# (TLSRoute Terminate) and stream_ssl_preread (the SNI of a passthrough connection). Left out
# of stream: every module no stream listener renders (limit_conn, geo, geoip,
# upstream hash/least_conn/random/zone, set), for the same reason as the http ones.
# IPAccessPolicy: http's geo module (built in) maps the client address to allowed/refused once
# per request, a radix tree whatever the number of CIDRs, checked only in the locations of a
# policy's routes; the http access module stays out (its handler would run in every location).
# A stream server has no conditional to act on a geo variable, so stream keeps its access module
# (allow/deny, in the servers of a policy's listeners only). realip (http and stream) takes the
# client address from trusted X-Forwarded-For hops or the PROXY protocol header when a policy
# says so. The cache key is a hash of these flags: changing them makes every machine rebuild.
# auth_request (not in nginx's default build) serves the ExternalAuth filter (HTTP protocol): a
# subrequest to the authorization server before the request is proxied; it runs in the access
# phase of the locations that use it only.
# The http upstream hash balancer stays: session persistence hashes each request's session token
# onto the endpoints (`hash ... consistent`); a balancer adds no location settings or handlers.
FLAGS=(--with-http_v2_module --with-http_ssl_module --with-http_stub_status_module --with-http_auth_request_module
  --with-http_realip_module
  --with-stream --with-stream_ssl_module --with-stream_ssl_preread_module --with-stream_realip_module
  --without-stream_limit_conn_module --without-stream_geo_module
  --without-stream_upstream_hash_module --without-stream_upstream_least_conn_module
  --without-stream_upstream_random_module --without-stream_upstream_zone_module
  --without-stream_set_module
  --with-pcre-jit --with-threads --with-cc-opt=-O2
  --without-http_charset_module --without-http_gzip_module --without-http_ssi_module
  --without-http_userid_module --without-http_access_module --without-http_auth_basic_module
  --without-http_autoindex_module --without-http_referer_module --without-http_fastcgi_module
  --without-http_uwsgi_module --without-http_scgi_module --without-http_memcached_module
  --without-http_limit_conn_module --without-http_empty_gif_module --without-http_browser_module
  --without-http_upstream_ip_hash_module
  --without-http_upstream_least_conn_module --without-http_upstream_random_module
  --without-http_upstream_zone_module --without-http-cache)
# Patches (scripts/nginx-patches/*.patch, applied in name order) fix or extend nginx 1.26.3 where
# the data plane depends on it (a GOAWAY on graceful shutdown; proxy_ssl_verify_san for
# BackendTLSPolicy subjectAltNames; named locations found by a binary search; a map of regexes
# only matched without a lowercased copy of its value; a map of one variable read without a copy
# of it); each says why in
# its own comment. They are part of the cache
# key too.
PATCHES=("$(cd "$(dirname "$0")" && pwd)"/nginx-patches/*.patch)
KEY="$VERSION-$( { printf '%s\n' "${FLAGS[@]}"; cat "${PATCHES[@]}"; } | sha256sum | cut -c1-12)"
PREFIX="$CACHE/$KEY"
if [ -x "$PREFIX/sbin/nginx" ] && [ -f "$PREFIX/.complete" ]; then
  # The link follows the checkout that ran last: another checkout (other patches) may have moved
  # it to its own build since this one was made.
  ln -sfn "$KEY" "$CACHE/lean"
  echo "$PREFIX/sbin/nginx"; exit 0
fi
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
need=()
for pkg in build-essential libpcre2-dev libssl-dev zlib1g-dev dpkg-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
SRC="$CACHE/src"
mkdir -p "$SRC"
TARBALL="$SRC/nginx_$VERSION.orig.tar.gz"
if [ ! -s "$TARBALL" ]; then
  # A deb-src entry for trixie, on the same mirror and keyring as the configured Debian
  # sources; only the source index is added (no binary packages from trixie are installed).
  LIST=/etc/apt/sources.list.d/portcullis-trixie-src.sources
  if [ ! -f "$LIST" ]; then
    uri=http://deb.debian.org/debian; keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      u=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources); [ -n "$u" ] && uri=$u
      k=$(awk '/^Signed-By:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources); [ -n "$k" ] && keyring=$k
    fi
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' "$uri" "$keyring" \
      | $SUDO tee "$LIST" >/dev/null
  fi
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  if [ ${#need[@]} -gt 0 ]; then $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null; need=(); fi
  work=$(mktemp -d)
  # The .dsc may be missing on the mirror; the upstream tarball is all a plain build needs.
  (cd "$work" && apt-get source --download-only "nginx=$VERSION*" >/dev/null 2>&1 || true)
  if [ ! -s "$work/nginx_$VERSION.orig.tar.gz" ]; then
    (cd "$work" && apt-get source --download-only nginx >/dev/null 2>&1 || true)
  fi
  [ -s "$work/nginx_$VERSION.orig.tar.gz" ] || { echo "nginx_$VERSION.orig.tar.gz not found in Debian's source archive" >&2; ls "$work" >&2; exit 1; }
  mv "$work/nginx_$VERSION.orig.tar.gz" "$TARBALL"; rm -rf "$work"
fi
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq; $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null
fi
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
tar -xzf "$TARBALL" -C "$build"
cd "$build/nginx-$VERSION"
for p in "${PATCHES[@]}"; do patch -s -p1 <"$p"; done
rm -rf "$PREFIX"
./configure --prefix="$PREFIX" "${FLAGS[@]}" >/dev/null
make -j"$(nproc)" >/dev/null
make install >/dev/null
touch "$PREFIX/.complete"
# `lean`, not `current`: checkouts from before the lean build still read `current` and render
# directives of modules this build lacks (controller/src/apply/nginx-binary.ts).
ln -sfn "$KEY" "$CACHE/lean"
echo "$PREFIX/sbin/nginx"
