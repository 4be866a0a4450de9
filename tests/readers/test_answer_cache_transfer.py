"""scripts/answer_cache.py: answers exported from one cache and imported into another are the
same answers under the same keys; an edited row is refused with one line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from compressbench.readers.base import ChatRequest, Generation
from compressbench.readers.cache import AnswerCache, cache_key, key_payload
from support.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "answer_cache.py"


class Named:
    name, model_id, revision = "test", "m1", "r1"

    def decoding(self) -> dict[str, Any]:
        return {"greedy": True}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_export_import_round_trip_and_refusal(tmp_path: Path) -> None:
    reader = Named()
    reqs = [ChatRequest(f"q{i}", "sys", f"user {i}", 8) for i in range(3)]
    with AnswerCache(tmp_path / "a.sqlite") as cache:
        for r in reqs:
            gen = Generation(r.id, f'{{"value": "{r.id}"}}', f'{{"value": "{r.id}"}}', None)
            cache.put(cache_key(reader, r), gen, key_payload(reader, r))
    out = tmp_path / "rows.jsonl.gz"
    assert (
        _run("export", str(out), "--cache", str(tmp_path / "a.sqlite"), "--model", "m1").returncode
        == 0
    )
    assert _run("import", str(out), "--cache", str(tmp_path / "b.sqlite")).returncode == 0
    keys = [cache_key(reader, r) for r in reqs]
    with AnswerCache(tmp_path / "a.sqlite") as a, AnswerCache(tmp_path / "b.sqlite") as b:
        assert b.get_many(keys) == a.get_many(keys) and len(b) == 3
    assert (
        "0 answers"
        in _run(
            "export", str(out), "--cache", str(tmp_path / "a.sqlite"), "--model", "other"
        ).stdout
    )

    _run("export", str(out), "--cache", str(tmp_path / "a.sqlite"))
    with gzip.open(out, "rt") as f:
        rows = [json.loads(line) for line in f]
    request = json.loads(rows[1]["request"])
    request["user"] = "edited"
    rows[1]["request"] = json.dumps(request)
    with gzip.open(out, "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    proc = _run("import", str(out), "--cache", str(tmp_path / "c.sqlite"))
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        f"{out}: record 2, field 'key': not the sha256 of its request"
    ]
