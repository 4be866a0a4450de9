"""What a stage sees of ``params.yaml``: only the top-level keys it declares.

A :class:`ParamsView` has the attribute names of :class:`~compressbench.config.Params`; reading
an undeclared key (a shared field, or a benchmark's block through ``view.block(key)`` and so its
``ParamBlock.of(view)``) raises :class:`UndeclaredParamError`, so a stage cannot depend on a
parameter that ``dvc.yaml`` does not list for it. Methods of ``Params`` run against the view (so
``view.corpus(name)`` needs ``corpora``), and ``view.as_dict()`` holds the declared keys only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from compressbench.config import Params, param_keys

PARAM_FIELDS: tuple[str, ...] = param_keys()
"""The top-level ``params.yaml`` keys: the shared ones and every registered block's."""


class UndeclaredParamError(RuntimeError):
    """A stage read a ``params.yaml`` key its declaration does not list (a programming error)."""


class ParamsView:
    """``params`` restricted to ``keys`` for stage ``stage``."""

    __slots__ = ("_keys", "_params", "_stage")

    def __init__(self, params: Params | ParamsView, keys: Iterable[str], stage: str) -> None:
        keys = frozenset(keys)
        unknown = keys - set(PARAM_FIELDS)
        if unknown:
            raise ValueError(f"stage {stage!r} declares unknown params: {sorted(unknown)}")
        if isinstance(params, ParamsView):  # a view of a view sees the intersection
            keys &= params._keys
            params = params._params
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_keys", keys)
        object.__setattr__(self, "_stage", stage)

    def _check(self, name: str) -> None:
        if name not in self._keys:
            raise UndeclaredParamError(
                f"stage {self._stage!r} reads params.yaml key {name!r} but declares only "
                f"{', '.join(sorted(self._keys)) or 'none'}; add it to its @stage(params=...)"
            )

    def block(self, key: str) -> Any:
        """A registered block's value (``ParamBlock.of(view)``), if the stage declares it."""
        self._check(key)
        return self._params.block(key)

    def value(self, key: str) -> Any:
        """A top-level key's value (a shared field or a block), if the stage declares it."""
        self._check(key)
        return self._params.value(key)

    def as_dict(self) -> dict[str, Any]:
        """The declared keys only, as plain data."""
        return {k: v for k, v in self._params.as_dict().items() if k in self._keys}

    def __getattr__(self, name: str) -> Any:
        if name == "blocks":
            raise AttributeError("a stage reads a block as ParamBlock.of(params)")
        if name in PARAM_FIELDS:
            self._check(name)
            return getattr(self._params, name)
        attr = getattr(type(self._params), name, None)
        if callable(attr):  # a Params method reads through the view
            return attr.__get__(self)
        return getattr(self._params, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __repr__(self) -> str:
        return f"ParamsView({self._stage!r}, {sorted(self._keys)})"
