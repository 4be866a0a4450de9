"""Carry answer-cache rows between machines (``compressbench answers export|import``).

Rows are the cache's own (key, request, generation, created_at, record, started_at), one JSON
object a line in a gzip file, except that :func:`export_answers` replaces each request's prompt
text (``system``, ``user``: corpus text, under the corpus's licence) by its sha256 unless
``with_text`` is set. :func:`import_answers` inserts the rows whose key is absent (an existing
answer is never overwritten), all of them in one transaction after every row was read and
checked: a bad file (missing, not gzip, truncated, a malformed row) is one
:class:`~compressbench.errors.InputError` naming the file and the record, and the cache is left
as it was (not even created). A row with its text is checked: its key must be the sha256 of its
request, so a corrupted or edited row is refused. A row without text needs no such check: the
cache serves a row only to a request whose sha256 is the row's key, so a wrong key is a row no
prompt reaches.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from compressbench.errors import InputError
from compressbench.jsonl import canonical_json
from compressbench.readers.cache import AnswerCache

COLUMNS = ("key", "request", "generation", "created_at", "record", "started_at")
TEXT_FIELDS = ("system", "user")  # the prompt text in a request (the key payload)


def without_text(request: dict[str, Any]) -> dict[str, Any]:
    """The request with each prompt text replaced by ``<field>_sha256`` (a row imported without
    its text already holds the hash, and is kept as it is)."""
    out = {k: v for k, v in request.items() if k not in TEXT_FIELDS}
    for field in TEXT_FIELDS:
        if field in request:
            out[f"{field}_sha256"] = hashlib.sha256(request[field].encode()).hexdigest()
    return out


def export_answers(cache: Path, out: Path, model: str | None, with_text: bool = False) -> int:
    """Write the rows of ``cache`` (only reader model ``model``'s when given) to ``out``
    (written to a temporary file, renamed when complete); the number of rows written."""
    if not cache.is_file():
        raise InputError("no answer cache here (nothing to export)", file=str(cache))
    AnswerCache(cache).close()  # migrates an older schema
    with sqlite3.connect(str(cache)) as db:
        rows = db.execute(f"SELECT {', '.join(COLUMNS)} FROM answers ORDER BY key").fetchall()
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        for row in rows:
            item = dict(zip(COLUMNS, row, strict=True))
            request = json.loads(item["request"])
            if model is not None and request.get("model_id") != model:
                continue
            if not with_text:
                item["request"] = canonical_json(without_text(request))
            f.write(json.dumps(item, sort_keys=True) + "\n")
            n += 1
    tmp.replace(out)
    return n


def checked_row(source: Path, i: int, line: str) -> tuple[Any, ...]:
    """Record ``i`` of ``source`` as the cache's column tuple; InputError when malformed."""

    def bad(field: str, message: str) -> InputError:
        return InputError(message, file=str(source), record=i, field=field)

    try:
        item = json.loads(line)
    except json.JSONDecodeError:
        raise bad("key", "not a JSON object") from None
    if not isinstance(item, dict):
        raise bad("key", "not a JSON object")
    missing = [c for c in COLUMNS if c not in item]
    if missing:
        raise bad(missing[0], "missing")
    try:
        request = json.loads(item["request"])
    except (json.JSONDecodeError, TypeError):
        raise bad("request", "not JSON") from None
    if not isinstance(request, dict) or not isinstance(item["key"], str):
        raise bad("request", "not a JSON object")
    if all(field in request for field in TEXT_FIELDS):
        if hashlib.sha256(canonical_json(request).encode()).hexdigest() != item["key"]:
            raise bad("key", "not the sha256 of its request")
    elif not all(f"{field}_sha256" in request for field in TEXT_FIELDS):
        raise bad("request", "neither the prompt text nor its sha256")
    return tuple(item[c] for c in COLUMNS)


def read_rows(source: Path) -> list[tuple[Any, ...]]:
    """Every row of the exported file ``source``, checked; InputError naming the file (and the
    record) for a missing file, one that is not gzip or is cut short, or a malformed row."""
    if not source.is_file():
        raise InputError("no such file", file=str(source))
    rows = []
    try:
        with gzip.open(source, "rt", encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                rows.append(checked_row(source, i, line))
    except gzip.BadGzipFile:
        raise InputError(
            "not a gzip file (an answers export is .jsonl.gz)", file=str(source)
        ) from None
    except (EOFError, zlib.error):
        raise InputError(
            f"gzip data ends or breaks after record {len(rows)} (a truncated or damaged file)",
            file=str(source),
        ) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(source), record=len(rows) + 1) from None
    return rows


def import_answers(cache: Path, source: Path) -> tuple[int, int]:
    """Insert the rows of ``source`` absent from ``cache``, in one transaction; returns
    ``(added, total)``."""
    items = read_rows(source)  # every row read and checked before the cache is touched
    AnswerCache(cache).close()  # creates / migrates the schema
    db = sqlite3.connect(str(cache), isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        before = db.total_changes
        placeholders = ", ".join("?" for _ in COLUMNS)
        db.executemany(
            f"INSERT OR IGNORE INTO answers ({', '.join(COLUMNS)}) VALUES ({placeholders})", items
        )
        added = db.total_changes - before
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    finally:
        db.close()
    return added, len(items)
