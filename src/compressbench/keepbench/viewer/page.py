"""The KEEP-Bench viewer page as a :class:`~compressbench.viewer.PageSpec`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.viewer import PageSpec

HERE = Path(__file__).parent
FILENAME = "keepbench.html"
NAV = (("TPBench cases", "index.html"), ("KEEP-Bench cases", FILENAME))


def keep_summary(cases: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Per output label: cases, propositions judged, kept, lost, and cases with every one kept."""
    rows = []
    for label in labels:
        outs = [c["outputs"][label] for c in cases if label in c["outputs"]]
        verdicts = [v for o in outs for v in o["verdicts"].values()]
        complete = sum(
            bool(o["verdicts"]) and all(v["preserved"] is True for v in o["verdicts"].values())
            for o in outs
        )
        rows.append(
            {
                "label": label,
                "compressor": outs[0]["compressor"] if outs else label,
                "cases": len(outs),
                "judged": len(verdicts),
                "kept": sum(v["preserved"] is True for v in verdicts),
                "lost": sum(v["preserved"] is False for v in verdicts),
                "complete": complete,
            }
        )
    return rows


def keepbench_page(
    cases: Sequence[Mapping[str, Any]], labels: Sequence[str], judge: str
) -> PageSpec:
    """The page of every KEEP-Bench case and compressor output."""
    subsets = list(dict.fromkeys(c["subset"] for c in cases))
    compressors = list(dict.fromkeys(label.split(" x", 1)[0] for label in labels))
    return PageSpec(
        filename=FILENAME,
        title="KEEP-Bench: which evidence each compressor kept",
        template="keepbench.html.j2",
        template_dir=HERE / "templates",
        data={"labels": list(labels), "cases": list(cases)},
        scripts=(HERE / "static" / "keepbench.js",),
        context={
            "judge": judge,
            "n_cases": len(cases),
            "summary": keep_summary(cases, labels),
            "subsets": [(s, s) for s in subsets],
            "compressors": [(c, c) for c in compressors],
            "outcomes": (("lost", "some evidence lost"), ("complete", "every proposition kept")),
        },
        nav=NAV,
    )
