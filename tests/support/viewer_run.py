"""A small real TPBench run for the case viewer's tests: the built-in corpus, three methods,
the deletion experiment, read by the deterministic gold-where-visible reader, then the viewer
stage; and the data a viewer page embeds, read back from its HTML."""

from __future__ import annotations

import dataclasses
import html.parser
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compressbench import stages
from compressbench.config import Params, parse_params
from compressbench.readers.base import ChatRequest
from compressbench.readers.registry import register_reader, unregister_reader
from compressbench.tpbench.stages import paths
from support.gold_reader import GoldWhereVisibleReader
from support.params import RATIO, pipeline_params, sqlite_tracking

METHODS = ("full_context", "recency", "first_n")


class GoldReader(GoldWhereVisibleReader):
    """The gold-where-visible reader, also for the deletion experiment's requests (their id is
    ``<condition>|<seed>|<probe id>`` of a P2 probe; the context decides what is visible)."""

    name = "gold_where_visible_viewer"

    def answer(self, request: ChatRequest) -> str:
        head, rest = request.id.split("|", 1)
        if head not in ("P1", "P2", "P3"):
            request = dataclasses.replace(request, id=f"P2|{rest}")
        return super().answer(request)


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
        reader={
            "backend": GoldReader.name,
            "model": str(paths.probes_file("builtin", RATIO)),
        },
        tracking=sqlite_tracking(folder, "viewer"),
    )
    return parse_params(raw, "viewer-params.yaml")


@contextmanager
def gold_reader() -> Iterator[None]:
    """:class:`GoldReader` registered for the block (params naming it parse only then)."""
    register_reader(GoldReader.name, GoldReader)
    try:
        yield
    finally:
        unregister_reader(GoldReader.name)


def run_tpbench(folder: Path) -> Params:
    """Every TPBench stage the viewer reads, then the viewer, in ``folder`` (the cwd)."""
    with gold_reader():
        params = viewer_params(folder)
        stages.stage_corpora(params, "builtin")
        stages.stage_probes(params, "builtin", RATIO)
        for method in METHODS:
            for stage in (stages.stage_contexts, stages.stage_answers, stages.stage_scores):
                stage(params, "builtin", method, RATIO)
        stages.stage_deletions(params, "builtin")
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
