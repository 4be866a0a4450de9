"""Checks of a parameter file's values that fail with one line naming the file and the dotted
field (:class:`~compressbench.errors.InputError`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any

from compressbench.errors import InputError


class Checker:
    """Small helpers that raise InputError naming params.yaml and the dotted field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, fieldname: str, message: str) -> InputError:
        return InputError(message, file=self.source, field=fieldname)

    def typed(self, value: Any, kind: type | tuple[type, ...], fieldname: str) -> Any:
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(fieldname, f"expected a number, got {value!r}")
        if not isinstance(value, kind):
            raise self.fail(fieldname, f"expected {_kind_name(kind)}, got {value!r}")
        return value

    def optional_str(self, value: Any, fieldname: str) -> str | None:
        return None if value is None else str(self.typed(value, str, fieldname))

    def choice(self, value: Any, choices: Sequence[str], fieldname: str) -> str:
        if value not in choices:
            raise self.fail(fieldname, f"must be one of {', '.join(choices)}; got {value!r}")
        return str(value)

    def mapping(self, raw: Any, allowed: Iterable[str], fieldname: str) -> dict[str, Any]:
        """``raw`` as a mapping (null: empty) holding only ``allowed`` keys."""
        raw = {} if raw is None else self.typed(raw, dict, fieldname)
        unknown = sorted(str(k) for k in set(raw) - set(allowed))
        if unknown:
            raise self.fail(
                fieldname,
                f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}",
            )
        return dict(raw)

    def items(self, value: Any, kind: type | tuple[type, ...], fieldname: str) -> tuple[Any, ...]:
        """A non-empty list of ``kind`` values without repeats."""
        self.typed(value, list, fieldname)
        if not value:
            raise self.fail(fieldname, "must not be empty")
        out = tuple(self.typed(v, kind, f"{fieldname}[{i}]") for i, v in enumerate(value))
        for i, v in enumerate(out):
            if v in out[:i]:
                raise self.fail(f"{fieldname}[{i}]", f"{v!r} is listed twice")
        return out

    def ratio(self, value: Any, fieldname: str) -> float:
        r = float(self.typed(value, (int, float), fieldname))
        if not 0.0 < r <= 1.0:
            raise self.fail(fieldname, f"a retained fraction must be in (0, 1]; got {value!r}")
        return r

    def ratios(self, value: Any, fieldname: str) -> tuple[float, ...]:
        values = self.items(value, (int, float), fieldname)
        for i, r in enumerate(values):
            if type(r) is int:  # DVC names the cell `-1` while its files are named `1.0`
                raise self.fail(f"{fieldname}[{i}]", f"write a decimal ({r}.0), got {r}")
        return tuple(self.ratio(r, f"{fieldname}[{i}]") for i, r in enumerate(values))

    def optional_positive(self, value: Any, fieldname: str) -> int | None:
        return None if value is None else self.positive(value, fieldname)

    def positive(self, value: Any, fieldname: str, minimum: int = 1) -> int:
        v = int(self.typed(value, int, fieldname))
        if v < minimum:
            raise self.fail(fieldname, f"must be >= {minimum}; got {value!r}")
        return v


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if kind == (int, float):
        return "a number"
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def spec_keys(spec: type) -> tuple[str, ...]:
    """The keys a params section may hold: the fields of its dataclass."""
    return tuple(f.name for f in fields(spec))
