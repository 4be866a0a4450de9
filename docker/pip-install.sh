#!/bin/sh
# `pip-install <pip install args>` inside docker/Dockerfile's build stages: the venv's pip, the `ca` BuildKit
# secret as pip's CA bundle when the build was given one, no byte-code at install time; then all
# byte-code of the venv compiled with hash-checked headers (no source mtimes inside, so the layer
# is reproducible and the .pyc files never go stale) and the layer normalized.
set -eu
normalize-layer begin
if [ -f /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi
/opt/venv/bin/python -m pip install -q --no-cache-dir --no-compile "$@"
# A pkg-config file built by scikit-build-core names the wheel's random staging folder as its
# prefix: point it at the folder it was installed to and update its line in the RECORD.
/opt/venv/bin/python - <<'PY'
import base64, hashlib, pathlib, re
site = next(pathlib.Path("/opt/venv/lib").glob("python3*/site-packages"))
for record in site.glob("*.dist-info/RECORD"):
    lines, changed = record.read_text().splitlines(), False
    for i, line in enumerate(lines):
        path = line.split(",")[0]
        if not path.endswith(".pc") or not (site / path).is_file():
            continue
        text = (site / path).read_text()
        new = re.sub(r"/tmp/tmp[^/\s]*/wheel/platlib", str(site), text)
        if new != text:
            (site / path).write_text(new)
            digest = base64.urlsafe_b64encode(hashlib.sha256(new.encode()).digest())
            lines[i] = f"{path},sha256={digest.rstrip(b'=').decode()},{len(new.encode())}"
            changed = True
    if changed:
        record.write_text("\n".join(lines) + "\n")
PY
find /opt/venv -name __pycache__ -type d -prune -exec rm -rf {} +
# Files that are not Python 3 (templates, test data in some packages) do not compile: skipped,
# as pip's own byte-compilation skips them.
/opt/venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv >/dev/null || true
normalize-layer end
