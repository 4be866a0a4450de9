"""Provenance: git state of the working tree, content hashes, software environment, manifests.

Everything here is cheap and free of side effects at import time: package versions come from
``importlib.metadata`` (nothing heavy is imported just to read a version), and CUDA facts are
read only when ``torch`` is already imported by the caller.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import atomic_writer, sha256_file

__all__ = [
    "MANIFEST_NAME",
    "TRACKED_PACKAGES",
    "GitInfo",
    "environment_record",
    "find_repo_root",
    "git_info",
    "hash_paths",
    "installed_distributions",
    "iter_files",
    "path_digest",
    "read_manifest",
    "sha256_file",
    "software_env",
    "verify_manifest",
    "write_manifest",
]

MANIFEST_NAME = "manifest.json"

# Distribution names whose versions go into the software environment when installed.
TRACKED_PACKAGES: tuple[str, ...] = (
    "compressbench",
    "torch",
    "transformers",
    "kvpress",
    "vllm",
    "openai",
    "mlflow",
    "dvc",
    "accelerate",
    "llmlingua",
    "sentence-transformers",
    "llama-cpp-python",
)

_TOOL_TIMEOUT_S = 10


def find_repo_root(start: str | Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: cwd) holding ``.git`` or ``dvc.yaml``.

    Falls back to ``start`` itself when no marker is found (e.g. an installed copy run from an
    arbitrary folder).
    """
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / "dvc.yaml").is_file():
            return folder
    return here


@dataclass(frozen=True)
class GitInfo:
    """State of a git working tree. ``commit`` is None outside a repo or before the first commit;
    ``dirty`` is None when unknown. Untracked files do not count as dirty (``git describe
    --dirty`` semantics), so ignored or new data files never flip the flag."""

    commit: str | None
    dirty: bool | None
    branch: str | None = None

    def as_tags(self, prefix: str = "git.") -> dict[str, str]:
        return {
            f"{prefix}commit": self.commit or "unknown",
            f"{prefix}dirty": "unknown" if self.dirty is None else str(self.dirty).lower(),
            f"{prefix}branch": self.branch or "unknown",
        }


def _tool_output(tool: str, args: list[str], cwd: Path | None = None) -> str | None:
    """Stripped stdout of ``tool args`` (exit 0), or None: tool missing, failing or hanging."""
    exe = shutil.which(tool)
    if exe is None:
        return None
    try:
        proc = subprocess.run(
            [exe, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_TOOL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _git(args: list[str], cwd: Path) -> str | None:
    return _tool_output("git", args, cwd)


def git_info(path: str | Path | None = None) -> GitInfo:
    """Commit, dirty flag and branch of the working tree containing ``path`` (default: cwd)."""
    cwd = Path(path if path is not None else Path.cwd()).resolve()
    if cwd.is_file():
        cwd = cwd.parent
    commit = _git(["rev-parse", "--verify", "-q", "HEAD"], cwd) or None
    inside = _git(["rev-parse", "--is-inside-work-tree"], cwd) == "true"
    dirty: bool | None = None
    if inside:
        status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
        dirty = None if status is None else bool(status)
        if commit is None and dirty is False:
            # Before the first commit everything is uncommitted, staged or not.
            staged = _git(["ls-files"], cwd)
            dirty = bool(staged) if staged is not None else None
    branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], cwd) if inside else None
    if branch == "HEAD":  # detached
        branch = None
    return GitInfo(commit=commit, dirty=dirty, branch=branch or None)


def _package_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cuda_facts() -> dict[str, str]:
    """CUDA facts from an already-imported torch; empty when torch is not imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    facts: dict[str, str] = {}
    try:
        cuda_build = getattr(torch.version, "cuda", None)
        if cuda_build:
            facts["torch_cuda_build"] = str(cuda_build)
        if not torch.cuda.is_available():
            facts["cuda_available"] = "false"
            return facts
        facts["cuda_available"] = "true"
        facts["cuda_device_count"] = str(torch.cuda.device_count())
        facts["cuda_device"] = torch.cuda.get_device_name(0)
        cudnn = torch.backends.cudnn.version()
        if cudnn:
            facts["cudnn"] = str(cudnn)
    except Exception as exc:  # a broken driver must not break provenance
        facts["cuda_error"] = f"{type(exc).__name__}: {exc}"[:500]
        return facts
    driver = _nvidia_driver()
    if driver:
        facts["cuda_driver"] = driver
    return facts


def _nvidia_driver() -> str | None:
    out = _tool_output("nvidia-smi", ["--query-gpu=driver_version", "--format=csv,noheader"])
    return out.splitlines()[0].strip() if out else None


def software_env(packages: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    """The software environment as a flat ``{name: value}`` dict of strings.

    Keys: ``python``, ``python_implementation``, ``platform``, ``machine``, one key per
    installed package of ``packages`` (missing packages are left out), and, when ``torch`` is
    already imported, ``torch_cuda_build``, ``cuda_available`` and (on a GPU)
    ``cuda_device``, ``cuda_device_count``, ``cudnn``, ``cuda_driver``.
    """
    env: dict[str, str] = {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    for dist in packages:
        version = _package_version(dist)
        if version is not None:
            env[dist] = version
    env.update(_cuda_facts())
    return env


def installed_distributions() -> list[dict[str, str]]:
    """Every installed distribution as ``{"name", "version"}``, sorted by normalised name.

    When a name is installed twice (two folders on ``sys.path``), the first one found (the one
    ``import`` would see) is kept.
    """
    found: dict[str, dict[str, str]] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if not name:
            continue
        key = re.sub(r"[-_.]+", "-", name).lower()  # PEP 503 normalised name
        found.setdefault(key, {"name": name, "version": dist.version})
    return [found[k] for k in sorted(found)]


def environment_record() -> dict[str, Any]:
    """The complete software environment: python, platform, every installed distribution and
    the sha256 of the canonical JSON of that distribution list (``distributions_sha256``)."""
    dists = installed_distributions()
    canonical = json.dumps(dists, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "distributions": dists,
        "distributions_sha256": hashlib.sha256(canonical.encode()).hexdigest(),
    }


def iter_files(path: str | Path, *, exclude: Iterable[Path] = ()) -> Iterator[Path]:
    """``path`` itself if a file, else every regular file under it, sorted, skipping ``exclude``
    and hidden temp files left by atomic writers (``.name.*.tmp``)."""
    p = Path(path)
    skip = {Path(e).resolve() for e in exclude}
    if p.is_file():
        if p.resolve() not in skip:
            yield p
        return
    if not p.is_dir():
        raise InputError("no such file or folder", file=str(p))
    for child in sorted(p.rglob("*")):
        if not child.is_file() or child.resolve() in skip:
            continue
        if child.name.startswith(".") and child.name.endswith(".tmp"):
            continue
        yield child


def path_digest(path: str | Path) -> str:
    """sha256 of a file; for a folder, sha256 over its sorted ``relpath\\tsha256\\n`` lines, so
    the digest changes when any file's content or name changes."""
    p = Path(path)
    if p.is_file():
        return sha256_file(p)
    h = hashlib.sha256()
    for f in iter_files(p):
        h.update(f"{f.relative_to(p).as_posix()}\t{sha256_file(f)}\n".encode())
    return h.hexdigest()


def hash_paths(
    paths: Iterable[str | Path], *, root: str | Path | None = None, exclude: Iterable[Path] = ()
) -> dict[str, dict[str, Any]]:
    """``{relpath: {"sha256": ..., "bytes": ...}}`` for every file in ``paths`` (folders walked).

    Keys are POSIX paths relative to ``root`` when the file lies under it, else as given.
    """
    base = Path(root).resolve() if root is not None else None
    out: dict[str, dict[str, Any]] = {}
    excluded = list(exclude)
    for path in paths:
        for f in iter_files(path, exclude=excluded):
            key = f.as_posix()
            if base is not None and f.resolve().is_relative_to(base):
                key = f.resolve().relative_to(base).as_posix()
            out[key] = {"sha256": sha256_file(f), "bytes": f.stat().st_size}
    return dict(sorted(out.items()))


def write_manifest(
    path: str | Path,
    outputs: Iterable[str | Path],
    *,
    stage: str | None = None,
    inputs: Iterable[str | Path] = (),
    root: str | Path | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``manifest.json``: sha256 and size of every output (and input) file, atomically.

    The manifest holds no timestamps or machine facts, so the same outputs give the same bytes
    (it can itself be a DVC output). ``root`` (default: the manifest's folder) makes paths
    relative. The manifest file itself is never listed. Returns the manifest dict.
    """
    target = Path(path)
    base = Path(root) if root is not None else target.parent
    manifest: dict[str, Any] = {"version": 1}
    if stage is not None:
        manifest["stage"] = stage
    input_list = list(inputs)
    if input_list:
        manifest["inputs"] = hash_paths(input_list, root=base, exclude=[target])
    manifest["outputs"] = hash_paths(outputs, root=base, exclude=[target])
    if extra:
        manifest["extra"] = dict(extra)
    with atomic_writer(target) as fh:
        fh.write(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return manifest


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Load a manifest written by :func:`write_manifest`, checking its shape."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", file=str(p)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("outputs"), dict):
        raise InputError("not a manifest (no 'outputs' object)", file=str(p), field="outputs")
    return data


def verify_manifest(path: str | Path, *, root: str | Path | None = None) -> list[str]:
    """Files whose content no longer matches the manifest (changed or missing); empty if clean."""
    p = Path(path)
    base = Path(root) if root is not None else p.parent
    data = read_manifest(p)
    bad: list[str] = []
    for section in ("inputs", "outputs"):
        for rel, entry in data.get(section, {}).items():
            f = Path(rel) if Path(rel).is_absolute() else base / rel
            if not f.is_file() or sha256_file(f) != entry.get("sha256"):
                bad.append(rel)
    return bad
