#!/bin/sh
# `pip-install <pip install args>` inside docker/Dockerfile's build stages: the venv's pip, the `ca` BuildKit
# secret as pip's CA bundle when the build was given one, no byte-code at install time; then all
# byte-code of the venv compiled with hash-checked headers (no source mtimes inside, so the layer
# is reproducible and the .pyc files never go stale) and the layer normalized.
set -eu
normalize-layer begin
if [ -f /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi
/opt/venv/bin/python -m pip install -q --no-cache-dir --no-compile "$@"
find /opt/venv -name __pycache__ -type d -prune -exec rm -rf {} +
# Files that are not Python 3 (templates, test data in some packages) do not compile: skipped,
# as pip's own byte-compilation skips them.
/opt/venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv >/dev/null || true
normalize-layer end
