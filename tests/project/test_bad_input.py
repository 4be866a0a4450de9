"""Bad input, through the real CLI: one line on stderr naming the file / record / field (or the
parameter and its allowed values), exit code 2, no traceback, no output file.

Every case runs ``compressbench`` in a fresh directory holding the files the case writes (a
``params.yaml`` derived from the shipped one, a corpus, released rows, stage inputs) and fails
before any model loads. Cases run as subprocesses.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from compressbench.tpbench.stages import paths
from support.paths import REPO_ROOT

SHIPPED_PARAMS = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
CORPUS_FILE = "corpus/test/dialogues_001.json"
CELL = paths.CellFiles("builtin", "recency", 0.3)

Setup = Callable[[Path], None]


def params(mutate: Callable[[dict[str, Any]], Any] | None = None) -> Setup:
    """``params.yaml``: the shipped parameters, changed by ``mutate``."""

    def write(d: Path) -> None:
        raw = json.loads(json.dumps(SHIPPED_PARAMS))
        if mutate is not None:
            mutate(raw)
        (d / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")

    return write


def text_file(name: str, text: str | bytes) -> Setup:
    def write(d: Path) -> None:  # any parent folders too
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())

    return write


def both(*setups: Setup) -> Setup:
    def write(d: Path) -> None:
        for s in setups:
            s(d)

    return write


def minus(row: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != key}


FRAME = {"service": "Restaurants_1", "state": {"slot_values": {"city": ["Paris"]}}}
USER_TURN = {"speaker": "USER", "utterance": "A table in Paris.", "frames": [FRAME]}
SYSTEM_TURN = {"speaker": "SYSTEM", "utterance": "For when?", "frames": []}


def dialogue(dialogue_id: str = "d1", turns: Any = (USER_TURN, SYSTEM_TURN)) -> dict[str, Any]:
    """A schema-guided (SGD layout) dialogue; valid with the default turns."""
    turns = list(turns) if isinstance(turns, tuple) else turns
    return {"dialogue_id": dialogue_id, "services": ["Restaurants_1"], "turns": turns}


def corpus(records: Any) -> Setup:
    return text_file(CORPUS_FILE, json.dumps(records))


def released_row(dialogue_id: str = "v20_sgd_1_00001__qa_00") -> dict[str, Any]:
    """A released probe row (the spec's §3.7 fields this project reads)."""
    row = {"dialogue_id": dialogue_id, "dataset": "sgd", "probe_type": "P3"}
    row |= {"method": "full_context", "prompt_system": "Answer.", "prompt_user": "Which city?"}
    text = "[T0] USER: A table in Paris.\n[T1] SYSTEM: For when?"
    return row | {"compressed_text_used": text, "meta": {"ratio": 0.3, "sample_seed": 42}}


def released(*rows: dict[str, Any]) -> Setup:
    return text_file("released.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def gz_lines(*rows: dict[str, Any]) -> bytes:
    return gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())


def gz_truncated(records: Any) -> bytes:
    data = gzip.compress(json.dumps(records).encode())
    return data[: len(data) // 2]


# What the answers stage reads of a contexts row before it opens the answer cache.
CONTEXT_ROW = {"probe_id": "builtin:d1:0", "probe_type": "P2", "seed": 42}
CONTEXT_ROW |= {"prompt_system": "Answer in JSON.", "prompt_user": "Which city?"}


@dataclass(frozen=True)
class Case:
    """``argv`` run in a directory prepared by ``setup``; stderr must contain ``expect``."""

    id: str
    argv: str
    expect: tuple[str, ...]
    setup: Setup = field(default=lambda d: None)


def bad_params(id: str, key: str, value: Any, *expect: str) -> Case:
    """params.yaml with ``key`` (dotted) set to ``value``: every stage validates it first."""

    def mutate(raw: dict[str, Any]) -> None:
        *parents, last = key.split(".")
        for name in parents:
            raw = raw[name]
        raw[last] = value

    return Case(id, "stage corpora --dataset builtin", ("params.yaml", *expect), params(mutate))


def bad_corpus(id: str, setup: Setup, *expect: str, argv: str = "") -> Case:
    """A corpus fault, read by ``transitions`` from a folder in the SGD layout."""
    return Case(
        id, f"transitions --corpus sgd --path corpus --output out.json {argv}", expect, setup
    )


CELL_ARGS = "--dataset builtin --method recency --ratio 0.3"
RELEASED = "--released released.jsonl --output o.jsonl"
CORPUS_GZ = str(paths.corpus_file("builtin"))
CORPUS_ROW = {"dataset": "builtin", "dialogue_id": "d1", "turns": []}  # the corpora stage's

CASES = [
    # unknown names: methods, corpora, probes, backends, cells, released methods
    Case(
        "unknown-method",
        "retention --corpus builtin --methods recency,bogus --output o.jsonl",
        ("--methods", "'bogus'", "allowed:", "recency", "first_n"),
    ),
    Case(
        "unknown-corpus-loader",
        "transitions --corpus nope --output out.json",
        ("--corpus", "'nope'", "builtin", "multiwoz", "sgd"),
    ),
    Case(
        "unknown-probe",
        "probes --corpus builtin --probes p1,p9 --output o.jsonl",
        ("--probes", "'p9'", "P1, P2, P3"),
    ),
    bad_params(
        "unknown-backend",
        "reader.backend",
        "tgi",
        "'tgi'",
        "one of hf, llamacpp, mock, openai, vllm",
    ),
    Case(
        "dataset-not-in-params",
        "stage corpora --dataset nope",
        ("params.yaml", "datasets", "'nope'", "allowed: builtin"),
        params(),
    ),
    Case(
        "method-not-in-params",
        "stage contexts --dataset builtin --method bogus --ratio 0.3",
        ("params.yaml", "methods", "'bogus'", "allowed: full_context, recency"),
        params(),
    ),
    Case(
        "cli-ratio-out-of-range",
        "stage contexts --dataset builtin --method recency --ratio 1.5",
        ("--ratio", "1.5", "(0, 1]"),
        params(),
    ),
    Case(
        "cli-count-not-positive", "probes --corpus builtin --n 0 --output o.jsonl", ("--n", ">= 1")
    ),
    Case(
        "output-path-unwritable",
        "transitions --corpus builtin --output released.jsonl/out.json",
        ("--output", "released.jsonl is not a folder"),
        text_file("released.jsonl", "a file, not a folder\n"),
    ),
    Case(
        "replay-method-not-released",
        "tpbench-replay --input released.jsonl --methods mystery --output o.jsonl",
        ("released.jsonl", "mystery", "allowed: full_context"),
        released(released_row()),
    ),
    # params.yaml: types, ranges, unknown keys at every level, duplicates, syntax
    bad_params("params-wrong-type", "ratios", "0.3", "field 'ratios'", "expected list"),
    bad_params("params-integer-ratio", "ratios", [0.3, 1], "field 'ratios[1]'", "decimal (1.0)"),
    bad_params("params-out-of-range", "reader.batch_size", 0, "reader.batch_size", ">= 1"),
    bad_params("params-ratio-out-of-range", "p3_ratio", 1.3, "field 'p3_ratio'", "(0, 1]"),
    bad_params("params-unknown-key", "ratio", [0.3], "(top level)", "ratio;", "allowed:", "ratios"),
    bad_params("params-unknown-reader-key", "reader.colour", "red", "'reader'", "colour;"),
    bad_params("params-unknown-tracking-key", "tracking.run", "x", "'tracking'", "run;"),
    bad_params("params-unknown-scoring-key", "scoring.abstian", 1, "'scoring'", "abstian;"),
    bad_params("params-unknown-retention-key", "retention.ratio", 1, "'retention'", "ratio;"),
    bad_params(
        "params-unknown-corpus-key", "corpora.builtin.path", "x", "corpora.builtin", "path;"
    ),
    bad_params("params-unknown-choice", "scoring.abstain", "x", "published, json_literal"),
    bad_params("params-unknown-loader", "corpora.sgd.loader", "x", "builtin, multiwoz, sgd"),
    bad_params("params-duplicate-entry", "methods", ["recency"] * 2, "methods[1]", "twice"),
    bad_params("params-unknown-method", "methods", ["recency", "bogus"], "methods[1]", "allowed:"),
    bad_params(
        "params-unknown-method-param",
        *("method_params.chunkkv.chunk_len", 20, "chunkkv.chunk_len'", "allowed:", "chunk_length"),
    ),
    bad_params(
        "params-method-param-value",
        *("method_params.chunkkv.mode", "fast", "chunkkv.mode'", "context_only, full_prompt"),
    ),
    bad_params("params-p3-ratio-not-run", "p3_ratio", 0.5, "p3_ratio", "one of ratios (0.3)"),
    bad_params(
        "params-llamacpp-model-not-a-gguf",
        *("reader.model", "models/missing.gguf", "reader.model'", "'models/missing.gguf'"),
        "neither a packaged model (qwen2.5-coder-0.5b-instruct",
    ),
    Case(
        "use-config-llamacpp-model-unknown",
        "use-config overlay.yaml",
        ("params.yaml", "reader.model'", "'qwen9-nonexistent-instruct'", "nor a .gguf file"),
        both(
            params(),
            text_file(
                "overlay.yaml",
                "reader: {backend: llamacpp, model: qwen9-nonexistent-instruct}\n",
            ),
        ),
    ),
    Case(
        "params-invalid-yaml",
        "stage corpora --dataset builtin",
        ("params.yaml", "invalid YAML"),
        text_file("params.yaml", "datasets: [builtin\nmethods: [recency]\n"),
    ),
    Case("params-missing-file", "stage corpora --dataset builtin", ("params.yaml", "not found")),
    # corpus files
    bad_corpus(
        "corpus-truncated-gzip",
        text_file(CORPUS_FILE + ".gz", gz_truncated([dialogue()])),
        *("dialogues_001.json.gz", "cannot read"),
    ),
    bad_corpus(
        "corpus-not-json",
        text_file(CORPUS_FILE, "dialogue_id: d1\n"),
        *("dialogues_001.json", "invalid JSON", "line 1"),
    ),
    bad_corpus(
        "corpus-not-a-list",
        corpus({"dialogue_id": "d1"}),
        *("dialogues_001.json", "JSON list of dialogues"),
    ),
    bad_corpus(
        "corpus-missing-field",
        corpus([dialogue("d0"), dialogue(turns=[USER_TURN, minus(SYSTEM_TURN, "utterance")])]),
        *("dialogues_001.json", "record d1 (#1)", "'turns[1].utterance'", "missing"),
    ),
    bad_corpus(
        "corpus-wrong-field-type",
        corpus([dialogue(turns={"0": "hi"})]),
        *("dialogues_001.json", "record d1 (#0)", "'turns'", "expected a list"),
    ),
    bad_corpus(
        "corpus-duplicate-dialogue-id",
        corpus([dialogue(), dialogue()]),
        *("dialogues_001.json", "d1 (#1)", "'dialogue_id'", "duplicate", "#0"),
    ),
    bad_corpus("corpus-empty", corpus([]), "file corpus", "empty corpus"),
    bad_corpus(
        "corpus-missing-split",
        corpus([dialogue()]),
        *("file corpus", "split folder(s) train not found", "present: test"),
        argv="--splits train",
    ),
    # released probe rows
    Case(
        "released-duplicate-id",
        f"probes {RELEASED}",
        ("released.jsonl", "record line 2", "'dialogue_id'", "duplicate", "first at line 1"),
        released(released_row(), released_row()),
    ),
    Case(
        "released-missing-field",
        "tpbench-replay --input released.jsonl --output o.jsonl",
        ("released.jsonl", "record line 2", "'prompt_user'", "missing"),
        released(released_row(), minus(released_row("v2"), "prompt_user")),
    ),
    Case(
        "released-empty",
        f"probes {RELEASED}",
        ("released.jsonl", "no released probe rows"),
        text_file("released.jsonl", "\n"),
    ),
    # other input files: answers to rescore, stage inputs, the answer cache
    Case(
        "rescore-missing-field",
        "rescore --probe p2 --input answers.jsonl --output o.jsonl",
        ("answers.jsonl", "line 1", "'reference'", "missing"),
        text_file("answers.jsonl", json.dumps({"dataset": "sgd", "prediction": "x"}) + "\n"),
    ),
    Case(
        "stage-input-missing",
        f"stage scores {CELL_ARGS}",
        (str(CELL.answers), "not found"),
        params(),
    ),
    Case(
        "stage-input-truncated",
        "stage transitions --dataset builtin",
        (CORPUS_GZ, "unreadable"),
        both(params(), text_file(CORPUS_GZ, gz_truncated([{}] * 50))),
    ),
    Case(
        "stage-input-malformed-record",
        "stage transitions --dataset builtin",
        (CORPUS_GZ, "record line 2", "'turns'", "missing"),
        both(params(), text_file(CORPUS_GZ, gz_lines(CORPUS_ROW, minus(CORPUS_ROW, "turns")))),
    ),
    Case(
        "unreadable-answer-cache",
        f"stage answers {CELL_ARGS}",
        ("answers.sqlite", "unreadable answer cache"),
        both(
            # the mock that raises if asked: the case must fail before any generation
            params(lambda r: r["reader"].update(backend="mock", options={"mode": "unreachable"})),
            text_file(str(CELL.contexts), json.dumps(CONTEXT_ROW) + "\n"),
            text_file("answers.sqlite", b"this is not an sqlite database\n" * 64),
        ),
    ),
]


def files_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def run_cli(case: Case, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "COMPRESSBENCH_ANSWER_CACHE": str(cwd / "answers.sqlite")}
    proc = subprocess.run(
        [sys.executable, "-m", "compressbench.cli", *case.argv.split()],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_no_output(case: Case, tmp_path: Path) -> None:
    case.setup(tmp_path)
    before = files_under(tmp_path)
    code, stderr = run_cli(case, tmp_path)
    lines = stderr.strip("\n").split("\n")
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert len(lines) == 1 and lines[0].strip(), stderr
    assert lines[0].startswith("compressbench"), stderr
    for part in case.expect:
        assert part in lines[0], f"{part!r} not in {lines[0]!r}"
    assert files_under(tmp_path) == before, "bad input left an output file"


def test_cases_cover_at_least_twenty_classes() -> None:
    assert len({c.id for c in CASES}) == len(CASES) >= 20
