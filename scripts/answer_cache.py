#!/usr/bin/env python3
"""Carry answer-cache rows between machines: a long CPU study resumes where it stopped.

    python scripts/answer_cache.py export results/sgd_cpu_qwen15/answers.jsonl.gz \\
        --model qwen2.5-coder-1.5b-instruct [--cache .cache/answers.sqlite]
    python scripts/answer_cache.py import results/sgd_cpu_qwen15/answers.jsonl.gz

Rows are the cache's own (key, request, generation, record, times); ``import`` inserts the
rows whose key is absent (an existing answer is never overwritten) and checks each key against
the sha256 of its request, so a corrupted or edited row is refused, not served. ``dvc repro``
then answers those prompts from the cache and computes only the rest.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

from compressbench.jsonl import canonical_json
from compressbench.pipeline import paths
from compressbench.readers.cache import AnswerCache

COLUMNS = ("key", "request", "generation", "created_at", "record", "started_at")


def export(cache: Path, out: Path, model: str | None) -> int:
    AnswerCache(cache).close()  # creates / migrates the schema
    db = sqlite3.connect(str(cache))
    rows = db.execute(f"SELECT {', '.join(COLUMNS)} FROM answers ORDER BY key").fetchall()
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        for row in rows:
            item = dict(zip(COLUMNS, row, strict=True))
            if model is not None and json.loads(item["request"]).get("model_id") != model:
                continue
            f.write(json.dumps(item, sort_keys=True) + "\n")
            n += 1
    tmp.replace(out)
    return n


def import_rows(cache: Path, source: Path) -> tuple[int, int]:
    AnswerCache(cache).close()
    db = sqlite3.connect(str(cache), isolation_level=None)
    items = []
    with gzip.open(source, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            item = json.loads(line)
            digest = hashlib.sha256(canonical_json(json.loads(item["request"])).encode())
            if digest.hexdigest() != item["key"]:
                sys.exit(f"{source}: record {i}, field 'key': not the sha256 of its request")
            items.append(tuple(item[c] for c in COLUMNS))
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
    args = ap.parse_args()
    cache = args.cache or paths.answer_cache()
    if args.action == "export":
        print(f"{args.file}: {export(cache, args.file, args.model)} answers from {cache}")
    else:
        added, total = import_rows(cache, args.file)
        print(f"{cache}: {added} of {total} answers added from {args.file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
