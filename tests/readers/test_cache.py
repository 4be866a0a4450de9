"""Answer cache: keys, hits, no regeneration, and resume after a real ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from compressbench.readers.base import ChatRequest, Generation
from compressbench.readers.cache import AnswerCache, cache_key, generate_cached
from compressbench.readers.mock import MockReader
from compressbench.readers.postprocess import from_text
from support.echo_reader import ECHO, echo_reader, make_requests, stable_dump
from support.paths import TESTS_DIR


def test_key_covers_prompt_decoding_and_model() -> None:
    reader = echo_reader()
    base = ChatRequest("a", "S", "U", 96)
    k = cache_key(reader, base)
    assert k == cache_key(reader, ChatRequest("other-id", "S", "U", 96))  # id is not content
    assert k != cache_key(reader, ChatRequest("a", "S", "U", 128))
    assert k != cache_key(reader, ChatRequest("a", "S2", "U", 96))
    other = echo_reader()
    other.revision = "r2"
    assert k != cache_key(other, base)


def test_hits_are_never_regenerated(tmp_path: Path) -> None:
    reqs = make_requests(12)
    reader = echo_reader(batch_size=4)
    with AnswerCache(tmp_path / "c.sqlite") as cache:
        first = generate_cached(reader, reqs, cache, progress=False)
        unique = len({cache_key(reader, r) for r in reqs})
        assert reader.calls == unique
        assert first.stats.model_calls == unique
        assert first.stats.shared == len(reqs) - unique
        assert [g.id for g in first.generations] == [r.id for r in reqs]
        assert first.keys == [cache_key(reader, r) for r in reqs]
        assert set(first.keys) == set(cache.keys())
        again = generate_cached(reader, reqs, cache, progress=False)
        assert reader.calls == unique  # nothing regenerated
        assert again.stats.hits == len(reqs)
        assert again.stats.model_calls == 0
        assert stable_dump(again.generations) == stable_dump(first.generations)
        assert len(cache) == unique


def test_exception_rows_are_returned_but_not_stored(tmp_path: Path) -> None:
    reqs = [ChatRequest("ok", "S", "fine"), ChatRequest("bad", "S", "FAIL please")]
    reader = echo_reader()
    with AnswerCache(tmp_path / "c.sqlite") as cache:
        run = generate_cached(reader, reqs, cache, progress=False)
        assert run.generations[1].error == "exception:RuntimeError:transient"
        assert run.stats.not_stored == 1
        assert len(cache) == 1
        generate_cached(reader, reqs, cache, progress=False)
        assert reader.calls == 3  # the failed row is tried again, the good one is not


def test_put_never_overwrites(tmp_path: Path) -> None:
    with AnswerCache(tmp_path / "c.sqlite") as cache:
        cache.put("k", from_text("a", '{"v": 1}'))
        cache.put("k", from_text("a", '{"v": 2}'))
        found = cache.entries(["k", "missing"])
        assert list(found) == ["k"] and found["k"].generation.json_text == '{"v": 1}'
        assert len(cache) == 1


_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests_dir!r})
    from support.echo_reader import echo_reader, make_requests, stable_dump
    from compressbench.readers.cache import AnswerCache, generate_cached

    cache_path, out_path, log_path, delay = sys.argv[1:5]
    reader = echo_reader(delay=float(delay), log_path=log_path, batch_size=4)
    with AnswerCache(cache_path) as cache:
        run = generate_cached(reader, make_requests(40), cache, progress=False)
    with open(out_path, "wb") as fh:
        fh.write(stable_dump(run.generations))
    print(run.stats.model_calls, run.stats.hits)
    """
)


def _run(script: Path, cache: Path, out: Path, log: Path, delay: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), str(cache), str(out), str(log), str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_resume_after_kill_9_is_byte_identical(tmp_path: Path) -> None:
    script = tmp_path / "run_cached.py"
    script.write_text(_SCRIPT.format(tests_dir=str(TESTS_DIR)))

    # Uninterrupted reference run.
    ref = _run(script, tmp_path / "ref.sqlite", tmp_path / "ref.jsonl", tmp_path / "ref.log", 0.0)
    assert ref.wait(timeout=120) == 0

    # Interrupted run: kill -9 once a dozen requests were generated.
    cache, log = tmp_path / "run.sqlite", tmp_path / "run.log"
    proc = _run(script, cache, tmp_path / "dead.jsonl", log, 0.1)
    deadline = time.monotonic() + 60
    while len(_lines(log)) < 14 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "dead.jsonl").exists()
    generated_before = len(_lines(log))
    with sqlite3.connect(cache) as db:
        committed = db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    distinct = len({(r.system, r.user, r.max_new_tokens) for r in make_requests(40)})
    assert 0 < committed <= generated_before < distinct

    # Resume to completion.
    resumed = _run(script, cache, tmp_path / "resumed.jsonl", log, 0.0)
    out, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0
    model_calls, hits = map(int, out.split())
    assert hits >= committed
    assert model_calls + hits <= 40
    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "ref.jsonl").read_bytes()

    # Only the in-flight chunk (at most one batch of 4) was generated twice.
    ids = _lines(log)
    regenerated = len(ids) - len(set(ids))
    assert regenerated <= 4
    with sqlite3.connect(cache) as db:
        dupes = db.execute("SELECT key FROM answers GROUP BY key HAVING COUNT(*) > 1").fetchall()
        total = db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    assert dupes == []
    assert total == len(set(_lines(tmp_path / "ref.log"))) == distinct

    # A third run generates nothing.
    third = _run(script, cache, tmp_path / "third.jsonl", log, 0.0)
    out, _ = third.communicate(timeout=120)
    assert out.split() == ["0", "40"]


class RecordingReader(MockReader):
    """The echo mock whose generations carry a hook record (keys deliberately unsorted)."""

    def generate(self, requests: Sequence[ChatRequest]) -> list[Generation]:
        gens = super().generate(requests)
        for g, r in zip(gens, requests, strict=True):
            g.record = {"mode": "full_prompt", "context_tokens": len(r.user), "kept": [3, 1]}
        return gens


def test_records_and_compute_times_are_persisted(tmp_path: Path) -> None:
    reqs = make_requests(10)
    reader = RecordingReader(**ECHO, batch_size=4)
    with AnswerCache(tmp_path / "c.sqlite") as cache:
        before = time.time()
        first = generate_cached(reader, reqs, cache, progress=False)
        after = time.time()
        assert [g.record for g in first.generations] == [
            {"context_tokens": len(r.user), "kept": [3, 1], "mode": "full_prompt"} for r in reqs
        ]
        assert all(before <= s <= e <= after for s, e in first.spans)
        assert len(set(first.spans)) == 2  # 8 distinct prompts, two chunks of 4
        window = first.compute_window()
        assert window == (min(s for s, _ in first.spans), max(e for _, e in first.spans))
    with AnswerCache(tmp_path / "c.sqlite") as cache:  # a new process's view of the file
        again = generate_cached(reader, reqs, cache, progress=False)
    assert again.stats.hits == len(reqs) and again.stats.model_calls == 0
    assert stable_dump(again.generations) == stable_dump(first.generations)
    assert [list(g.record or {}) for g in again.generations] == [
        ["context_tokens", "kept", "mode"]
    ] * len(reqs)
    assert again.spans == first.spans
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        stored = db.execute("SELECT generation, record FROM answers").fetchall()
    assert all(
        "record" not in json.loads(blob) and json.loads(rec)["kept"] == [3, 1]
        for blob, rec in stored
    )


_OLD_SCHEMA = (
    "CREATE TABLE answers (key TEXT PRIMARY KEY, request TEXT NOT NULL, "
    "generation TEXT NOT NULL, created_at REAL NOT NULL)"
)


def test_old_schema_file_is_migrated_without_losing_answers(tmp_path: Path) -> None:
    """A cache written before records and start times were kept: columns added in place."""
    path = tmp_path / "old.sqlite"
    reqs = make_requests(6)
    reader = echo_reader()
    old = [g.to_dict() for g in reader.generate(reqs)]
    for row in old:
        row.pop("record")  # the old generation blob had no record
        row["seconds"] = 2.5
    with sqlite3.connect(path) as db:
        db.execute(_OLD_SCHEMA)
        db.executemany(
            "INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?)",
            [
                (cache_key(reader, r), "{}", json.dumps(g), 1000.0)
                for r, g in zip(reqs, old, strict=True)
            ],
        )
    with AnswerCache(path) as cache:
        assert len(cache) == 5  # one prompt repeats
        run = generate_cached(reader, reqs, cache, progress=False)
        assert run.stats.hits == len(reqs) and run.stats.model_calls == 0
        assert [g.raw for g in run.generations] == [g["raw"] for g in old]
        assert all(g.record is None for g in run.generations)
        assert run.spans == [(997.5, 1000.0)] * len(reqs)  # created_at - seconds, created_at
        cache.put("new", from_text("x", "{}"))
    with AnswerCache(path) as cache:  # reopening a migrated file changes nothing
        assert len(cache) == 6
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(answers)")]
    assert columns == ["key", "request", "generation", "created_at", "record", "started_at"]


@pytest.mark.parametrize("n", [0, 1])
def test_small_inputs(tmp_path: Path, n: int) -> None:
    with AnswerCache(tmp_path / "c.sqlite") as cache:
        run = generate_cached(echo_reader(), make_requests(n), cache, progress=False)
        assert len(run.generations) == n
