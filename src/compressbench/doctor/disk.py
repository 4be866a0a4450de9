"""Check ``disk``: free space where the reader's weights go, for what is not there yet.

The folder is ``--cache-dir``, else the Hub cache (``HF_HUB_CACHE`` / ``$HF_HOME/hub``) for a
Hub model and ``$COMPRESSBENCH_CACHE/models`` for a packaged GGUF (joined there on first use).
The need is the model's size (:mod:`compressbench.doctor.model`) less what is already cached,
plus :data:`MARGIN`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from compressbench.doctor import model
from compressbench.doctor.base import FAIL, PASS, Context, Result, Skip, gib

#: Room beyond the weights (a download's metadata, a tokenizer, the config).
MARGIN = 1.05


def _existing(folder: Path) -> Path:
    """The folder, or its nearest ancestor that exists (where it would be created)."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def check_disk(ctx: Context) -> Result:
    spec = ctx.reader
    src = model.source(spec)
    if src.kind == model.SERVER:
        raise Skip("reader openai: the weights live on the server")
    size = model.size(ctx, src, spec)
    if size is None:
        raise Skip(f"size of {spec.model} unknown: {model.unknown_reason(ctx, src)}")
    folder = src.ref if src.kind == model.LOCAL else model.cache_dir(ctx, src)
    at = _existing(Path(folder))
    if not at.is_dir():
        return Result("disk", FAIL, f"{folder}: {at} is not a folder")
    free = shutil.disk_usage(at).free
    have = min(model.cached(ctx, src, size.weights), size.weights)
    need = int((size.weights - have) * MARGIN)
    figures = {
        "folder": str(folder),
        "free_bytes": free,
        "weights_bytes": size.weights,
        "cached_bytes": have,
        "need_bytes": need,
        "size_from": size.origin,
    }
    there = f"{gib(have)} already there" if have else "none cached"
    what = f"weights {gib(size.weights)} from {size.origin}, {there}"
    if free < need:
        text = f"{folder}: {gib(free)} free < {gib(need)} needed ({what})"
        return Result("disk", FAIL, text, figures)
    needed = f"{gib(need)} needed" if need else "nothing to fetch"
    return Result("disk", PASS, f"{folder}: {gib(free)} free, {needed} ({what})", figures)
