"""Write the hashed lock files of the Docker images from pyproject.toml (the one way to make them).

    python scripts/lock.py            # regenerate docker/requirements-{cpu,cuda}.lock
    python scripts/lock.py --check    # exit 1 if a lock no longer matches pyproject.toml (offline)

Each target names the extras it installs; ``uv pip compile --generate-hashes`` resolves them for
CPython 3.11 on linux x86_64 (the Debian bookworm base: glibc 2.36) and every pinned
distribution carries its sha256, so ``pip install --require-hashes`` installs exactly these
files. uv does the resolving and hashing; this script only fixes the inputs and writes a header
with the sha256 of the requirement set it locked (``requirements-sha256``), which ``--check``
and tests/project/test_docker_static.py compare with pyproject.toml without any network.

- ``cpu``: the extras ``.ci/run`` installs (``all``); torch is the CPU wheel (``2.13.0+cpu``),
  whose public source is PyTorch's CPU index: the lock names it (``--extra-index-url``, which
  pip reads from the file). Resolving reads this machine's mirror of that wheel
  (``/opt/wheels``) when it holds one, else the index itself.
- ``cuda``: readers, presses, pipeline and Ray workers plus vLLM; torch is the CUDA build from
  PyPI at the version vLLM is built against (``docker/cuda-overrides.txt``; the ``models`` extra
  pins the CPU version), its CUDA libraries (``nvidia-*`` wheels) locked with it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "compressbench"
PYTHON_VERSION = "3.11"
PLATFORM = "x86_64-manylinux_2_36"  # Debian bookworm's glibc
LOCAL_WHEELS = Path("/opt/wheels")
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
HASH_KEY = "requirements-sha256"


@dataclass(frozen=True)
class Target:
    """One image's lock: the extras it installs and the overrides applied on top."""

    name: str
    extras: tuple[str, ...]
    overrides: str | None = None  # repo-relative file of uv overrides
    cpu_torch: bool = False

    @property
    def lock(self) -> Path:
        return ROOT / "docker" / f"requirements-{self.name}.lock"


TARGETS: dict[str, Target] = {
    "cpu": Target("cpu", ("all",), cpu_torch=True),
    "cuda": Target(
        "cuda", ("models", "pipeline", "scale", "vllm"), overrides="docker/cuda-overrides.txt"
    ),
}


def expand_extras(pyproject: dict, extras: tuple[str, ...]) -> list[Requirement]:
    """The project's dependencies plus those of ``extras``, self-references
    (``compressbench[a,b]``) followed; sorted and without duplicates."""
    optional = pyproject["project"].get("optional-dependencies", {})
    seen_extras: set[str] = set()
    found: dict[str, Requirement] = {}
    todo = list(extras)
    reqs = [Requirement(r) for r in pyproject["project"].get("dependencies", [])]
    while todo:
        extra = todo.pop()
        if extra in seen_extras:
            continue
        if extra not in optional:
            raise SystemExit(f"pyproject.toml: no optional-dependencies extra {extra!r}")
        seen_extras.add(extra)
        for text in optional[extra]:
            req = Requirement(text)
            if canonicalize_name(req.name) == PROJECT:
                todo.extend(req.extras)
            else:
                reqs.append(req)
    for req in reqs:
        found.setdefault(str(req), req)
    return [found[k] for k in sorted(found)]


def requirement_set_sha256(target: Target, root: Path = ROOT) -> str:
    """sha256 over the sorted requirement strings of ``target`` and its overrides file."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    lines = [str(r) for r in expand_extras(pyproject, target.extras)]
    if target.overrides:
        lines += ["--override", *override_lines(root / target.overrides)]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def override_lines(path: Path) -> list[str]:
    """Requirement lines of an overrides file (comments and blanks dropped)."""
    text = path.read_text(encoding="utf-8").splitlines()
    return [s for line in text if (s := line.split("#", 1)[0].strip())]


def header_sha256(lock: Path) -> str | None:
    """The ``requirements-sha256`` a lock file's header records (None if absent)."""
    if not lock.is_file():
        return None
    m = re.search(rf"^# {HASH_KEY}: ([0-9a-f]{{64}})$", lock.read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else None


def uv_command(target: Target, out: Path) -> list[str]:
    uv = shutil.which("uv") or sys.exit("uv not found: pip install uv")
    cmd = [uv, "pip", "compile", "pyproject.toml", "--quiet", "--generate-hashes"]
    cmd += ["--no-header", "--python-version", PYTHON_VERSION, "--python-platform", PLATFORM]
    cmd += ["--index-strategy", "unsafe-best-match", "--output-file", str(out)]
    # Keep `name[extra]==version`: pip --require-hashes refuses a dependency that asks for an
    # extra (flashinfer-python -> cuda-tile[tileiras]) unless the lock pins it with the extra.
    cmd += ["--no-strip-extras"]
    for extra in target.extras:
        cmd += ["--extra", extra]
    if target.overrides:
        cmd += ["--override", target.overrides]
    if target.cpu_torch:
        if any(LOCAL_WHEELS.glob("torch-*+cpu-*.whl")):
            cmd += ["--find-links", str(LOCAL_WHEELS)]
        else:
            cmd += ["--extra-index-url", TORCH_CPU_INDEX]
    return cmd


def index_lines(target: Target) -> str:
    """The package indexes a lock names besides PyPI (the public source of each wheel)."""
    if not target.cpu_torch:
        return ""
    comment = "# torch's CPU build is published on PyTorch's CPU index."
    return f"{comment}\n--extra-index-url {TORCH_CPU_INDEX}\n"


def write_lock(target: Target) -> None:
    """Resolve ``target`` with uv and write its lock atomically, header first."""
    env = dict(os.environ)
    ca = Path("/etc/ssl/certs/ca-certificates.crt")
    if "SSL_CERT_FILE" not in env and ca.is_file():
        env["SSL_CERT_FILE"] = str(ca)  # uv trusts this machine's CA bundle, as pip does
    tmp = target.lock.with_suffix(".lock.tmp")
    subprocess.run(uv_command(target, tmp), cwd=ROOT, env=env, check=True)
    body = tmp.read_text(encoding="utf-8")
    header = (
        f"# Generated by `python scripts/lock.py` from pyproject.toml: do not edit.\n"
        f"# target: {target.name}; extras: {','.join(target.extras)}; "
        f"python {PYTHON_VERSION}; platform {PLATFORM}\n"
        f"# {HASH_KEY}: {requirement_set_sha256(target)}\n"
        f"{index_lines(target)}"
    )
    tmp.write_text(header + body, encoding="utf-8")
    tmp.replace(target.lock)
    print(f"wrote {target.lock.relative_to(ROOT)}", file=sys.stderr)


def stale(target: Target) -> str | None:
    """Why ``target``'s lock does not match pyproject.toml, or None when it does."""
    recorded = header_sha256(target.lock)
    if recorded is None:
        return f"{target.lock.relative_to(ROOT)}: missing or without '{HASH_KEY}'"
    if recorded != requirement_set_sha256(target):
        return f"{target.lock.relative_to(ROOT)}: pyproject.toml changed since it was locked"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"of {sorted(TARGETS)} (default: all)")
    parser.add_argument("--check", action="store_true", help="compare only; no network")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.targets) - set(TARGETS))
    if unknown:
        parser.error(f"unknown target(s) {unknown}; allowed: {sorted(TARGETS)}")
    targets = [TARGETS[n] for n in (args.targets or TARGETS)]
    if args.check:
        problems = [p for t in targets if (p := stale(t))]
        for p in problems:
            print(f"{p} (run: python scripts/lock.py)", file=sys.stderr)
        return 1 if problems else 0
    for target in targets:
        write_lock(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
