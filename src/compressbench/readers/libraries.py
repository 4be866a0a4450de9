"""The libraries a reader backend loads, and loading them to prove they load here.

Each backend class declares ``libraries``: the modules it imports to answer (in load order).
:func:`load_failure` imports them in a fresh interpreter and turns whatever stops one (a missing
module, or a shared library the dynamic loader cannot find, such as ``libgomp.so.1`` under
llama.cpp's ``libllama.so``) into one line naming the module and the cause. ``compressbench
doctor`` runs it for the configured readers (check ``reader``) and for every backend (check
``libraries``).
"""

from __future__ import annotations

import subprocess
import sys
from typing import ClassVar, Protocol, cast, runtime_checkable

from compressbench.readers.registry import READERS

LOAD_TIMEOUT_S = 300  # importing torch + transformers cold from a slow disk


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


# Run in a fresh interpreter: argv[1:] are the modules, imported in order; prints the first
# failure as "<module>\t<cause>" and exits 1. A fresh process per backend matters: once one
# backend's import has loaded a shared library (torch's CPU wheel carries its own
# libgomp.so.1), a later backend that needs the same library would seem to load, though a stage
# that imports only that backend would fail.
_PROBE = """
import importlib, sys
for module in sys.argv[1:]:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        print(module, "module %s is not installed" % (exc.name or module), sep="\\t")
        sys.exit(1)
    except Exception as exc:
        print(module, " ".join(str(exc).split()) or type(exc).__name__, sep="\\t")
        sys.exit(1)
"""


def load_failure(modules: tuple[str, ...]) -> str | None:
    """None when every module imports in a fresh interpreter (this one's ``sys.executable``,
    this environment); else one line: the first module that fails and why."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *modules],
        capture_output=True,
        text=True,
        timeout=LOAD_TIMEOUT_S,
        check=False,
    )
    if proc.returncode == 0:
        return None
    module, _, cause = proc.stdout.strip().rpartition("\n")[2].partition("\t")
    if not cause:  # the interpreter itself died (a crash inside a library's initialiser)
        tail = " ".join(proc.stderr.split()[-30:]) or f"exit status {proc.returncode}"
        return f"cannot load {' '.join(modules)}: {tail}"
    return f"cannot load {module}: {cause}"
