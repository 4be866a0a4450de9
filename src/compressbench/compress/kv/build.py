"""kvpress presses by class name or dict spec, and back to a spec.

``build_press("SnapKVPress", compression_ratio=0.7, window_size=64, kernel_size=5)``;
``build_press({"name": "ChunkKVPress", "chunk_length": 20, "press": {"name": "SnapKVPress",
"compression_ratio": 0.7}})``. :func:`press_spec` turns a press back into such a spec (it
describes the press in records and in the answer cache key).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


def press_class(name: str) -> type:
    """A kvpress press class by its class name (``"SnapKVPress"``)."""
    import kvpress

    cls = getattr(kvpress, name, None)
    if not isinstance(cls, type) or not issubclass(cls, kvpress.BasePress):
        known = sorted(
            n
            for n in dir(kvpress)
            if isinstance(getattr(kvpress, n), type)
            and issubclass(getattr(kvpress, n), kvpress.BasePress)
        )
        raise KeyError(f"unknown kvpress press {name!r}; known: {', '.join(known)}")
    return cls


def _is_spec(value: Any) -> bool:
    return isinstance(value, Mapping) and ("name" in value or "class" in value)


def build_press(spec: str | Mapping[str, Any], **kwargs: Any) -> Any:
    """Build a kvpress press from a class name plus keyword arguments, or from a dict spec.

    Any keyword value that is itself a spec (a mapping with ``name``) is built first, so
    presses nest; lists of specs too (``ComposedPress(presses=[...])``).
    """
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None) or params.pop("class", None)
        if not isinstance(name, str):
            raise ValueError(f"press spec needs a 'name': {dict(spec)!r}")
        params.update(kwargs)
    else:
        name, params = spec, dict(kwargs)

    def build_value(value: Any) -> Any:
        if _is_spec(value):
            return build_press(value)
        if isinstance(value, list | tuple) and value and all(_is_spec(v) for v in value):
            return [build_press(v) for v in value]
        return value

    cls = press_class(name)
    try:
        return cls(**{key: build_value(v) for key, v in params.items()})
    except TypeError as exc:
        raise TypeError(f"cannot build {name} with {sorted(params)}: {exc}") from exc


def press_spec(press: Any) -> dict[str, Any]:
    """The dict spec of a press (class name + init fields, nested presses as specs)."""

    def value(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return press_spec(v)
        if isinstance(v, list | tuple):
            return [value(x) for x in v]
        if isinstance(v, int | float | str | bool) or v is None:
            return v
        return repr(v)

    spec: dict[str, Any] = {"name": type(press).__name__}
    if dataclasses.is_dataclass(press):
        for f in dataclasses.fields(press):
            if f.init and not f.name.startswith("_"):
                spec[f.name] = value(getattr(press, f.name))
    return spec


def window_size_of(press: Any) -> int:
    """``window_size`` of the press or of a press nested in it (0 if none)."""
    seen = 0
    current = press
    while current is not None and seen < 8:
        w = getattr(current, "window_size", None)
        if isinstance(w, int):
            return w
        current = getattr(current, "press", None)
        seen += 1
    return 0


def compression_ratio_of(press: Any) -> float | None:
    """The press's kvpress ``compression_ratio`` (fraction dropped), if it has one."""
    cr = getattr(press, "compression_ratio", None)
    return float(cr) if isinstance(cr, int | float) else None
