"""The reader a generative KEEP compressor writes with: any registered backend, built once.

``hf``, ``openai`` and ``vllm`` come from :mod:`compressbench.readers.registry` with the same
parameters as the TPBench reader; all decode greedily. A reader is shared by every compressor
built with the same backend and parameters in the process (budget scales, settings), so a
local model loads once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from compressbench.readers.base import Reader


@functools.lru_cache(maxsize=4)
def _build(backend: str, params_json: str) -> Reader:
    from compressbench.readers.registry import get_reader

    return get_reader(backend, **json.loads(params_json))


def shared_reader(backend: str, model: str | None, options: Mapping[str, Any] | None) -> Reader:
    """The reader ``backend`` for ``model`` with extra keyword ``options`` (built once)."""
    params = dict(options or {})
    if model is not None:
        params["model"] = model
    elif backend != "hf":
        raise ValueError(f"backend {backend!r} needs a model name")
    return _build(backend, json.dumps(params, sort_keys=True))
