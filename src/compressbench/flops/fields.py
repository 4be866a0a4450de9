"""Reading a Hugging Face ``config.json`` for FLOPs: typed fields with located errors.

Multimodal configs (Gemma-3/4, Llava ...) keep the language model under ``text_config``; its
fields are read from there, and errors name the dotted field (``text_config.hidden_size``).
Every problem raises :class:`~compressbench.errors.InputError` naming the file and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compressbench.errors import InputError

_MISSING = object()


class ConfigFields:
    """Typed access to the fields of one model config (``source`` names it in errors)."""

    def __init__(self, raw: Mapping[str, Any], source: str = "config.json") -> None:
        if not isinstance(raw, Mapping):
            raise InputError("expected a JSON object", file=source)
        self.source = source
        self.top = dict(raw)
        text = raw.get("text_config")
        if isinstance(text, Mapping) and "num_hidden_layers" not in raw:
            self.raw, self.prefix = dict(text), "text_config."
        else:
            self.raw, self.prefix = dict(raw), ""

    @classmethod
    def load(cls, path: str | Path) -> ConfigFields:
        """Read ``path`` (a ``config.json``); a missing or invalid file names the file."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError("file not found", file=str(p)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"unreadable ({exc})", file=str(p)) from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg}, line {exc.lineno})", file=str(p)) from None
        return cls(raw, str(p))

    def fail(self, name: str, message: str) -> InputError:
        return InputError(message, file=self.source, field=self.prefix + name)

    def has(self, name: str) -> bool:
        return self.raw.get(name) is not None

    def get(self, name: str, default: Any = None) -> Any:
        value = self.raw.get(name)
        return default if value is None else value

    def model_type(self) -> str:
        """The config's ``model_type`` (the top-level one for a multimodal config)."""
        return str(self.raw.get("model_type") or self.top.get("model_type") or "")

    def integer(self, name: str, default: Any = _MISSING, minimum: int = 1) -> int:
        """A whole-number field ``>= minimum`` (required unless ``default`` is given)."""
        value = self.raw.get(name)
        if value is None:
            if default is _MISSING:
                raise self.fail(name, "missing (needed for the FLOPs count)")
            return int(default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(name, f"must be an integer >= {minimum}, got {value!r}")
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.raw.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(name, f"must be true or false, got {value!r}")
        return value

    def per_layer_ints(self, name: str, layers: int) -> list[int]:
        """An integer field that may also be a list with one value per layer."""
        value = self.raw.get(name)
        if isinstance(value, list):
            if len(value) != layers:
                raise self.fail(name, f"has {len(value)} entries for {layers} layers")
            bad = [v for v in value if isinstance(v, bool) or not isinstance(v, int) or v < 1]
            if bad:
                raise self.fail(name, f"entries must be integers >= 1, got {bad[0]!r}")
            return list(value)
        return [self.integer(name)] * layers

    def strings(self, name: str, length: int, allowed: tuple[str, ...]) -> list[str]:
        """A list of ``length`` strings from ``allowed`` (e.g. ``layer_types``)."""
        value = self.raw.get(name)
        if not isinstance(value, list) or len(value) != length:
            got = len(value) if isinstance(value, list) else repr(value)
            raise self.fail(name, f"must be a list of {length} entries, got {got}")
        for item in value:
            if item not in allowed:
                raise self.fail(name, f"unknown entry {item!r}; allowed: {', '.join(allowed)}")
        return list(value)

    def reject(self, names: tuple[str, ...], why: str) -> None:
        """Fail on the first of ``names`` that is set (a feature the formula does not count)."""
        for name in names:
            value = self.raw.get(name)
            if value not in (None, 0, False, [], {}):
                raise self.fail(name, why)
