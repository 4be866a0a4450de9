"""Build the configured reader from ``params.yaml``'s ``reader`` block (by backend name).

A backend takes the ``reader`` keys its class accepts as keyword parameters (its signature),
the others are for other backends; ``reader.options`` holds parameters of the backend that
have no ``reader`` key of their own.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from compressbench.config import ReaderSpec
from compressbench.readers.base import Reader
from compressbench.readers.registry import READERS, get_reader


def reader_kwargs(spec: ReaderSpec) -> dict[str, Any]:
    """The ``reader`` settings backend ``spec.backend`` takes, by its parameters' names, and
    its ``options``."""
    accepted = READERS.parameters(spec.backend)
    named = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name in accepted}
    return {**named, **spec.options}


#: Readers built in this process, by backend, parameters and model files (see :func:`_key`):
#: a stage process builds one; the reader worker (``reader.worker``) reuses it across cells.
_BUILT: dict[str, Reader] = {}
BUILDS: list[str] = []  # the keys built in this process, in order (the worker's load count)


def _files_stat(model: Any) -> list[tuple[str, int, int, int]]:
    """(path, size, mtime_ns, inode) of the model's local files: changed weights load anew."""
    if not isinstance(model, str):
        return []
    path = Path(model).expanduser()
    if not path.exists():
        return []  # a Hub id or a packaged name: its revision / its sha256-checked parts
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return [(str(p), st.st_size, st.st_mtime_ns, st.st_ino) for p in files for st in [p.stat()]]


def _key(spec: ReaderSpec) -> str:
    kwargs = reader_kwargs(spec)
    raw = {"backend": spec.backend, "kwargs": kwargs, "files": _files_stat(kwargs.get("model"))}
    return json.dumps(raw, sort_keys=True, default=str)


def build_reader(spec: ReaderSpec) -> Reader:
    """The reader named by ``spec.backend`` with the parameters it takes (built once per
    process for the same parameters and model files)."""
    key = _key(spec)
    if key not in _BUILT:
        _BUILT[key] = get_reader(spec.backend, **reader_kwargs(spec))
        BUILDS.append(key)
    return _BUILT[key]


def reader_tokenizer(spec: ReaderSpec) -> Any:
    """The reader's tokenizer when its backend can load one without the model (a local model:
    ``hf``'s transformers tokenizer, ``llamacpp``'s GGUF vocabulary), else None."""
    return READERS.factory(spec.backend).tokenizer_for(spec.model)
