"""kvpress's presses where only torch and transformers are installed (a bare GPU machine).

``import kvpress`` runs its package ``__init__``, which imports every press, and some presses
import ``datasets``, ``fire``, ``cachetools`` and ``requests`` at module level. A GPU machine
with only torch and transformers cannot import it. :func:`load_kvpress` therefore registers
a bare ``kvpress`` package (kvpress's own directory, its ``__init__`` not run), imports the
press modules TPBench uses from it, exposes their classes on the package as kvpress's
``__init__`` would, and applies kvpress's attention patch as that ``__init__`` does. The
source may be the pure-Python wheel itself: wheels are zip archives and import from
``sys.path`` as they are. :mod:`.build` and the presets then work unchanged.

kvpress 0.5.5 supports transformers < 5.3; newer transformers (5.17 on the H200 machine) no
longer pass ``cache_position`` to the attention layers, which kvpress's forward hook reads to
tell prefill from decoding. :func:`fill_cache_position` derives it from the cache instead (the
positions of this forward's queries: the cache's length after the update, minus the query
length), only when it is missing. :func:`patch_kvpress` applies it to the ``kvpress`` in use;
every press TPBench and KEEP-Bench build goes through
:func:`compressbench.compress.presses.get_press`, which calls it, so a press runs through the
shim wherever it runs (the stages, the ray workers, the scripts).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

# The press modules TPBench uses (and what they import), as (module, class names).
PRESS_MODULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kvpress.presses.base_press", ("BasePress",)),
    ("kvpress.presses.scorer_press", ("ScorerPress",)),
    ("kvpress.presses.snapkv_press", ("SnapKVPress",)),
    ("kvpress.presses.pyramidkv_press", ("PyramidKVPress",)),
    ("kvpress.presses.streaming_llm_press", ("StreamingLLMPress",)),
    ("kvpress.presses.chunkkv_press", ("ChunkKVPress",)),
)


def find_wheel(folder: str | Path) -> Path | None:
    """The newest ``kvpress-*.whl`` in ``folder`` (None if there is none)."""
    wheels = sorted(Path(folder).glob("kvpress-*.whl"))
    return wheels[-1] if wheels else None


def fill_cache_position(base_press: Any) -> None:
    """Make ``base_press.forward_hook`` work where transformers passes no ``cache_position``."""
    hook: Callable[..., Any] = base_press.forward_hook
    if getattr(hook, "fills_cache_position", False):
        return

    @functools.wraps(hook)
    def forward_hook(self: Any, module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        if "cache_position" not in kwargs:
            import torch

            hidden = kwargs["hidden_states"]
            total = kwargs["past_key_values"].get_seq_length(module.layer_idx)
            start = total - hidden.shape[1]
            kwargs = {**kwargs, "cache_position": torch.arange(start, total, device=hidden.device)}
        return hook(self, module, args, kwargs, output)

    setattr(forward_hook, "fills_cache_position", True)  # noqa: B010
    base_press.forward_hook = forward_hook


def patch_kvpress() -> ModuleType:
    """The ``kvpress`` module in use (the installed one, or the bare one :func:`load_kvpress`
    registered), its ``BasePress.forward_hook`` wrapped by :func:`fill_cache_position`."""
    import kvpress

    fill_cache_position(kvpress.BasePress)
    return kvpress


def load_kvpress(wheel: str | Path | None = None) -> tuple[ModuleType, str]:
    """The ``kvpress`` module and how it was loaded (``"installed"`` or ``"bare:<path>"``).

    The installed package is used when it imports; otherwise the bare package is built from
    ``wheel`` (a ``.whl`` file, put on ``sys.path``) or from wherever ``kvpress`` is found.
    Raises ImportError when neither works.
    """
    if wheel is None:
        try:
            import kvpress

            fill_cache_position(kvpress.BasePress)
            return kvpress, "installed"
        except ImportError:
            pass
    else:
        sys.path.insert(0, str(wheel))
    for name in [m for m in sys.modules if m == "kvpress" or m.startswith("kvpress.")]:
        del sys.modules[name]  # a half-imported installed package must not shadow the bare one
    spec = importlib.util.find_spec("kvpress")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"kvpress not found (wheel: {wheel})")
    package = ModuleType("kvpress")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    package.__file__ = spec.origin
    sys.modules["kvpress"] = package
    presses = ModuleType("kvpress.presses")
    presses.__path__ = [str(Path(package.__path__[0]) / "presses")]
    sys.modules["kvpress.presses"] = presses
    package.presses = presses  # type: ignore[attr-defined]
    for module_name, classes in PRESS_MODULES:
        module = importlib.import_module(module_name)
        for cls in classes:
            setattr(package, cls, getattr(module, cls))
    patch = importlib.import_module("kvpress.attention_patch")
    patch.patch_attention_functions()
    fill_cache_position(package.BasePress)
    return package, f"bare:{package.__path__[0]}"
