"""A small real TPBench run for the case viewer's tests: the built-in corpus, three methods,
the deletion experiment, read by the ``mock`` backend answering gold where visible (main-grid
and deletion prompts alike), then the viewer stage; and the data a viewer page embeds, read
back from its HTML."""

from __future__ import annotations

import html.parser
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compressbench import stages
from compressbench.config import Params, parse_params
from support.answer_tables import TABLE, gold_where_visible, mock_lookup, write_table
from support.params import RATIO, pipeline_params, sqlite_tracking

METHODS = ("full_context", "recency", "first_n")


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    """Run with ``folder`` as the working directory and its own answer cache."""
    before, cache = Path.cwd(), os.environ.get("COMPRESSBENCH_ANSWER_CACHE")
    os.chdir(folder)
    os.environ["COMPRESSBENCH_ANSWER_CACHE"] = str(folder / "answers.sqlite")
    try:
        yield
    finally:
        os.chdir(before)
        if cache is None:
            os.environ.pop("COMPRESSBENCH_ANSWER_CACHE", None)
        else:
            os.environ["COMPRESSBENCH_ANSWER_CACHE"] = cache


def viewer_params(folder: Path) -> Params:
    raw = pipeline_params(
        n_per_cell=8,
        methods=list(METHODS),
        deletions={"enabled": True, "max_probes": 2},
        reader=mock_lookup(folder / TABLE),
        tracking=sqlite_tracking(folder, "viewer"),
    )
    return parse_params(raw, "viewer-params.yaml")


def run_tpbench(folder: Path) -> Params:
    """Every TPBench stage the viewer reads, then the viewer, in ``folder`` (the cwd)."""
    params = viewer_params(folder)
    stages.stage_corpora(params, "builtin")
    stages.stage_probes(params, "builtin", RATIO)
    for method in METHODS:
        stages.stage_contexts(params, "builtin", method, RATIO)
    stages.stage_deletions(params, "builtin")
    write_table(folder / TABLE, gold_where_visible)  # every prompt written above
    for method in METHODS:
        stages.stage_answers(params, "builtin", method, RATIO)
        stages.stage_scores(params, "builtin", method, RATIO)
    stages.stage_deletion_answers(params, "builtin")
    stages.stage_deletion_scores(params, "builtin")
    stages.stage_viewer(params)
    return params


class _DataScript(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.inside = tag == "script" and ("id", "cb-data") in attrs

    def handle_endtag(self, tag: str) -> None:
        self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.text.append(data)


def page_data(page: Path) -> Any:
    """The JSON a viewer page embeds (``script#cb-data``), as the page's script parses it."""
    parser = _DataScript()
    parser.feed(page.read_text(encoding="utf-8"))
    return json.loads("".join(parser.text))


KEEP_COMPRESSORS = ("first_n", "recency")


def run_keepbench(folder: Path) -> Params:
    """KEEP-Bench's cases (one per subset), two turn-selector compressors, the offline lexical
    judge, then the KEEP-Bench viewer, in ``folder`` (the cwd)."""
    raw = pipeline_params(
        keepbench={
            "max_per_subset": 1,
            "compressors": {name: {} for name in KEEP_COMPRESSORS},
            "judge": "lexical",
        },
        tracking=sqlite_tracking(folder, "viewer-keep"),
    )
    params = parse_params(raw, "viewer-keep-params.yaml")
    stages.stage_keep_cases(params)
    for name in KEEP_COMPRESSORS:
        stages.stage_keep_compressed(params, name)
        stages.stage_keep_verdicts(params, name)
    stages.stage_keep_viewer(params)
    return params
