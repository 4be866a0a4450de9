"""``compressbench doctor`` through the real CLI: one line per check, exit 1 on a failure."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from compressbench.doctor.checks import ORDER

LLAMA = {
    "backend": "hf",
    "model": "meta-llama/Llama-3.1-8B-Instruct",
    "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
    "dtype": "bfloat16",
    "batch_size": 8,
}
Doctor = Callable[..., subprocess.CompletedProcess[str]]
LINE = re.compile(r"^(PASS|FAIL|SKIP)  (\S+) +\S.*$")


def _lines(stdout: str) -> dict[str, tuple[str, str]]:
    out = {}
    for line in stdout.splitlines():
        m = LINE.match(line)
        assert m, f"not a check line: {line!r}"
        out[m.group(2)] = (m.group(1), line)
    return out


def test_paper_reader_on_this_box_fails_one_line_per_check(
    doctor: Doctor, write_params: Callable[..., Path], closed_port: int
) -> None:
    import torch

    params = write_params(LLAMA)
    proc = doctor("--params", str(params), "--tracking-uri", f"http://127.0.0.1:{closed_port}")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    lines = _lines(proc.stdout)
    assert list(lines) == list(ORDER)
    assert lines["params"][0] == "PASS"
    if not torch.cuda.is_available():
        assert lines["gpu"][0] == "FAIL" and "no GPU visible to torch" in lines["gpu"][1]
        assert lines["gpu-memory"][0] == "FAIL" and "no GPU; needs" in lines["gpu-memory"][1]
    assert lines["reader"][0] == "FAIL" and "HF_TOKEN" in lines["reader"][1]
    assert lines["tracking"][0] == "FAIL" and "unreachable" in lines["tracking"][1]


def test_passing_checks_exit_zero_and_json(
    doctor: Doctor, write_params: Callable[..., Path], tmp_path: Path
) -> None:
    params = write_params({"backend": "llamacpp", "model": "smollm2"})
    store = f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"
    args = ["--params", str(params), "--tracking-uri", store]
    args += ["--only", "params", "--only", "gpu", "--only", "reader", "--only", "tracking"]
    proc = doctor(*args)
    lines = _lines(proc.stdout)
    assert proc.returncode == 0, proc.stdout
    assert list(lines) == ["params", "gpu", "reader", "tracking"]
    assert {s for s, _ in lines.values()} <= {"PASS", "SKIP"}
    proc = doctor(*args, "--json")
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["failed"] == []
    assert [c["name"] for c in report["checks"]] == ["params", "gpu", "reader", "tracking"]


def test_bad_params_fail_their_line_and_skip_what_depends_on_them(
    doctor: Doctor, tmp_path: Path
) -> None:
    bad = tmp_path / "params.yaml"
    bad.write_text("reader: {backend: nonsense}\n")
    proc = doctor("--params", str(bad), "--only", "params", "--only", "reader")
    lines = _lines(proc.stdout)
    assert proc.returncode == 1
    assert lines["params"][0] == "FAIL" and "params.yaml" in lines["params"][1]
    assert lines["reader"][0] == "SKIP" and "not valid" in lines["reader"][1]


def test_unknown_check_is_one_line_exit_2(doctor: Doctor) -> None:
    proc = doctor("--only", "nonsense")
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "unknown check 'nonsense'" in err[0] and "tracking" in err[0]
