"""What every doctor check shares: the options, the run's context and a check's result.

A check is a function ``check(ctx) -> Result``. It reads the project's own configuration through
the :class:`Context` (``params.yaml``'s reader and tracking blocks, the repository root) and
raises :class:`Skip` when it does not apply; the runner turns any other exception into a
``FAIL`` line, so one broken check never hides the others.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from compressbench.config import Params, ReaderSpec, load_params
from compressbench.errors import InputError
from compressbench.tracking.provenance import find_repo_root

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
GIB = 1 << 30


@dataclass(frozen=True)
class Result:
    """One check's verdict: ``summary`` is the one line a user reads, ``figures`` the numbers."""

    name: str
    status: str
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)

    def line(self, width: int = 10) -> str:
        return f"{self.status}  {self.name:<{width}}  {' '.join(self.summary.split())}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "figures": self.figures,
        }


class Skip(Exception):
    """Raised by a check that does not apply here; the message says why."""


@dataclass(frozen=True)
class Options:
    """What the user points the checks at (``compressbench doctor --help``)."""

    params: Path = Path("params.yaml")
    tracking_uri: str | None = None
    base_urls: tuple[str, ...] = ()
    cache_dir: Path | None = None
    image_target: str | None = None
    images_lock: Path | None = None
    cpu_ok: bool = False
    timeout: float = 5.0
    environ: Mapping[str, str] | None = None  # the image identity's variables (default: os.environ)


class Context:
    """The options plus what several checks read (parsed once, on first use)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.memo: dict[str, Any] = {}

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ if self.options.environ is None else self.options.environ

    @cached_property
    def repo_root(self) -> Path:
        """The project the parameters belong to (their folder's repository)."""
        return find_repo_root(self.options.params.resolve().parent)

    @cached_property
    def _loaded(self) -> tuple[Params | None, str | None]:
        try:
            return load_params(self.options.params), None
        except InputError as exc:
            return None, str(exc)
        except OSError as exc:
            return None, f"file {self.options.params}: {exc.strerror or exc}"

    @property
    def params(self) -> Params:
        """The parsed parameters; :class:`Skip` when they are invalid (the params line says why)."""
        params, _ = self._loaded
        if params is None:
            raise Skip(f"{self.options.params} is not valid (see the params line)")
        return params

    @property
    def params_error(self) -> str | None:
        return self._loaded[1]

    @property
    def reader(self) -> ReaderSpec:
        return self.params.reader

    def cached(self, key: str, compute: Any) -> Any:
        """``compute()`` once per run (a Hub lookup several checks use)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


def gib(n_bytes: float) -> str:
    """``16.06e9`` -> ``"15.0 GiB"`` (MiB below one GiB)."""
    if abs(n_bytes) < GIB:
        return f"{n_bytes / (1 << 20):.1f} MiB"
    return f"{n_bytes / GIB:.1f} GiB"


def one_line(exc: BaseException) -> str:
    """An exception as ``Type: message`` on one line."""
    text = " ".join(str(exc).split()) or repr(exc)
    return f"{type(exc).__name__}: {text}"
