"""A registry of named factories: readers, judges, KEEP compressors, turn selectors.

One shape for all of them: a name maps to a factory (registered with a decorator, or lazily as
``"module:attribute"`` so that listing names never imports a heavy backend); the parameters a
name accepts are its factory's keyword parameters; a bad name or parameter is one
:class:`~compressbench.errors.InputError` naming the file, the field and the allowed values.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any, Generic, TypeVar

from compressbench.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])


def signature_parameters(factory: Callable[..., Any], skip: int = 0) -> tuple[str, ...]:
    """The keyword parameters of ``factory`` (a dataclass: its fields), after ``skip`` leading
    ones; ``*args`` / ``**kwargs`` are not named parameters."""
    params = list(inspect.signature(factory).parameters.values())[skip:]
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def check_parameters(
    params: Mapping[str, Any] | None,
    allowed: tuple[str, ...],
    *,
    owner: str,
    source: str,
    field: str,
) -> None:
    """InputError at ``field.<key>`` for the first key of ``params`` not in ``allowed``
    (``owner`` names what takes them in the message: "reader 'hf'")."""
    for key in params or {}:
        if key not in allowed:
            raise InputError(
                f"unknown parameter {key!r} of {owner}; allowed: {', '.join(allowed) or '(none)'}",
                file=source,
                field=f"{field}.{key}",
            )


class Registry(MutableMapping[str, F], Generic[F]):
    """Named factories of one kind (``kind`` names it in messages: "reader", "judge"...).

    A mapping of name -> factory (a lazy one is imported when looked up); setting or deleting
    an item replaces a factory without the registered-twice check (tests patch one that way).
    """

    def __init__(self, kind: str, lazy: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self._lazy = dict(lazy or {})
        self._factories: dict[str, F] = {}

    def register(self, name: str, factory: F | None = None) -> Any:
        """Register ``factory`` as ``name`` (or, without ``factory``, a decorator that does)."""

        def deco(f: F) -> F:
            if name in self:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._factories[name] = f
            return f

        return deco(factory) if factory is not None else deco

    def unregister(self, name: str) -> None:
        """Remove a name registered with :meth:`register` (tests)."""
        self._factories.pop(name, None)

    def names(self) -> list[str]:
        return sorted({*self._lazy, *self._factories})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._factories or name in self._lazy)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __getitem__(self, name: str) -> F:
        return self.factory(name)

    def __setitem__(self, name: str, factory: F) -> None:
        self._lazy.pop(name, None)
        self._factories[name] = factory

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(self.unknown(name))
        self._lazy.pop(name, None)
        self._factories.pop(name, None)

    def unknown(self, name: object) -> str:
        """The message for a name that is not registered."""
        return f"unknown {self.kind} {name!r}; allowed: {', '.join(self.names())}"

    def factory(self, name: str) -> F:
        """The factory of ``name`` (a lazy one is imported now); KeyError naming the allowed."""
        if name in self._factories:
            return self._factories[name]
        if name not in self._lazy:
            raise KeyError(self.unknown(name))
        module_name, attr = self._lazy[name].split(":")
        found: F = getattr(importlib.import_module(module_name), attr)
        return found

    def parameters(self, name: str) -> tuple[str, ...]:
        return signature_parameters(self.factory(name))

    def build(self, name: str, **params: Any) -> Any:
        """``name``'s factory called with ``params``."""
        return self.factory(name)(**params)

    def check(
        self,
        name: object,
        params: Mapping[str, Any] | None = None,
        *,
        source: str,
        field: str,
        params_field: str | None = None,
    ) -> None:
        """InputError naming ``source`` and the field unless ``name`` is registered and every key
        of ``params`` is one of its parameters (reported under ``params_field.<key>``)."""
        if name not in self:
            raise InputError(self.unknown(name), file=source, field=field)
        assert isinstance(name, str)
        check_parameters(
            params,
            self.parameters(name),
            owner=f"{self.kind} {name!r}",
            source=source,
            field=params_field or field,
        )
