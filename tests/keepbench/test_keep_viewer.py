"""The KEEP-Bench case viewer shows what the stage files hold: from a real small run (one case
per subset, two compressors, the lexical judge), every compressed output and every verdict row
is on the page, and bad input names its file, record and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from compressbench.errors import InputError
from compressbench.jsonl import read_jsonl
from compressbench.keepbench.stages import keep_paths
from compressbench.keepbench.stages.keep_common import read_cases
from compressbench.keepbench.viewer.cases import OutputRows, build_keep_cases
from compressbench.keepbench.viewer.page import FILENAME
from support.viewer_run import KEEP_COMPRESSORS, inside, page_data, run_keepbench


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("keep-viewer-run")
    with inside(folder):
        run_keepbench(folder)
    return folder


def test_every_output_and_verdict_is_shown_as_stored(run: Path) -> None:
    data = page_data(run / "reports" / "viewer" / FILENAME)
    cases = {c["case_id"]: c for c in data["cases"]}
    assert data["labels"] == [f"{n} x1.0" for n in KEEP_COMPRESSORS]
    verdicts = 0
    for name in KEEP_COMPRESSORS:
        label = f"{name} x1.0"
        for row in read_jsonl(run / keep_paths.compressed_file(name, 1.0)):
            assert cases[row["case_id"]]["outputs"][label]["compressed"] == row["compressed"]
        for row in read_jsonl(run / keep_paths.verdicts_file("lexical", name, 1.0)):
            shown = cases[row["case_id"]]["outputs"][label]["verdicts"][row["proposition_id"]]
            assert shown["preserved"] == row["preserved"]
            assert shown["judgement"] == row["judgement"]
            assert shown["reason"] == row["raw"]
            verdicts += 1
    assert (
        verdicts
        == sum(len(o["verdicts"]) for c in cases.values() for o in c["outputs"].values())
        > 0
    )
    subsets = {c["subset"] for c in cases.values()}
    assert len(subsets) == len(cases) >= 3  # one case per subset


def test_a_verdict_for_an_unknown_proposition_is_refused(run: Path) -> None:
    with inside(run):
        cases = read_cases()
        compressed = list(read_jsonl(keep_paths.compressed_file("first_n", 1.0)))
    bad = {"case_id": cases[0].case_id, "proposition_id": "no-such-prop", "preserved": True}
    out = OutputRows("first_n", 1.0, compressed, [bad], Path("c.jsonl"), Path("v.jsonl"))
    with pytest.raises(InputError, match=r"file v\.jsonl, record row 1, field 'proposition_id'"):
        build_keep_cases(cases, [out])
