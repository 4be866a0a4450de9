#!/usr/bin/env python3
"""Carry answer-cache rows between machines: a long CPU study resumes where it stopped.

    python scripts/answer_cache.py export results/sgd_cpu_qwen15/answers.jsonl.gz \\
        --model qwen2.5-coder-1.5b-instruct [--cache .cache/answers.sqlite]
    python scripts/answer_cache.py import results/sgd_cpu_qwen15/answers.jsonl.gz

Rows are the cache's own (key, request, generation, record, times), except that ``export``
replaces each request's prompt text (``system``, ``user``: corpus text, under the corpus's
licence) by its sha256 unless ``--with-text`` is given. ``import`` inserts the rows whose key is
absent (an existing answer is never overwritten). A row with its text is checked: its key must
be the sha256 of its request, so a corrupted or edited row is refused. A row without text cannot
be checked that way and needs no check: the cache serves a row only to a request whose sha256 is
the row's key, so a wrong key is a row no prompt reaches. ``dvc repro`` then answers those
prompts from the cache and computes only the rest.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from compressbench.jsonl import canonical_json
from compressbench.pipeline import paths
from compressbench.readers.cache import AnswerCache

COLUMNS = ("key", "request", "generation", "created_at", "record", "started_at")
TEXT_FIELDS = ("system", "user")  # the prompt text in a request (the key payload)


def without_text(request: dict[str, Any]) -> dict[str, Any]:
    """The request with each prompt text replaced by ``<field>_sha256``."""
    out = {k: v for k, v in request.items() if k not in TEXT_FIELDS}
    for field in TEXT_FIELDS:
        out[f"{field}_sha256"] = hashlib.sha256(request[field].encode()).hexdigest()
    return out


def export(cache: Path, out: Path, model: str | None, with_text: bool = False) -> int:
    AnswerCache(cache).close()  # creates / migrates the schema
    db = sqlite3.connect(str(cache))
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
    """One exported row as the cache's column tuple; exits with one line when it is malformed."""
    where = f"{source}: record {i}"
    try:
        item = json.loads(line)
        missing = [c for c in COLUMNS if c not in item]
        if missing:
            sys.exit(f"{where}, field '{missing[0]}': missing")
        request = json.loads(item["request"])
    except (json.JSONDecodeError, TypeError):
        sys.exit(f"{where}, field 'request': not JSON")
    if not isinstance(request, dict) or not isinstance(item["key"], str):
        sys.exit(f"{where}, field 'request': not a JSON object")
    if all(field in request for field in TEXT_FIELDS):
        if hashlib.sha256(canonical_json(request).encode()).hexdigest() != item["key"]:
            sys.exit(f"{where}, field 'key': not the sha256 of its request")
    elif not all(f"{field}_sha256" in request for field in TEXT_FIELDS):
        sys.exit(f"{where}, field 'request': neither the prompt text nor its sha256")
    return tuple(item[c] for c in COLUMNS)


def import_rows(cache: Path, source: Path) -> tuple[int, int]:
    with gzip.open(source, "rt", encoding="utf-8") as f:
        items = [checked_row(source, i, line) for i, line in enumerate(f, 1)]
    AnswerCache(cache).close()  # creates / migrates the schema
    db = sqlite3.connect(str(cache), isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    before = db.total_changes
    db.executemany(
        f"INSERT OR IGNORE INTO answers ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)", items
    )
    db.execute("COMMIT")
    return db.total_changes - before, len(items)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("export", "import"))
    ap.add_argument("file", type=Path, help="the .jsonl.gz file to write or read")
    ap.add_argument("--cache", type=Path, default=None, help="default: the pipeline's cache")
    ap.add_argument("--model", default=None, help="export: only this reader model id")
    ap.add_argument(
        "--with-text",
        action="store_true",
        help="export: keep each request's prompt text (default: its sha256 only)",
    )
    args = ap.parse_args()
    cache = args.cache or paths.answer_cache()
    if args.action == "export":
        n = export(cache, args.file, args.model, args.with_text)
        print(f"{args.file}: {n} answers from {cache}")
    else:
        added, total = import_rows(cache, args.file)
        print(f"{cache}: {added} of {total} answers added from {args.file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
