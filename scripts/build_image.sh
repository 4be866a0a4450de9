#!/usr/bin/env bash
# Build one target of docker/Dockerfile (cpu | cuda | postgres) on this machine, reproducibly:
#
#   scripts/build_image.sh cpu        # -> compressbench:cpu
#   scripts/build_image.sh cuda       # -> compressbench:cuda
#   scripts/build_image.sh postgres   # -> compressbench:postgres (docker/compose.yaml)
#
# Every target is smoke-tested after its build (scripts/smoke_image.sh) before PUSH pushes it.
#
# Starts dockerd and the loopback registry if needed (scripts/build_base_image.sh); builds FROM
# the official base pinned in docker/Dockerfile (ARG BASE_IMAGE) when it is present or a
# registry serves it, else FROM the offline substitute (scripts/build_base_image.sh --reuse);
# hard-links this machine's mirror of the CPU torch wheel into docker/wheels/; passes the CA
# bundle (when present) as a BuildKit secret, the lock's sha256 as LOCK_SHA256, the commit time
# as SOURCE_DATE_EPOCH, and PIP_RETRIES=0 when an index the lock names does not resolve here.
# Prints build time and image size; env: CONTEXT (build context, default the repo), TAG,
# BASE_IMAGE, CA_BUNDLE, DEBIAN_SNAPSHOT, NO_CACHE=1, SKIP_SMOKE=1, PUSH.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TARGET=${1:?usage: scripts/build_image.sh cpu|cuda|postgres}
case "$TARGET" in cpu|cuda|postgres) ;; *) echo "target: cpu, cuda or postgres, not '$TARGET'" >&2; exit 2 ;; esac
DOCKER=${DOCKER:-/usr/bin/docker}
TAG=${TAG:-compressbench:$TARGET}
CONTEXT=${CONTEXT:-$REPO}
CA=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
LOCAL_WHEELS=${LOCAL_WHEELS:-/opt/wheels}
log() { echo "[build $TARGET] $*" >&2; }

scripts/build_base_image.sh --daemons-only
OFFICIAL_BASE=$(sed -n 's/^ARG BASE_IMAGE=//p' docker/Dockerfile)
BASE_IMAGE=${BASE_IMAGE:-$OFFICIAL_BASE}
if ! "$DOCKER" image inspect "$BASE_IMAGE" >/dev/null 2>&1 && ! "$DOCKER" pull -q "$BASE_IMAGE" >/dev/null 2>&1; then
  log "no registry serves $BASE_IMAGE: building FROM the offline substitute (debootstrap)"
  BASE_IMAGE=$(scripts/build_base_image.sh --reuse)
fi
log "base $BASE_IMAGE"

if [ "$TARGET" = cpu ]; then
  mkdir -p "$CONTEXT/docker/wheels"
  for whl in "$LOCAL_WHEELS"/*.whl; do
    [ -e "$whl" ] || continue
    ln -f "$whl" "$CONTEXT/docker/wheels/" 2>/dev/null || cp -f "$whl" "$CONTEXT/docker/wheels/"
  done
fi
LOCK_SHA256=none  # the postgres image installs no Python lock
if [ -f "$CONTEXT/docker/requirements-$TARGET.lock" ]; then
  LOCK_SHA256=$(sha256sum "$CONTEXT/docker/requirements-$TARGET.lock" | cut -d' ' -f1)
fi
log "lock sha256 $LOCK_SHA256; context $CONTEXT"

ARGS=(--build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "LOCK_SHA256=$LOCK_SHA256")
ARGS+=(--build-arg "SOURCE_DATE_EPOCH=$(git -C "$CONTEXT" log -1 --format=%ct 2>/dev/null || echo 0)")
[ -f "$CA" ] && ARGS+=(--secret "id=ca,src=$CA")
[ -n "${DEBIAN_SNAPSHOT:-}" ] && ARGS+=(--build-arg "DEBIAN_SNAPSHOT=$DEBIAN_SNAPSHOT")
[ -n "${NO_CACHE:-}" ] && ARGS+=(--no-cache)
for host in $(sed -n 's|^--[a-z-]*index-url https\{0,1\}://\([^/]*\).*|\1|p' "$CONTEXT/docker/requirements-$TARGET.lock" 2>/dev/null); do
  getent hosts "$host" >/dev/null || { log "$host does not resolve: PIP_RETRIES=0"; ARGS+=(--build-arg PIP_RETRIES=0); break; }
done

start=$(date +%s)
DOCKER_BUILDKIT=1 "$DOCKER" build --progress=plain -f "$CONTEXT/docker/Dockerfile" --target "$TARGET" \
  "${ARGS[@]}" -t "$TAG" "$CONTEXT"
seconds=$(( $(date +%s) - start ))
bytes=$("$DOCKER" image inspect --format '{{.Size}}' "$TAG")
log "built $TAG in ${seconds}s; size $bytes bytes ($(numfmt --to=iec "$bytes"))"
echo "tag=$TAG seconds=$seconds bytes=$bytes lock_sha256=$LOCK_SHA256 base=$BASE_IMAGE"
# Smoke test before anything is pushed (scripts/smoke_image.sh: doctor's library and reader
# checks, one stage of the pipeline inside the image, offline); SKIP_SMOKE=1 leaves it out.
if [ "${SKIP_SMOKE:-0}" != 1 ]; then
  DOCKER="$DOCKER" scripts/smoke_image.sh "$TARGET" "$TAG"
fi
if [ -n "${PUSH:-}" ]; then
  # PUSH=<registry> (e.g. localhost:5000): push and print the digest reference to pin.
  "$DOCKER" tag "$TAG" "$PUSH/compressbench/$TARGET:latest"
  "$DOCKER" push "$PUSH/compressbench/$TARGET:latest" >&2
  "$DOCKER" inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$TAG" |
    grep -F "$PUSH/compressbench/$TARGET@" | head -n1
fi
