"""The TPBench viewer page: its data, summary, filter options and script, as a
:class:`~compressbench.viewer.PageSpec` (rendered by :mod:`compressbench.viewer`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.tpbench.viewer.summary import FULL, cell_link, summary_tables
from compressbench.viewer import PageSpec

HERE = Path(__file__).parent
FILENAME = "index.html"
VIEWER_DIR = Path("reports") / "viewer"  # beside reports/tpbench.md, which links into it
VIEWER_FILE = VIEWER_DIR / FILENAME
KEEP_FILENAME = "keepbench.html"
NAV = (("TPBench cases", FILENAME), ("KEEP-Bench cases", KEEP_FILENAME))
OUTCOMES = (
    ("right", "method right (strict)"),
    ("wrong", "method wrong (strict)"),
    ("full_right_method_wrong", "full context right, method wrong"),
    ("full_wrong_method_right", "full context wrong, method right"),
)


def viewer_link(method: str, probe: str, dataset: str = "", ratio: float | None = None) -> str:
    """A report cell's link into its cases (relative to ``reports/``)."""
    hash_ = cell_link(
        dataset=dataset, ratio=None if ratio is None else repr(ratio), method=method, probe=probe
    )
    return f"viewer/{FILENAME}{hash_}"


def tpbench_page(
    cases: Sequence[Mapping[str, Any]],
    deletions: Sequence[Mapping[str, Any]],
    *,
    methods: Sequence[str],
    probe_types: Sequence[str],
    datasets: Sequence[str],
    ratios: Sequence[float],
    reader: str,
) -> PageSpec:
    """The page of every case (and the deletion experiment's probes)."""
    data = {
        "methods": list(methods),
        "full": FULL if FULL in methods else None,
        "cases": list(cases),
        "deletions": list(deletions),
    }
    return PageSpec(
        filename=FILENAME,
        title="TPBench: what each method kept, and what the reader answered",
        template="tpbench.html.j2",
        template_dir=HERE / "templates",
        data=data,
        scripts=(HERE / "static" / "tpbench.js",),
        context={
            "reader": reader,
            "n_cases": len(cases),
            "n_deletions": len(deletions),
            "summary": summary_tables(cases, methods, probe_types),
            "methods": list(methods),
            "probe_types": list(probe_types),
            "datasets": list(datasets),
            "ratios": [repr(r) for r in ratios],
            "outcomes": OUTCOMES,
            "pairs": lambda values: [(v, v) for v in values],
        },
        nav=NAV,
    )
