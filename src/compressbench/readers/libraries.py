"""The libraries a reader backend loads, and loading them to prove they load here.

Each backend class declares ``libraries``: the modules it imports to answer (in load order).
:func:`load_failure` imports them and turns whatever stops one (a missing module, or a shared
library the dynamic loader cannot find, such as ``libgomp.so.1`` under llama.cpp's
``libllama.so``) into one line naming the module and the cause. ``compressbench doctor`` runs it
for the configured readers (check ``reader``) and for every backend (check ``libraries``).
"""

from __future__ import annotations

import importlib
from typing import ClassVar, Protocol, cast, runtime_checkable

from compressbench.readers.registry import READERS


class Backend(Protocol):
    """What every registered backend class declares besides the :class:`Reader` protocol."""

    libraries: ClassVar[tuple[str, ...]]


@runtime_checkable
class ReaderSource(Protocol):
    """A method that writes with a registered reader (KEEP-Bench's generative compressors):
    ``reader_source()`` names its backend and model (None: a model of its own)."""

    def reader_source(self) -> tuple[str, str | None] | None: ...


def backend_libraries(backend: str) -> tuple[str, ...]:
    """The modules backend ``backend`` loads (its class's declared ``libraries``)."""
    return cast(Backend, READERS.factory(backend)).libraries


def load_failure(modules: tuple[str, ...]) -> str | None:
    """None when every module imports; else one line: the first module that fails and why."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            missing = exc.name or module
            return f"cannot load {module}: module {missing} is not installed"
        except Exception as exc:  # OSError / RuntimeError from a shared library that won't load
            text = " ".join(str(exc).split()) or type(exc).__name__
            return f"cannot load {module}: {text}"
    return None
