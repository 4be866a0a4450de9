#!/bin/sh
# Entry point of the compressbench images: the CLI. `docker run IMAGE stage metrics` runs
# `compressbench stage metrics`; the default command and the tools below run as given
# (`docker run IMAGE` = `dvc repro`, `docker run IMAGE dvc metrics show`, `... python -V`).
set -e
case "${1:-}" in
  "") exec dvc repro ;;
  dvc|python|python3|pytest|mlflow|vllm|compressbench|sh|bash) exec "$@" ;;
  *) exec compressbench "$@" ;;
esac
