"""Every KEEP-Bench method by name, and the ``keep_compressor`` family of the Method registry.

Importing this module imports every compressor file (each registers itself).
:data:`FAMILY` joins :mod:`compressbench.compress.registry` through the
``compressbench.method_families`` entry point in ``pyproject.toml`` (``compress`` may not
import ``keepbench``), so ``get_method("recomp_extractive")`` and the ``params.yaml`` checks
serve both benchmarks; its ``units`` are ``sentences``.

:func:`keep_method` is what KEEP stages call: a registered compressor, else a TPBench turn
selector that is meaningful on sentences, wrapped by
:class:`~compressbench.keepbench.compressors.selectors.SentenceSelectorMethod`, else a KV press
(preset or kvpress class) run on the case by the reader,
:class:`~compressbench.keepbench.compressors.presses.KeepPressMethod`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compressbench.compress.method import Method
from compressbench.compress.registry import Family, MethodEntry
from compressbench.errors import InputError
from compressbench.keepbench.compressors import (  # noqa: F401  (each file registers itself)
    brief_pro,
    llm,
    recomp_abstractive,
    recomp_extractive,
)
from compressbench.keepbench.compressors import exit as exit_compressor  # noqa: F401
from compressbench.keepbench.compressors.presses import (
    KeepPressMethod,
    check_press_values,
    is_keep_press,
    keep_press_names,
    press_parameters,
)
from compressbench.keepbench.compressors.registry import COMPRESSORS, PATH_PARAMS
from compressbench.keepbench.compressors.selectors import (
    SentenceSelectorMethod,
    selector_parameters,
    sentence_selector_names,
)
from compressbench.registry import check_parameters

FAMILY_NAME = "keep_compressor"
UNITS = "sentences"


def _entry(name: str) -> MethodEntry | None:
    if name not in COMPRESSORS:
        return None

    def build(params: dict[str, Any]) -> Method:
        method: Method = COMPRESSORS.build(name, **params)
        return method

    parameters = COMPRESSORS.parameters(name)
    return MethodEntry(name, FAMILY_NAME, parameters, build, paths=PATH_PARAMS.get(name, ()))


FAMILY = Family(FAMILY_NAME, lambda: COMPRESSORS, _entry, units=UNITS)


def keep_method_names() -> list[str]:
    """Every name :func:`keep_method` builds: compressors, sentence selectors, KV presses."""
    return sorted({*COMPRESSORS, *sentence_selector_names(), *keep_press_names()})


def keep_method_parameters(name: str) -> tuple[str, ...]:
    if name in COMPRESSORS:
        return COMPRESSORS.parameters(name)
    if name in sentence_selector_names():
        return selector_parameters(name)
    return press_parameters(name)


def check_keep_method(
    name: Any,
    params: Mapping[str, Any] | None = None,
    *,
    source: str = "params.yaml",
    field: str = "keepbench.compressors",
) -> None:
    """InputError naming ``source`` and the field unless ``name`` and ``params`` are valid."""
    names = keep_method_names()
    if not isinstance(name, str) or name not in names:
        raise InputError(
            f"unknown KEEP compressor {name!r}; allowed: {', '.join(names)}",
            file=source,
            field=field,
        )
    check_parameters(
        params,
        keep_method_parameters(name),
        owner=f"KEEP compressor {name!r}",
        source=source,
        field=f"{field}.{name}",
    )
    if is_keep_press(name):
        check_press_values(name, params or {}, source, field)


def keep_method(name: str, params: Mapping[str, Any] | None = None) -> Method:
    """The KEEP method ``name`` built with ``params`` (a compressor first, then a selector)."""
    if name in COMPRESSORS:
        method: Method = COMPRESSORS.build(name, **dict(params or {}))
        return method
    if name in sentence_selector_names():
        return SentenceSelectorMethod.build(name, dict(params or {}))
    if is_keep_press(name):
        return KeepPressMethod.build(name, params)
    raise KeyError(f"unknown KEEP compressor {name!r}; known: {', '.join(keep_method_names())}")
