#!/usr/bin/env bash
# Run the default pipeline (`dvc repro`) of one commit on the host and inside the CPU image,
# then compare the metrics files byte for byte (sha256 + cmp of every file under metrics/).
#
#   scripts/verify_cpu_image.sh [COMMIT]      # default HEAD; needs root, docker, the venv
#
# Both runs start from the same `git archive` of COMMIT in fresh copies with fresh caches; the
# image is built from that snapshot plus the working tree's docker/ folder (build_image.sh), so
# the code inside the container is the code the host runs. Host: the active Python environment,
# with the snapshot's src/ first on PYTHONPATH. Container: the image's default command with the
# copy bind-mounted at /workspace (owned by the image's uid 10001) and new named volumes for the
# caches and the MLflow store. SKIP_BUILD=1 / SKIP_HOST=1 reuse an image / a finished host run;
# QUICK=1 sets n_per_cell 4 and methods [full_context, recency] in both copies' params.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
COMMIT=${1:-HEAD}
WORK=${WORK:-/var/tmp/compressbench-verify}
DOCKER=${DOCKER:-/usr/bin/docker}
TAG=${TAG:-compressbench:cpu}
log() { echo "[verify] $(date -u +%H:%M:%S) $*" >&2; }

mkdir -p "$WORK"
if [ "${SKIP_HOST:-0}" != 1 ] || [ ! -d "$WORK/snap" ]; then
  rm -rf "$WORK/snap" && mkdir -p "$WORK/snap"
  git archive "$COMMIT" | tar -x -C "$WORK/snap"
  cp -a .git "$WORK/snap/.git"  # same commit, clean tree: DVC and the git.* tags see a repo
  if [ "${QUICK:-0}" = 1 ]; then  # the same stages on less work: 4 questions, 2 methods
    sed -i -E 's/^n_per_cell: [0-9]+/n_per_cell: 4/; s/^methods: \[.*\]/methods: [full_context, recency]/' \
      "$WORK/snap/params.yaml"
  fi
fi

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  rm -rf "$WORK/ctx" && cp -a "$WORK/snap" "$WORK/ctx" && rm -rf "$WORK/ctx/.git"
  mkdir -p "$WORK/ctx/docker" && cp -a docker/. "$WORK/ctx/docker/"
  CONTEXT="$WORK/ctx" TAG="$TAG" scripts/build_image.sh cpu
fi

if [ "${SKIP_HOST:-0}" != 1 ]; then
  log "host run: dvc repro in $WORK/host"
  rm -rf "$WORK/host" "$WORK/host-cache" && cp -a "$WORK/snap" "$WORK/host"
  (cd "$WORK/host" && env -u MLFLOW_TRACKING_URI PYTHONPATH="$WORK/host/src" \
    COMPRESSBENCH_CACHE="$WORK/host-cache" /usr/bin/time -f "host wall %e s" dvc repro >"$WORK/host.log" 2>&1)
fi

log "container run: $TAG (default command) on $WORK/ctr"
# data/ is git-ignored, so a fresh archive has none: made here, or docker would create it as root
# for the bind mount below and the image's uid 10001 could not write its stages' outputs.
rm -rf "$WORK/ctr" && cp -a "$WORK/snap" "$WORK/ctr" && mkdir -p "$WORK/ctr/data" \
  && chown -R 10001:10001 "$WORK/ctr"
for v in cb-verify-cache cb-verify-mlflow; do "$DOCKER" volume rm -f "$v" >/dev/null; done
/usr/bin/time -f "container wall %e s" "$DOCKER" run --rm --network none \
  -v "$WORK/ctr:/workspace" -v "$WORK/ctr/data:/workspace/data" \
  -v cb-verify-cache:/cache -v cb-verify-mlflow:/mlflow "$TAG" >"$WORK/container.log" 2>&1

log "metrics files (sha256 host / container):"
status=0
while IFS= read -r rel; do
  h=$(sha256sum "$WORK/host/$rel" | cut -d' ' -f1)
  c=$(sha256sum "$WORK/ctr/$rel" 2>/dev/null | cut -d' ' -f1 || true)
  if cmp -s "$WORK/host/$rel" "$WORK/ctr/$rel"; then mark=same; else mark=DIFFERENT; status=1; fi
  echo "$mark $h ${c:-missing} $rel"
done < <(cd "$WORK/host" && find metrics -type f | sort)
[ -n "$(cd "$WORK/host" && find metrics -type f)" ] || { log "no metrics files from the host run"; exit 1; }

log "image identity logged on the container's MLflow runs:"
"$DOCKER" run --rm --network none -v cb-verify-mlflow:/mlflow "$TAG" python -c '
import collections, mlflow
runs = mlflow.search_runs(search_all_experiments=True, output_format="list")
seen = collections.Counter((r.data.tags.get("image.lock_sha256"), r.data.tags.get("image.base_digest")) for r in runs)
for (lock, base), n in seen.items(): print(f"{n} runs: image.lock_sha256={lock} image.base_digest={base}")
'
exit "$status"
