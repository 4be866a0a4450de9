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
