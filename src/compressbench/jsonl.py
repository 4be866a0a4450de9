"""JSONL reading with located errors, and atomic writing (temp file + rename)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from compressbench.errors import InputError


def open_text(path: str | Path) -> IO[str]:
    """Open a text file, transparently decompressing ``.gz``."""
    p = Path(path)
    if p.suffix == ".gz":
        return gzip.open(p, "rt", encoding="utf-8")
    return p.open("r", encoding="utf-8")


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield one dict per non-blank line; a bad line (or an unreadable, truncated or missing
    file) raises InputError naming the file (and the line)."""
    for _, row in read_jsonl_lines(path):
        yield row


def read_jsonl_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`read_jsonl` with each row's line number (from 1, blank lines counted), for
    errors that name the record of a row found bad later."""
    try:
        yield from _rows(path)
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(f"unreadable ({exc})", file=str(path)) from exc


def _rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"invalid JSON ({exc.msg})", file=str(path), record=f"line {lineno}"
                ) from exc
            if not isinstance(row, dict):
                raise InputError("expected a JSON object", file=str(path), record=f"line {lineno}")
            yield lineno, row


def canonical_json(obj: Any) -> str:
    """Sorted keys, no spaces: the same object always gives the same string (for hashing)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def dumps(row: Any) -> str:
    """Canonical one-line JSON used for every stage output (stable bytes)."""
    return json.dumps(row, ensure_ascii=False, sort_keys=False, separators=(", ", ": "))


def _umask() -> int:
    """The process umask (read without changing it where Linux shows it, since setting it
    would briefly change it for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Write to a temp file beside ``path``; rename over it only if the block succeeds. The
    file gets the mode a plain ``open`` would give it (0666 less the umask, e.g. 0644), not
    the temp file's private 0600."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> int:
    """Atomically write rows as JSONL; returns the number of rows written."""
    n = 0
    with atomic_writer(path) as fh:
        for row in rows:
            fh.write(dumps(row) + "\n")
            n += 1
    return n


def write_json(path: str | Path, obj: Any, **dump_kwargs: Any) -> None:
    """Atomically write one indented JSON document with a trailing newline."""
    with atomic_writer(path) as fh:
        json.dump(obj, fh, indent=2, **dump_kwargs)
        fh.write("\n")


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
