#!/usr/bin/env bash
# The offline substitute for docker/Dockerfile's base (Debian's official bookworm-slim from
# Docker Hub) where no registry answers: made from Debian's mirror alone, it prints its digest
# reference (<registry>/compressbench/bookworm-minbase@sha256:...) for BASE_IMAGE.
#
#   debootstrap --variant=minbase bookworm (what bookworm-slim is made from)
#   -> docker import -> push to a loopback registry (Debian's docker-registry, docker/registry.yml)
#
# The push gives the image a registry content digest, so every FROM pins a digest even here.
# Its digest changes with each new rootfs (file times, the mirror's package versions of the
# day); scripts/build_image.sh reuses the one in the loopback registry.
# Needs root (debootstrap, dockerd). Idempotent: reuses the rootfs and the running daemons.
# `--daemons-only`: install the tools and start dockerd and the registry, nothing else.
# `--reuse`: print the substitute already in the loopback registry, if any, without rebuilding.
set -euo pipefail
cd "$(dirname "$0")/.."

WORK=${WORK:-/var/tmp/compressbench-docker}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
REGISTRY=${REGISTRY:-localhost:5000}
NAME=${BASE_NAME:-compressbench/bookworm-minbase}
DOCKER=${DOCKER:-/usr/bin/docker}  # Debian's client 20.10 (the newer one in PATH lacks buildx)

log() { echo "[base] $*" >&2; }

ensure_tools() {
  local missing=()
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ -x /usr/sbin/dockerd ] || missing+=(docker.io)
  command -v docker-registry >/dev/null || missing+=(docker-registry)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

ensure_dockerd() {
  if ! "$DOCKER" info >/dev/null 2>&1; then
    log "starting dockerd (log: $WORK/dockerd.log)"
    nohup /usr/sbin/dockerd >"$WORK/dockerd.log" 2>&1 &
    for _ in $(seq 60); do "$DOCKER" info >/dev/null 2>&1 && return 0; sleep 1; done
    log "dockerd did not start"; exit 1
  fi
}

ensure_registry() {
  if ! curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1; then
    log "starting docker-registry on $REGISTRY (log: $WORK/registry.log)"
    mkdir -p /var/lib/compressbench-registry
    nohup docker-registry serve docker/registry.yml >"$WORK/registry.log" 2>&1 &
    for _ in $(seq 30); do curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1 && return 0; sleep 1; done
    log "docker-registry did not start"; exit 1
  fi
}

mkdir -p "$WORK"
ensure_tools
ensure_dockerd
ensure_registry
[ "${1:-}" = "--daemons-only" ] && exit 0

repo_digest() {
  "$DOCKER" inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$REGISTRY/$NAME:bookworm" 2>/dev/null |
    grep -F "$REGISTRY/$NAME@" | head -n1
}
if [ "${1:-}" = "--reuse" ] && "$DOCKER" pull -q "$REGISTRY/$NAME:bookworm" >/dev/null 2>&1; then
  digest=$(repo_digest)
  [ -n "$digest" ] && { echo "$digest"; exit 0; }
fi

ROOTFS="$WORK/rootfs"
if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
  log "debootstrap --variant=minbase bookworm $MIRROR (a few minutes)"
  rm -rf "$ROOTFS"
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log"
  # Leave no apt lists or caches in the image; apt-get update restores them when needed.
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb
fi

log "docker import -> $REGISTRY/$NAME:bookworm"
tar --numeric-owner --sort=name -C "$ROOTFS" -c . |
  "$DOCKER" import --change 'CMD ["/bin/bash"]' - "$REGISTRY/$NAME:bookworm" >/dev/null
"$DOCKER" push "$REGISTRY/$NAME:bookworm" >&2
digest=$(repo_digest)
[ -n "$digest" ] || { log "no registry digest after push"; exit 1; }
echo "$digest"
