"""The registry every KEEP-Bench compressor registers in (a leaf: imports no compressor).

A compressor is one file with a dataclass decorated ``@register_compressor("<name>")``; its
fields are its ``method_params``, read from the signature, so validation imports no model.
:mod:`compressbench.keepbench.compressors.family` imports every compressor file and exposes
them to the project's Method registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compressbench.registry import Registry

COMPRESSORS: Registry[Callable[..., Any]] = Registry("KEEP compressor")
register_compressor = COMPRESSORS.register

# The fields of each compressor that name a file or folder it reads (a checkpoint, prompts,
# demonstrations; a model id a library resolves is recorded as a name): the keep_method_files
# stage fingerprints them, so a compressor's cell reruns when their content changes.
PATH_PARAMS: dict[str, tuple[str, ...]] = {
    "llm": ("model", "prompt_dir", "demonstrations"),
    "recomp_extractive": ("checkpoint",),
    "recomp_abstractive": ("checkpoint",),
    "brief_pro": ("model",),
    "exit": ("base", "adapter"),
}
