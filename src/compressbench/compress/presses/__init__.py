"""KV-press presets, one file each; importing this package registers every preset.

:func:`get_press` builds a preset (``snapkv``...) for a retained fraction ``r``, or any kvpress
press by class name (``"SnapKVPress"``).
"""

from typing import Any

from compressbench.compress.kv.build import build_press
from compressbench.compress.kv.presets import PRESS_PRESETS, PressPreset, compression_ratio_for
from compressbench.compress.kv.vendored import patch_kvpress
from compressbench.compress.presses import chunkkv, pyramidkv, snapkv, streamingllm

__all__ = ["chunkkv", "get_preset", "get_press", "pyramidkv", "snapkv", "streamingllm"]


def get_preset(name: str) -> PressPreset:
    """A registered preset by name."""
    return PRESS_PRESETS[name]  # KeyError naming the allowed ones


def get_press(name: str, r: float, **overrides: Any) -> Any:
    """Build a preset (``snapkv``...) for retained fraction ``r``, or any kvpress class by name
    (``"SnapKVPress"``, with ``compression_ratio = 1 - r`` unless given). kvpress gets the
    ``cache_position`` shim first (:func:`compressbench.compress.kv.vendored.patch_kvpress`)."""
    patch_kvpress()
    if name in PRESS_PRESETS:
        return PRESS_PRESETS[name].build(r, **overrides)
    overrides.setdefault("compression_ratio", compression_ratio_for(r))
    return build_press(name, **overrides)
