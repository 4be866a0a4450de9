"""``compressbench compare`` end to end on real scored files, including its bad-input cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compressbench import cli
from compressbench.analysis import stats
from support.paths import REPO_ROOT

ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}


def scored_row(i: int, strict: int, *, seed: int = 42, probe_type: str = "P2") -> dict[str, Any]:
    """A scores-stage row: four probes per dialogue."""
    return {
        "probe_id": f"sgd:{i // 4:03d}:qa{i % 4:02d}",
        "probe_type": probe_type,
        "seed": seed,
        "dataset": "sgd",
        "dialogue_id": f"{i // 4:03d}",
        "prediction": "x",
        "scores": {"strict": strict, "loose": strict, "token_f1": 0.5},
    }


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = cli.main(["compare", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def files_23_vs_0(tmp_path: Path) -> tuple[Path, Path]:
    """86 pairs (as the SGD single-turn deletion set): 23 a-right/b-wrong, none the other way,
    50 both right, 13 both wrong; plus 2 rows only in a and 1 only in b."""
    a_vals = [1] * 23 + [1] * 50 + [0] * 13
    b_vals = [0] * 23 + [1] * 50 + [0] * 13
    a = [scored_row(i, v) for i, v in enumerate(a_vals)]
    b = [scored_row(i, v) for i, v in enumerate(b_vals)]
    a += [scored_row(100, 1), scored_row(101, 0)]
    b += [scored_row(102, 1)]
    b.reverse()  # pairing does not depend on row order
    return write(tmp_path / "a.jsonl", a), write(tmp_path / "b.jsonl", b)


def test_compare_reports_the_published_mcnemar_p(
    files_23_vs_0: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = files_23_vs_0
    out_path = tmp_path / "out" / "cmp.json"
    rc, out, err = run_main(
        ["--a", str(a), "--b", str(b), "--metric", "strict", "--output", str(out_path)], capsys
    )
    assert rc == 0, err
    result = json.loads(out)
    assert json.loads(out_path.read_text(encoding="utf-8")) == result
    assert (result["mcnemar_b"], result["mcnemar_c"]) == (23, 0)
    assert float(f"{result['mcnemar_p']:.2e}") == 2.38e-7
    assert result["n_pairs"] == 86
    assert (result["unpaired_a"], result["unpaired_b"]) == (2, 1)
    assert result["mean_a"] == pytest.approx(73 / 86)
    assert result["mean_b"] == pytest.approx(50 / 86)
    assert result["diff"] == pytest.approx(-23 / 86)
    assert result["ci_low"] <= result["diff"] <= result["ci_high"] < 0
    assert (result["resamples"], result["seed"]) == (10_000, 20260811)
    assert result["n_clusters"] == 22  # 86 probes, four per dialogue


def test_compare_interval_is_the_paired_dialogue_bootstrap(
    files_23_vs_0: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = files_23_vs_0
    rc, out, _ = run_main(
        ["--a", str(a), "--b", str(b), "--metric", "strict", "--resamples", "700", "--seed", "5"],
        capsys,
    )
    assert rc == 0
    result = json.loads(out)
    a_rows = sorted(
        (json.loads(line) for line in a.read_text().splitlines()), key=lambda r: r["probe_id"]
    )[:86]
    by_id = {json.loads(line)["probe_id"]: json.loads(line) for line in b.read_text().splitlines()}
    expected = stats.paired_cluster_bootstrap(
        [r["scores"]["strict"] for r in a_rows],
        [by_id[r["probe_id"]]["scores"]["strict"] for r in a_rows],
        [r["dialogue_id"] for r in a_rows],
        resamples=700,
        seed=5,
    )
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((expected.low, expected.high))
    assert result["resamples"] == 700
    again = run_main(
        ["--a", str(a), "--b", str(b), "--metric", "strict", "--resamples", "700", "--seed", "5"],
        capsys,
    )
    assert json.loads(again[1]) == result


def test_compare_pairs_by_probe_type_and_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = [scored_row(0, 1, seed=42), scored_row(0, 0, seed=43), scored_row(0, 1, probe_type="P1")]
    b = [scored_row(0, 0, seed=42), scored_row(0, 1, seed=43), scored_row(0, 1, seed=44)]
    rc, out, _ = run_main(
        [
            "--a",
            str(write(tmp_path / "a.jsonl", a)),
            "--b",
            str(write(tmp_path / "b.jsonl", b)),
            "--metric",
            "strict",
            "--resamples",
            "50",
        ],
        capsys,
    )
    assert rc == 0
    result = json.loads(out)
    assert result["n_pairs"] == 2
    assert (result["mcnemar_b"], result["mcnemar_c"]) == (1, 1)
    assert result["mcnemar_p"] == 1.0
    assert (result["unpaired_a"], result["unpaired_b"]) == (1, 1)


def test_compare_as_a_subprocess(files_23_vs_0: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = files_23_vs_0
    out_path = tmp_path / "cmp.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "compressbench.cli",
            "compare",
            "--a",
            str(a),
            "--b",
            str(b),
            "--metric",
            "loose",
            "--resamples",
            "200",
            "--output",
            str(out_path),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(out_path.read_text(encoding="utf-8"))
    assert json.loads(proc.stdout)["metric"] == "loose"


# --- bad input: one line naming file / row / field, exit 2, no output -------------------------


def _bad(rows: list[dict[str, Any]], mutate) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    rows = [json.loads(json.dumps(r)) for r in rows]
    mutate(rows[2])
    return rows


def _set_score(value: Any):  # type: ignore[no-untyped-def]
    return lambda r: r["scores"].__setitem__("strict", value)


BAD_CASES = {
    "fractional": (_set_score(0.5), ["row 3", "scores.strict", "0 or 1", "0.5"]),
    "two": (_set_score(2), ["row 3", "scores.strict", "0 or 1"]),
    "string": (_set_score("1"), ["row 3", "scores.strict"]),
    "boolean": (_set_score(True), ["row 3", "scores.strict"]),
    "no_metric": (lambda r: r["scores"].pop("strict"), ["row 3", "scores.strict", "missing"]),
    "no_scores": (lambda r: r.pop("scores"), ["row 3", "scores.strict", "missing"]),
    "no_dialogue": (lambda r: r.pop("dialogue_id"), ["row 3", "dialogue_id"]),
    "no_probe_id": (lambda r: r.pop("probe_id"), ["row 3", "probe_id"]),
    "seed_text": (lambda r: r.__setitem__("seed", "42"), ["row 3", "seed", "integer"]),
    "duplicate": (
        lambda r: r.__setitem__("probe_id", "sgd:000:qa00"),
        ["row 3", "duplicate", "row 1"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_rows_are_one_line_errors(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mutate, needles = BAD_CASES[case]
    good = [scored_row(i, i % 2) for i in range(6)]
    a = write(tmp_path / "a.jsonl", good)
    b = write(tmp_path / "bad.jsonl", _bad(good, mutate))
    out_path = tmp_path / "cmp.json"
    rc, out, err = run_main(
        ["--a", str(a), "--b", str(b), "--metric", "strict", "--output", str(out_path)], capsys
    )
    assert rc == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert str(b) in err
    for needle in needles:
        assert needle in err
    assert not out_path.exists()


def test_bad_row_through_a_subprocess(tmp_path: Path) -> None:
    good = [scored_row(i, 1) for i in range(4)]
    a = write(tmp_path / "a.jsonl", _bad(good, _set_score(0.25)))
    b = write(tmp_path / "b.jsonl", good)
    out_path = tmp_path / "cmp.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "compressbench.cli",
            "compare",
            "--a",
            str(a),
            "--b",
            str(b),
            "--metric",
            "strict",
            "--output",
            str(out_path),
        ],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith("compressbench compare: error: file ")
    assert str(a) in line and "row 3" in line and "scores.strict" in line
    assert not out_path.exists()


def test_no_pairs_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.jsonl", [scored_row(0, 1, seed=42)])
    b = write(tmp_path / "b.jsonl", [scored_row(0, 1, seed=43)])
    rc, out, err = run_main(["--a", str(a), "--b", str(b), "--metric", "strict"], capsys)
    assert rc == 2 and out == ""
    assert "no row" in err and str(a) in err and str(b) in err


def test_paired_rows_from_different_dialogues_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = scored_row(0, 1)
    a = write(tmp_path / "a.jsonl", [row])
    b = write(tmp_path / "b.jsonl", [{**row, "dialogue_id": "other"}])
    rc, _, err = run_main(["--a", str(a), "--b", str(b), "--metric", "strict"], capsys)
    assert rc == 2
    assert "dialogue_id" in err and "'other'" in err


def test_missing_file_and_bad_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.jsonl", [scored_row(0, 1)])
    rc, _, err = run_main(
        ["--a", str(a), "--b", str(tmp_path / "nope.jsonl"), "--metric", "strict"], capsys
    )
    assert rc == 2 and "nope.jsonl" in err and "not found" in err
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(scored_row(0, 1)) + "\n{oops\n", encoding="utf-8")
    rc, _, err = run_main(["--a", str(a), "--b", str(broken), "--metric", "strict"], capsys)
    assert rc == 2 and "broken.jsonl" in err and "line 2" in err


@pytest.mark.parametrize(
    ("flag", "value"), [("--resamples", "0"), ("--resamples", "many"), ("--seed", "-1")]
)
def test_bad_settings_are_rejected(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path / "a.jsonl", [scored_row(0, 1)])
    with pytest.raises(SystemExit) as exc:
        cli.main(["compare", "--a", str(a), "--b", str(a), "--metric", "strict", flag, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert flag in err and len(err.strip().splitlines()) == 1
