"""The data version a run used, beside ``git.commit``: the DVC lock it found and, for a stage
run, the hash of each declared dependency exactly as DVC writes it into ``dvc.lock``.

Tags: ``dvc.lock_file`` and ``dvc.lock_sha256`` (sha256 of that lock file as found when the run
opened, ``none`` when absent; during ``dvc repro`` it holds the stages that ran before this
one), and, inside :func:`stage_deps` (``compressbench stage`` sets it from the stage's
declaration), ``dvc.dep.<path>`` per dependency (DVC's md5 of a file, ``<md5>.dir`` of a
folder with the files ``.dvcignore`` hides left out: the ``md5`` of that dependency in the
stage's ``dvc.lock`` entry once the stage has run), ``dvc.deps_digest`` (sha256 over the
sorted ``path<TAB>md5`` lines) and ``dvc.stage_address`` (``$DVC_STAGE``, set by DVC).
Hashing uses ``dvc_data`` directly: no ``dvc.repo.Repo`` is opened, so it runs inside a stage
while ``dvc repro`` holds the repository lock.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from compressbench.jsonl import sha256_file
from compressbench.tracking.values import safe_key

__all__ = ["StageDeps", "data_version_tags", "dvc_md5", "stage_deps"]

LOCK_FILE_TAG = "dvc.lock_file"
LOCK_TAG = "dvc.lock_sha256"
DEP_TAG_PREFIX = "dvc.dep."
DEPS_DIGEST_TAG = "dvc.deps_digest"
ADDRESS_TAG = "dvc.stage_address"
MAIN_LOCK = "dvc.lock"
NONE = "none"
MISSING = "missing"


@dataclass(frozen=True)
class StageDeps:
    """The running stage's dependencies and lock file (paths relative to the repository root)."""

    deps: tuple[str, ...]
    lock_file: str = MAIN_LOCK


_CURRENT: contextvars.ContextVar[StageDeps | None] = contextvars.ContextVar(
    "compressbench_stage_deps", default=None
)


@contextlib.contextmanager
def stage_deps(deps: Sequence[str], lock_file: str = MAIN_LOCK) -> Iterator[StageDeps]:
    """Within this block every run opened records ``deps``' hashes and ``lock_file``."""
    current = StageDeps(tuple(deps), lock_file)
    token = _CURRENT.set(current)
    try:
        yield current
    finally:
        _CURRENT.reset(token)


def dvc_md5(paths: Sequence[str | Path], root: str | Path) -> dict[str, str]:
    """DVC's hash of each dependency in ``paths`` (relative to repository ``root``) as
    ``dvc.lock`` writes it: ``<md5>`` of a file, ``<md5>.dir`` of a folder; ``missing`` when
    absent. Raises ImportError without dvc."""
    from dvc.ignore import DvcIgnoreFilter  # the module only; no repository is opened
    from dvc_data.hashfile.build import build
    from dvc_data.hashfile.db import HashFileDB
    from dvc_objects.fs.local import LocalFileSystem

    top = Path(root).resolve()
    fs = LocalFileSystem()
    ignore = DvcIgnoreFilter(fs, os.fspath(top))
    # dry_run: nothing is written; the odb only names the in-memory staging area.
    odb = HashFileDB(fs, os.fspath(top / ".dvc" / "compressbench-dry-run"))
    hashes = {}
    for path in paths:
        target = top / path
        if not target.exists():
            hashes[str(path)] = MISSING
            continue
        inside = target.resolve().is_relative_to(top)  # .dvcignore rules apply inside only
        _, _, obj = build(
            odb, os.fspath(target), fs, "md5", ignore=ignore if inside else None, dry_run=True
        )
        hashes[str(path)] = str(obj.hash_info.value)
    return hashes


def _dep_tags(root: Path, current: StageDeps) -> dict[str, str]:
    try:
        hashes = dvc_md5(current.deps, root)
    except ImportError:  # the pipeline extra (dvc) is not installed
        hashes = dict.fromkeys(current.deps, "unknown (dvc not installed)")
    lines = "".join(f"{dep}\t{value}\n" for dep, value in sorted(hashes.items()))
    tags = {f"{DEP_TAG_PREFIX}{safe_key(dep)}": value for dep, value in hashes.items()}
    tags[DEPS_DIGEST_TAG] = hashlib.sha256(lines.encode()).hexdigest()
    return tags


def data_version_tags(root: str | Path) -> dict[str, str]:
    """The data-version tags of a run opened now under repository ``root`` (see module doc)."""
    base = Path(root)
    current = _CURRENT.get()
    lock_file = current.lock_file if current is not None else MAIN_LOCK
    lock = base / lock_file
    tags = {LOCK_FILE_TAG: lock_file, LOCK_TAG: sha256_file(lock) if lock.is_file() else NONE}
    address = os.environ.get("DVC_STAGE", "").strip()
    if address:
        tags[ADDRESS_TAG] = address
    if current is not None:
        tags.update(_dep_tags(base, current))
    return tags
