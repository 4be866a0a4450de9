"""``compressbench answers export|import``: answers exported from one cache and imported into
another are the same answers under the same keys and serve the same prompts; the exported file
carries no prompt text unless asked; an edited or malformed row, a file that is missing, not
gzip or cut short is refused with one line, exit code 2, and the cache is left untouched."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from compressbench.readers.base import ChatRequest, Generation, Reader
from compressbench.readers.cache import AnswerCache, cache_key, generate_cached, key_payload
from compressbench.readers.registry import get_reader
from support.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "answer_cache.py"  # the old entry point, now a thin wrapper


def Named() -> Reader:
    """The mock reader that must never generate: every prompt here is served from the cache."""
    return get_reader("mock", model="m1", revision="r1", mode="unreachable")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """``compressbench answers <args>`` in a subprocess."""
    argv = [sys.executable, "-m", "compressbench.cli", "answers", *args]
    return subprocess.run(argv, capture_output=True, text=True)


def _error(proc: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a refused command (exit code 2, no traceback)."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0].removeprefix("compressbench answers: error: ")


def _filled_cache(path: Path) -> list[ChatRequest]:
    reader = Named()
    reqs = [ChatRequest(f"q{i}", "sys", f"dialogue text {i}", 8) for i in range(3)]
    with AnswerCache(path) as cache:
        for r in reqs:
            gen = Generation(r.id, f'{{"value": "{r.id}"}}', f'{{"value": "{r.id}"}}', None)
            cache.put(cache_key(reader, r), gen, key_payload(reader, r))
    return reqs


def _rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    with gzip.open(path, "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def test_export_without_text_serves_the_same_prompts(tmp_path: Path) -> None:
    reqs = _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "rows.jsonl.gz"
    proc = _run("export", str(out), "--cache", str(tmp_path / "a.sqlite"), "--model", "m1")
    assert proc.returncode == 0 and "3 answers" in proc.stdout
    text = gzip.decompress(out.read_bytes()).decode()
    assert "dialogue text" not in text and '"sys"' not in text  # no prompt text carried
    assert all("user_sha256" in json.loads(r["request"]) for r in _rows(out))
    proc = _run("import", str(out), "--cache", str(tmp_path / "b.sqlite"))
    assert proc.returncode == 0 and "3 of 3 answers added" in proc.stdout

    keys = [cache_key(Named(), r) for r in reqs]
    with AnswerCache(tmp_path / "a.sqlite") as a, AnswerCache(tmp_path / "b.sqlite") as b:
        generations = [
            {key: entry.generation for key, entry in cache.entries(keys).items()}
            for cache in (a, b)
        ]
        assert generations[1] == generations[0] and len(b) == 3
        run = generate_cached(Named(), reqs, b, progress=False)  # Named.generate would raise
    assert [g.raw for g in run.generations] == [f'{{"value": "q{i}"}}' for i in range(3)]
    assert run.stats.model_calls == 0
    again = _run("import", str(out), "--cache", str(tmp_path / "b.sqlite"))
    assert "0 of 3 answers added" in again.stdout  # existing rows are kept, never overwritten

    other = _run("export", str(out), "--cache", str(tmp_path / "a.sqlite"), "--model", "other")
    assert "0 answers" in other.stdout

    # a cache holding imported rows (their prompts already hashed) exports them unchanged
    again_out = tmp_path / "again.jsonl.gz"
    proc = _run("export", str(again_out), "--cache", str(tmp_path / "b.sqlite"))
    assert proc.returncode == 0 and "3 answers" in proc.stdout, proc.stderr
    assert _run("export", str(out), "--cache", str(tmp_path / "a.sqlite")).returncode == 0
    assert _rows(again_out) == _rows(out)


def test_export_with_text_is_checked_on_import(tmp_path: Path) -> None:
    _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "rows.jsonl.gz"
    _run("export", str(out), "--cache", str(tmp_path / "a.sqlite"), "--with-text")
    rows = _rows(out)
    request = json.loads(rows[1]["request"])
    assert request["user"].startswith("dialogue text ")
    request["user"] = "edited"
    rows[1]["request"] = json.dumps(request)
    _write_rows(out, rows)
    proc = _run("import", str(out), "--cache", str(tmp_path / "c.sqlite"))
    assert _error(proc) == f"file {out}, record 2, field 'key': not the sha256 of its request"
    assert not (tmp_path / "c.sqlite").exists()  # nothing written


def test_malformed_rows_are_refused_with_one_line(tmp_path: Path) -> None:
    _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "rows.jsonl.gz"
    _run("export", str(out), "--cache", str(tmp_path / "a.sqlite"))
    good = _rows(out)
    cases = {
        "field 'generation': missing": {k: v for k, v in good[0].items() if k != "generation"},
        "field 'request': not JSON": {**good[0], "request": "{not json"},
        "field 'request': neither the prompt text nor its sha256": {
            **good[0],
            "request": json.dumps({"model_id": "m1"}),
        },
    }
    for message, bad in cases.items():
        _write_rows(out, [good[1], bad])
        proc = _run("import", str(out), "--cache", str(tmp_path / "d.sqlite"))
        assert _error(proc) == f"file {out}, record 2, {message}"
        assert not (tmp_path / "d.sqlite").exists()


def test_unreadable_files_are_refused_with_one_line_and_nothing_imported(tmp_path: Path) -> None:
    _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "rows.jsonl.gz"
    assert _run("export", str(out), "--cache", str(tmp_path / "a.sqlite")).returncode == 0
    whole = out.read_bytes()
    truncated = tmp_path / "truncated.jsonl.gz"
    truncated.write_bytes(whole[: len(whole) * 2 // 3])
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(gzip.decompress(whole))
    cases = {
        truncated: f"file {truncated}: gzip data ends or breaks after record",
        plain: f"file {plain}: not a gzip file (an answers export is .jsonl.gz)",
        tmp_path / "missing.jsonl.gz": f"file {tmp_path / 'missing.jsonl.gz'}: no such file",
    }
    cache = tmp_path / "b.sqlite"
    for source, message in cases.items():
        assert _error(_run("import", str(source), "--cache", str(cache))).startswith(message)
        assert not cache.exists()  # nothing written, not even an empty cache
    # a cache that exists keeps exactly its rows
    _filled_cache(cache)
    before = cache.read_bytes()
    assert _error(_run("import", str(truncated), "--cache", str(cache))).startswith(
        cases[truncated]
    )
    assert cache.read_bytes() == before
    missing_cache = tmp_path / "none.sqlite"
    proc = _run("export", str(tmp_path / "x.jsonl.gz"), "--cache", str(missing_cache))
    assert _error(proc) == f"file {missing_cache}: no answer cache here (nothing to export)"
    assert not missing_cache.exists() and not (tmp_path / "x.jsonl.gz").exists()


def test_the_old_script_is_the_same_command(tmp_path: Path) -> None:
    _filled_cache(tmp_path / "a.sqlite")
    out = tmp_path / "rows.jsonl.gz"
    argv = [sys.executable, str(SCRIPT), "export", str(out), "--cache", str(tmp_path / "a.sqlite")]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0 and "3 answers" in proc.stdout
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "import", str(tmp_path / "nope.gz")],
        capture_output=True,
        text=True,
    )
    assert _error(proc).endswith("nope.gz: no such file")
