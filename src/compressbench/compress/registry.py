"""Every compression method by name, and the up-front check of names and ``method_params``.

``params.yaml`` names methods as strings. A name resolves through the families below, first
match wins: a turn selector (:mod:`compressbench.compress.selectors`), a KV press preset
(:mod:`compressbench.compress.presses`), or any kvpress press class (``KnormPress``). Each
family knows the parameters of its names from signatures and source alone, so
:func:`check_method` validates ``params.yaml`` without importing torch or kvpress; a later
family joins with :func:`register_family`, or from another package through a
``compressbench.method_families`` entry point (the KEEP-Bench compressors, whose sources hold
sentences: ``Family.units``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.compress import presses, selectors
from compressbench.compress.kv import catalog
from compressbench.compress.kv.record import MODES
from compressbench.compress.method import Method
from compressbench.compress.press_method import PressMethod
from compressbench.compress.selector_method import SelectorMethod
from compressbench.compress.turning_point import NAMED_VARIANTS, TurningPointMethod
from compressbench.errors import InputError
from compressbench.registry import check_parameters, signature_parameters


@dataclass(frozen=True)
class MethodEntry:
    """One name: its family, the keys ``method_params`` may set, and how to build it."""

    name: str
    family: str
    parameters: tuple[str, ...]
    build: Callable[[dict[str, Any]], Method]
    choices: Mapping[str, tuple[str, ...]] | None = None  # allowed values of some keys
    # keys whose value names files or folders the method reads (comma-separated lists allowed)
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    """A kind of method: its names (``names()``) and the entry of a name (or None)."""

    name: str
    names: Callable[[], Iterable[str]]
    entry: Callable[[str], MethodEntry | None]
    units: str = "dialogue_turns"  # what Source.units hold ("sentences": KEEP-Bench cases)


def _selector_entry(name: str) -> MethodEntry | None:
    factory = selectors.SELECTORS.get(name)
    if factory is None:
        return None

    def build(params: dict[str, Any]) -> Method:
        return SelectorMethod(name, selectors.get_selector(name, **params), dict(params))

    paths = selectors.PATH_PARAMS.get(name, ())  # a selector absent from it reads no file
    return MethodEntry(name, "turn_selector", signature_parameters(factory), build, paths=paths)


def _press_entry(name: str, parameters: tuple[str, ...], default_mode: str) -> MethodEntry:
    def build(params: dict[str, Any]) -> Method:
        p = dict(params)
        mode = p.pop("mode", None) or default_mode
        return PressMethod(name, mode, p)

    return MethodEntry(name, "kv_press", ("mode", *parameters), build, {"mode": MODES})


def _preset_entry(name: str) -> MethodEntry | None:
    preset = presses.PRESS_PRESETS.get(name)
    if preset is None:
        return None
    return _press_entry(name, tuple(preset.parameters()), preset.default_mode)


def _kvpress_entry(name: str) -> MethodEntry | None:
    fields = catalog.press_fields().get(name)
    if fields is None or name == catalog.ROOT_CLASS:
        return None
    return _press_entry(name, fields, "full_prompt")


def _span_entry(name: str) -> MethodEntry | None:
    preset = NAMED_VARIANTS.get(name)
    if preset is None:
        return None
    return MethodEntry(
        name,
        "span_selector",
        signature_parameters(TurningPointMethod, skip=1),
        lambda params: TurningPointMethod(name, **{**preset, **params}),
        TurningPointMethod.CHOICES,
        TurningPointMethod.PATH_PARAMS,
    )


FAMILIES: list[Family] = [
    Family("turn_selector", lambda: selectors.SELECTORS, _selector_entry),
    Family("span_selector", lambda: NAMED_VARIANTS, _span_entry),
    Family("kv_press", lambda: presses.PRESS_PRESETS, _preset_entry),
    Family(
        "kvpress_class",
        lambda: (n for n in catalog.press_fields() if n != catalog.ROOT_CLASS),
        _kvpress_entry,
    ),
]


def register_family(family: Family) -> Family:
    """Add a family of methods (names resolve through earlier families first)."""
    if any(f.name == family.name for f in FAMILIES):
        raise ValueError(f"method family {family.name!r} registered twice")
    FAMILIES.append(family)
    return family


PLUGIN_GROUP = "compressbench.method_families"  # entry points naming a Family object
_plugins_loaded = False


def _load_plugins() -> None:
    """Register the families other packages declare as ``compressbench.method_families``
    entry points (the KEEP-Bench compressors: ``compress`` may not import ``keepbench``)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for point in sorted(entry_points(group=PLUGIN_GROUP), key=lambda p: p.name):
        family = point.load()
        if not any(f.name == family.name for f in FAMILIES):
            FAMILIES.append(family)


def method_entry(name: str) -> MethodEntry | None:
    """The entry of a method name, or None if no family knows it."""
    _load_plugins()
    for family in FAMILIES:
        entry = family.entry(name)
        if entry is not None:
            return entry
    return None


def known_methods(family: str | None = None, units: str | None = None) -> list[str]:
    """Every method name (of one family; of the families whose sources hold ``units``)."""
    _load_plugins()
    chosen = [f for f in FAMILIES if family in (None, f.name) and units in (None, f.units)]
    return sorted({n for f in chosen for n in f.names()})


def _unknown(name: Any) -> str:
    _load_plugins()
    registered = {n for f in FAMILIES if f.name != "kvpress_class" for n in f.names()}
    classes = known_methods("kvpress_class")
    extra = f", or a kvpress press class ({', '.join(classes)})" if classes else ""
    return f"unknown method {name!r}; allowed: {', '.join(sorted(registered))}{extra}"


def get_method(name: str, params: Mapping[str, Any] | None = None) -> Method:
    """Build the method ``name`` with its ``method_params``."""
    entry = method_entry(name)
    if entry is None:
        raise KeyError(_unknown(name))
    return entry.build(dict(params or {}))


# -- validation of params.yaml ------------------------------------------------------------------


def check_method(name: Any, where: str, source: str = "params.yaml") -> MethodEntry:
    """The entry of ``name``, or InputError naming ``source``, the field and the allowed names."""
    entry = method_entry(name) if isinstance(name, str) else None
    if entry is None:
        raise InputError(_unknown(name), file=source, field=where)
    return entry


def check_method_params(
    name: Any, params: Mapping[str, Any], source: str = "params.yaml"
) -> MethodEntry:
    """Check ``method_params.<name>``: a known method, known keys, allowed values."""
    where = f"method_params.{name}"
    entry = check_method(name, where, source)
    owner = f"{entry.family} {name!r}"
    check_parameters(params, entry.parameters, owner=owner, source=source, field=where)
    check_choices(entry, params, source, where)
    return entry


def check_choices(
    entry: MethodEntry | None, params: Mapping[str, Any], source: str, where: str
) -> None:
    """InputError naming ``<where>.<key>`` unless every restricted value (e.g. a press's
    ``mode``) of ``params`` is one of ``entry``'s choices."""
    for key, choices in ((entry.choices if entry else None) or {}).items():
        value = params.get(key)
        if value is not None and value not in choices:
            raise InputError(
                f"must be one of {', '.join(choices)}; got {value!r}",
                file=source,
                field=f"{where}.{key}",
            )


def check_methods(
    methods: Sequence[Any],
    method_params: Mapping[str, Mapping[str, Any]],
    *,
    retention_methods: Sequence[Any] | None = None,
    source: str = "params.yaml",
) -> None:
    """Validate every method name (``methods[i]``, ``retention.methods[i]``) and every
    ``method_params`` entry against the registry, before any stage runs."""
    for field, names in (("methods", methods), ("retention.methods", retention_methods or ())):
        for i, name in enumerate(names):
            check_method(name, f"{field}[{i}]", source)
    for name, params in method_params.items():
        check_method_params(name, params or {}, source)
