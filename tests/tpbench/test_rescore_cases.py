"""``compressbench rescore`` reproduces every stored score of the TPBench reference cases.

Each case of ``tests/data/tpbench_release/scorer_cases_dev`` becomes one rescore input row; the
real CLI scores the file and every stored (non-null) expected field must equal ours, field by
field.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compressbench import cli

Case = dict[str, Any]


def _flags(case: Case) -> dict[str, Any]:
    return {
        "dataset": case["dataset"],
        "prediction": case["pred_value"],
        "abstain": case["abstain"],  # p3 per-answer rows store null: read as false
        "error": bool(case.get("err", 0)),
    }


@dataclass(frozen=True)
class CaseFile:
    name: str
    references: Callable[[Case], dict[str, Any]]
    fields: dict[str, str]  # artifact field -> our score field
    rows: int
    checked: int  # non-null expected fields


CASE_FILES: dict[str, CaseFile] = {
    "p1": CaseFile(
        "p1_cases.jsonl",
        lambda c: {"reference": c["gold"]},
        {"p1_correct": "strict", "p1_correct_loose": "loose", "p1_token_f1": "token_f1"},
        rows=92,
        checked=204,
    ),
    "p2": CaseFile(
        "p2_cases.jsonl",
        lambda c: {"reference": c["gold_value"]},
        {
            "p3_correct": "strict",
            "p3_correct_loose": "loose",
            "p3_overlap_strict": "overlap_strict",
            "p3_overlap_loose": "overlap_loose",
            "norm_pred": "norm_pred",
            "norm_gold": "norm_gold",
        },
        rows=92,
        checked=304,
    ),
    "p2_lme": CaseFile(
        "p2_lme_ku_cases.jsonl",
        lambda c: {"reference": c["gold_value"]},
        {"p3_em_strict": "strict", "p3_em_loose": "loose"},
        rows=6,
        checked=12,
    ),
    "p3": CaseFile(
        "p3_cases.jsonl",
        lambda c: {"reference_goal": c["gold_story_label"], "reference_value": c["gold_value"]},
        {
            "p3_goal_correct": "goal",
            "p3_value_strict": "value_strict",
            "p3_value_loose": "value_loose",
            "p3_joint_strict": "strict",
            "p3_joint_loose": "loose",
            "p3_segment_parse": "parsed",
            "p1late_story_label_correct": "whole_goal",
            "p1late_value_correct_strict": "whole_value_strict",
            "p1late_value_correct": "whole_value_loose",
            "p1late_combined_strict": "whole_strict",
            "p1late_combined": "whole_loose",
            "p1late_token_f1": "whole_token_f1",
        },
        rows=92,
        checked=779,
    ),
}


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write_input(probe: str, release_dir: Path, tmp_path: Path) -> tuple[list[Case], Path]:
    spec = CASE_FILES[probe]
    cases = _read(release_dir / "scorer_cases_dev" / spec.name)
    rows = [{"case_id": c["case_id"], **_flags(c), **spec.references(c)} for c in cases]
    path = tmp_path / f"{probe}_in.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return cases, path


def _rescore(probe: str, inp: Path, out: Path) -> int:
    return cli.main(["rescore", "--probe", probe, "--input", str(inp), "--output", str(out)])


def _compare(probe: str, cases: list[Case], out: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """Number of fields checked and a description of every mismatch."""
    fields = CASE_FILES[probe].fields
    checked, mismatches = 0, []
    for case, row in zip(cases, out, strict=True):
        assert row["case_id"] == case["case_id"]
        for name, expected in case["expected"].items():
            if expected is None:  # not stored in the source: skip, it is not 0
                continue
            ours = row["scores"][fields[name]]
            checked += 1
            if ours != expected or type(ours) is not type(expected):
                mismatches.append(f"{case['case_id']} {name}: expected {expected!r}, got {ours!r}")
    return checked, mismatches


@pytest.mark.parametrize("probe", sorted(CASE_FILES))
def test_rescore_cli_matches_reference_cases(probe: str, release_dir: Path, tmp_path: Path) -> None:
    cases, inp = _write_input(probe, release_dir, tmp_path)
    out = tmp_path / f"{probe}_out.jsonl"
    assert _rescore(probe, inp, out) == 0
    rows = _read(out)
    checked, mismatches = _compare(probe, cases, rows)
    name = CASE_FILES[probe].name
    print(f"{name}: rows {len(rows)}, fields {checked}, mismatches {len(mismatches)}")
    assert mismatches == []
    assert len(rows) == CASE_FILES[probe].rows
    assert checked == CASE_FILES[probe].checked


def _console_script() -> str | None:
    beside = Path(sys.executable).with_name("compressbench")
    return str(beside) if beside.exists() else shutil.which("compressbench")


@pytest.mark.parametrize("probe", sorted(CASE_FILES))
def test_installed_console_script_matches_in_process(
    probe: str, release_dir: Path, tmp_path: Path
) -> None:
    script = _console_script()
    if script is None:
        pytest.skip("the compressbench console script is not installed")
    cases, inp = _write_input(probe, release_dir, tmp_path)
    out_sub, out_inproc = tmp_path / "sub.jsonl", tmp_path / "inproc.jsonl"
    cmd = [script, "rescore", "--probe", probe, "--input", str(inp), "--output", str(out_sub)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert _rescore(probe, inp, out_inproc) == 0
    assert out_sub.read_bytes() == out_inproc.read_bytes()
    assert _compare(probe, cases, _read(out_sub))[1] == []


# ---------------------------------------------------------------- interface and bad input

GOOD_ROW = {"dataset": "sgd", "prediction": "5:15 pm", "reference": "17:15", "id": "x:1"}


def _run(tmp_path: Path, lines: list[str], probe: str = "p2") -> tuple[int, Path]:
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return _rescore(probe, inp, out), out


def test_output_is_input_plus_scores(tmp_path: Path) -> None:
    rc, out = _run(tmp_path, [json.dumps(GOOD_ROW), "", json.dumps({**GOOD_ROW, "error": True})])
    assert rc == 0
    first, second = _read(out)
    assert {k: first[k] for k in GOOD_ROW} == GOOD_ROW
    assert first["scores"]["strict"] == 1 and first["scores"]["norm_gold"] == "17:15"
    assert second["scores"]["strict"] == 0


@pytest.mark.parametrize(
    ("probe", "keys"),
    [
        ("p1", {"strict", "loose", "token_f1"}),
        ("p2", {"strict", "loose", "overlap_strict", "overlap_loose", "norm_pred", "norm_gold"}),
        ("p2_lme", {"strict", "loose"}),
    ],
)
def test_score_keys(tmp_path: Path, probe: str, keys: set[str]) -> None:
    rc, out = _run(tmp_path, [json.dumps(GOOD_ROW)], probe)
    assert rc == 0
    assert set(_read(out)[0]["scores"]) == keys


def test_p3_score_keys(tmp_path: Path) -> None:
    row = {"dataset": "sgd", "prediction": "a; b: c", "reference_goal": "a", "reference_value": "c"}
    rc, out = _run(tmp_path, [json.dumps(row)], "p3")
    assert rc == 0
    assert set(_read(out)[0]["scores"]) == {
        "goal",
        "value_strict",
        "value_loose",
        "strict",
        "loose",
        "parsed",
        "whole_goal",
        "whole_value_strict",
        "whole_value_loose",
        "whole_strict",
        "whole_loose",
        "whole_token_f1",
    }


def test_risawoz_p1_uses_the_chinese_tokeniser(tmp_path: Path) -> None:
    row = {"dataset": "risawoz", "prediction": "找餐厅", "reference": "我想找一个餐厅"}
    rc, out = _run(tmp_path, [json.dumps(row, ensure_ascii=False)], "p1")
    assert rc == 0
    assert _read(out)[0]["scores"]["strict"] == 1


BAD_INPUTS = [
    pytest.param(['{"dataset": "sgd", "reference": "x"}'], "line 1", "'prediction'", id="missing"),
    pytest.param(
        [json.dumps(GOOD_ROW), '{"dataset": 3, "prediction": "x", "reference": "x"}'],
        "line 2",
        "'dataset'",
        id="dataset-type",
    ),
    pytest.param(
        ['{"dataset": "sgd", "prediction": "x", "reference": ["x"]}'],
        "line 1",
        "'reference'",
        id="reference-type",
    ),
    pytest.param(
        [json.dumps({**GOOD_ROW, "abstain": "false"})], "line 1", "'abstain'", id="flag-type"
    ),
    pytest.param([json.dumps(GOOD_ROW), "", '{"dataset": '], "line 3", "invalid JSON", id="json"),
    pytest.param(["[1, 2]"], "line 1", "JSON object", id="not-object"),
]


@pytest.mark.parametrize(("lines", "where", "what"), BAD_INPUTS)
def test_bad_input_names_file_line_field_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str], where: str, what: str
) -> None:
    rc, out = _run(tmp_path, lines)
    assert rc != 0
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "in.jsonl"]  # no temp file left behind
    err = capsys.readouterr().err
    assert "in.jsonl" in err and where in err and what in err


def test_bad_input_keeps_an_existing_output(tmp_path: Path) -> None:
    (tmp_path / "out.jsonl").write_text("old\n", encoding="utf-8")
    rc, out = _run(tmp_path, [json.dumps(GOOD_ROW), "{oops"])
    assert rc != 0
    assert out.read_text(encoding="utf-8") == "old\n"


def test_p3_needs_both_references(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _ = _run(tmp_path, [json.dumps(GOOD_ROW)], "p3")
    assert rc != 0
    assert "'reference_goal'" in capsys.readouterr().err


def test_missing_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = _rescore("p1", tmp_path / "nope.jsonl", tmp_path / "o.jsonl")
    assert rc != 0
    assert "nope.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_unknown_probe_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["rescore", "--probe", "p9", "--input", "x", "--output", str(tmp_path / "o")])
    assert exc.value.code != 0
