"""Extractive KEEP compressions through the answer cache (resumable after ``kill -9``).

Generative compressors already go through the answer cache as reader calls. Extractive ones
(RECOMP-extractive, EXIT, sentence selectors) run a model per sentence and produce no
generation, so each finished compression is stored in the same sqlite cache as a
:class:`~compressbench.readers.base.Generation` whose ``record`` holds the
:class:`~compressbench.compress.method.Compression`, under the sha256 of (method name, its
described parameters, budget scale, the case as JSON). Each is committed as soon as it is done;
a rerun recomputes only the missing ones. A fresh compression is returned as the cache stores
it (its record's keys sorted), so a cell's output is the same bytes cold or warm.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from compressbench.compress.method import Compression, Source
from compressbench.jsonl import canonical_json
from compressbench.keepbench.cases import case_to_dict
from compressbench.readers.base import Generation, json_record
from compressbench.readers.cache import AnswerCache

KIND = "keep_compression"


def compression_key(name: str, method: Any, scale: float, source: Source) -> str:
    payload = {
        "kind": KIND,
        "method": name,
        "params": method.describe(),
        "budget_scale": float(scale),
        "case": case_to_dict(source.case),  # type: ignore[attr-defined]
    }
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def _to_generation(case_id: str, comp: Compression) -> Generation:
    record = json_record({"compression": dataclasses.asdict(comp)})  # as the cache stores it
    return Generation(id=case_id, raw=comp.text, json_text=None, error=None, record=record)


def _from_generation(gen: Generation) -> Compression:
    fields = dict((gen.record or {})["compression"])
    fields["kept_ids"] = tuple(fields["kept_ids"])
    return Compression(**fields)


def compress_cached(
    name: str, method: Any, sources: Sequence[Source], scale: float, cache: AnswerCache
) -> tuple[list[Compression], dict[str, int]]:
    """Every source's compression: cached ones read back, the rest computed and stored."""
    keys = [compression_key(name, method, scale, s) for s in sources]
    found = cache.entries(keys)
    out: list[Compression] = []
    for key, source in zip(keys, sources, strict=True):
        entry = found.get(key)
        if entry is not None:
            out.append(_from_generation(entry.generation))
            continue
        generation = _to_generation(source.key, method.compress(source, scale))
        cache.put(key, generation, {"kind": KIND, "method": name})
        out.append(_from_generation(generation))
    return out, {"cached": sum(1 for k in keys if k in found), "computed": len(keys) - len(found)}
