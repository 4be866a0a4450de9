"""The doctor's checks by name, in the order they run, and the runner.

A new check is one function ``check(ctx) -> Result`` (:mod:`compressbench.doctor.base`) and one
entry here. Each check's module is imported only when it runs (``--only tracking`` never
imports torch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from compressbench.doctor.base import FAIL, SKIP, Context, Result, Skip, one_line
from compressbench.registry import Registry

Check = Callable[[Context], Result]

CHECKS: Registry[Check] = Registry(
    "doctor check",
    lazy={
        "params": "compressbench.doctor.params:check_params",
        "gpu": "compressbench.doctor.gpu:check_gpu",
        "versions": "compressbench.doctor.software:check_versions",
        "image": "compressbench.doctor.software:check_image",
        "libraries": "compressbench.doctor.libraries:check_libraries",
        "reader": "compressbench.doctor.reader:check_reader",
        "disk": "compressbench.doctor.disk:check_disk",
        "gpu-memory": "compressbench.doctor.gpu:check_gpu_memory",
        "tracking": "compressbench.doctor.tracking:check_tracking",
    },
)
#: The order the checks run and print in (names registered later run after these).
ORDER = (
    "params",
    "gpu",
    "versions",
    "image",
    "libraries",
    "reader",
    "disk",
    "gpu-memory",
    "tracking",
)


def check_names() -> list[str]:
    return [*ORDER, *(n for n in CHECKS.names() if n not in ORDER)]


def run_one(name: str, ctx: Context) -> Result:
    """Check ``name``; a :class:`Skip` becomes ``SKIP``, any other exception one ``FAIL`` line."""
    try:
        return CHECKS.factory(name)(ctx)
    except Skip as exc:
        return Result(name, SKIP, str(exc))
    except Exception as exc:  # a check must never take the others down with it
        return Result(name, FAIL, f"the check itself failed: {one_line(exc)}")


def run_checks(ctx: Context, only: Iterable[str] | None = None) -> list[Result]:
    """Every check (or those in ``only``) in :data:`ORDER`."""
    wanted = set(only) if only else None
    return [run_one(n, ctx) for n in check_names() if wanted is None or n in wanted]
