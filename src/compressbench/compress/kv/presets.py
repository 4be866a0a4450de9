"""The registry of KV press presets: named recipes that take the retained fraction ``r``.

Presets live one file each in :mod:`compressbench.compress.presses` and register here with
:func:`register_press_preset`; this module never imports them back (importing
``compressbench.compress.presses`` registers them all). A preset knows its parameters from
its factory's signature, so ``params.yaml`` is validated without importing kvpress.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compressbench.compress.kv.record import check_mode
from compressbench.registry import Registry

PresetFactory = Callable[..., Any]


def compression_ratio_for(r: float) -> float:
    """kvpress ``compression_ratio`` (fraction dropped) for a retained fraction ``r``."""
    if not 0.0 < r <= 1.0:
        raise ValueError(f"retained fraction r must be in (0, 1], got {r}")
    return round(1.0 - r, 10)


@dataclass(frozen=True)
class PressPreset:
    """A named press recipe: ``factory(r, **overrides)`` builds the press for fraction ``r``."""

    name: str
    factory: PresetFactory
    default_mode: str

    def build(self, r: float, **overrides: Any) -> Any:
        return self.factory(r, **overrides)

    __call__ = build  # a preset is the factory the registry holds

    def parameters(self) -> dict[str, inspect.Parameter]:
        """The settings ``method_params`` may override (the factory's, less ``r``)."""
        params = list(inspect.signature(self.factory).parameters.values())
        return {p.name: p for p in params[1:]}


PRESS_PRESETS: Registry[PressPreset] = Registry("press preset")


def register_press_preset(
    name: str, *, default_mode: str = "full_prompt"
) -> Callable[[PresetFactory], PresetFactory]:
    """Decorator for a preset factory ``(r, **overrides) -> press``."""
    check_mode(default_mode)

    def deco(factory: PresetFactory) -> PresetFactory:
        PRESS_PRESETS.register(name, PressPreset(name, factory, default_mode))
        return factory

    return deco
