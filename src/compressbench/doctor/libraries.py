"""Check ``libraries``: every reader backend's libraries, and the KV presses', load here.

Each backend declares the modules it loads (``libraries`` on its class), the presses theirs
(:attr:`~compressbench.compress.press_method.PressMethod.libraries`). A module that is not
installed is listed (the CPU image has no vLLM); one that is installed but does not load (a
shared library the dynamic loader cannot find, an import error inside it) is a FAIL naming it.
Images run this check after they are built (``scripts/build_image.sh``), so an image whose
reader cannot start is never published.
"""

from __future__ import annotations

import importlib.util

from compressbench.compress.press_method import PressMethod
from compressbench.doctor.base import FAIL, PASS, Context, Result
from compressbench.readers.libraries import backend_libraries, load_failure
from compressbench.readers.registry import reader_names


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def groups() -> dict[str, tuple[str, ...]]:
    """Who loads what: each reader backend, then the presses."""
    readers = {name: backend_libraries(name) for name in reader_names()}
    return {**readers, "presses": PressMethod.libraries}


def check_libraries(ctx: Context) -> Result:
    loaded: dict[str, str] = {}
    for who, modules in groups().items():
        if not all(_installed(m) for m in modules):
            absent = ", ".join(m for m in modules if not _installed(m))
            loaded[who] = f"not installed ({absent})"
            continue
        failed = load_failure(modules)
        if failed is not None:
            return Result("libraries", FAIL, f"{who}: {failed}", {"loaded": loaded})
        loaded[who] = "loads"
    text = "; ".join(f"{who} {state}" for who, state in loaded.items())
    return Result("libraries", PASS, text, {"loaded": loaded})
