"""Every compression method by name: a turn selector or a KV-cache press preset.

``params.yaml`` names methods as strings; this module says which family a name belongs to and
builds it with its parameters (``method_params`` in ``params.yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.kv import BUDGET_UNIT, PRESS_PRESETS, compression_ratio_for, get_preset
from compressbench.compress.selectors import SELECTORS, get_selector
from compressbench.compress.selectors.base import TurnSelector

TURN_BUDGET_UNIT = "dialogue_turns"


@dataclass(frozen=True)
class KVMethod:
    """A KV press preset at a ratio: what the reader runs and what every record states."""

    preset: str
    mode: str
    overrides: dict[str, Any] = field(default_factory=dict)

    def record(self, ratio: float) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "mode": self.mode,
            "compression_ratio": compression_ratio_for(ratio),
            "budget_unit": BUDGET_UNIT,
            **({"overrides": self.overrides} if self.overrides else {}),
        }


def _registries_loaded() -> None:
    get_preset("snapkv")  # imports the preset modules
    get_selector("full_context")  # imports the selector modules


def is_kv_method(name: str) -> bool:
    _registries_loaded()
    return name in PRESS_PRESETS


def known_methods() -> list[str]:
    _registries_loaded()
    return sorted({*SELECTORS, *PRESS_PRESETS})


def kv_method(name: str, params: dict[str, Any] | None = None) -> KVMethod:
    """The press preset ``name``; ``params`` may set ``mode`` and the preset's arguments."""
    p = dict(params or {})
    mode = p.pop("mode", None) or get_preset(name).default_mode
    return KVMethod(preset=name, mode=mode, overrides=p)


def method_selector(name: str, params: dict[str, Any] | None = None) -> TurnSelector:
    """The turn selector for a method: itself, or ``full_context`` for a KV press (the press
    compresses the cache of the whole dialogue)."""
    if is_kv_method(name):
        return get_selector("full_context")
    if name not in SELECTORS:
        raise KeyError(f"unknown method {name!r}; known: {', '.join(known_methods())}")
    return get_selector(name, **(params or {}))
