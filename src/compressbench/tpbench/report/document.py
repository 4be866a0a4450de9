"""The TPBench report: ``reports/tpbench.md`` with the paper's tables and three PNG figures.

:func:`write_report` computes every number once (:func:`~.report_model.compute`), draws the
figures and writes the markdown. When the reader cannot follow the answer format (the offline
default, a 135M model, or most answers without parseable JSON) the report says so first and
leads with the reader-free retention results, which hold for any reader.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

from compressbench.analysis.markdown import num
from compressbench.jsonl import atomic_writer
from compressbench.tpbench.report import sections as sections
from compressbench.tpbench.report import sections_extra as extra
from compressbench.tpbench.report.figures import (
    RetentionPoint,
    gap_figure,
    look_for,
    rank_figure,
    retention_figure,
)
from compressbench.tpbench.report.model import (
    RANK_COLUMNS,
    Findings,
    ReportInput,
    column_name,
    compute,
)
from compressbench.tpbench.report.retention_reading import by_seed, seed_mean
from compressbench.tpbench.report.sections_intervals import cell_intervals
from compressbench.tpbench.report.sections_paper import paper_ranking

CAPTIONS = {
    "rank_changes": "Rank of each compressed turn selector on P1-strict, P1-loose and "
    "P2-strict (1 = best; ties share the average rank and are drawn slightly apart). Solid "
    "lines: selectors that use position alone; dashed: selectors that read the dialogue's "
    "content. A line that falls from P1-loose to P2-strict keeps the opening but loses the "
    "revision (paper Figure 2).",
    "retention_accuracy": "Answer retention against P2-strict accuracy per method (filled), "
    "and accuracy on the examples whose value survived (hollow). Points below the dotted "
    "line lose answers the reader could have read; methods at the same point are drawn side "
    "by side.",
    "p3_gap": "P3 gap to full context in percentage points with 95% paired "
    "dialogue-clustered bootstrap intervals; an interval right of 0 means full context "
    "answers more.",
}
Section = Callable[[ReportInput, Findings], list[str]]


def _title(inp: ReportInput, what: str) -> str:
    """Two lines: what the figure shows, then the reader (wrapped when long)."""
    reader = textwrap.shorten(inp.reader.replace("`", ""), 100, placeholder=" …")
    return f"{what} at r = {inp.main_ratio:g}\nreader: {reader}"


def draw(inp: ReportInput, f: Findings, paths: Mapping[str, Path]) -> dict[str, Path]:
    """The three figures (one panel per dataset) at ``paths[name]``."""
    look = look_for(list(inp.methods), inp.labels, inp.styles)
    ranks = {d: f.ranks.get(d, {}) for d in inp.datasets}
    points: dict[str, list[RetentionPoint]] = {}
    for dataset in inp.datasets:
        points[dataset] = []
        for method in inp.methods:
            seeds = list(by_seed(f.reading.get((dataset, method, inp.main_ratio), [])).values())
            retention, accuracy = seed_mean(seeds, "retention"), seed_mean(seeds, "accuracy")
            if retention is not None and accuracy is not None:
                points[dataset].append(
                    RetentionPoint(
                        method, retention, accuracy, seed_mean(seeds, "accuracy_retained")
                    )
                )
    columns = [column_name(p, m) for p, m in RANK_COLUMNS]
    return {
        "rank_changes": rank_figure(
            ranks,
            columns,
            look,
            paths["rank_changes"],
            _title(inp, "Rank changes among compressed turn selectors"),
        ),
        "retention_accuracy": retention_figure(
            points,
            look,
            paths["retention_accuracy"],
            _title(inp, "P2: answer retention vs accuracy"),
        ),
        "p3_gap": gap_figure(
            {d: f.gaps.get(d, []) for d in inp.datasets},
            look,
            paths["p3_gap"],
            _title(inp, "P3 gap to full context"),
        ),
    }


def _figure(name: str, path: Path, root: Path) -> list[str]:
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
    return [f"![{name}]({rel})", "", f"*{CAPTIONS[name]}*", ""]


def banner(inp: ReportInput, f: Findings) -> list[str]:
    """The warning a reader of a weak-reader report sees first."""
    if not f.weak_reader(inp):
        return []
    rate = f.format_error_rate
    return [
        f"> **Read this first: the reader of this run ({inp.reader}) cannot do the task.** "
        + ("It is SmolLM2-135M, the smoke reader the tests use. " if inp.default_reader else "")
        + f"{num(rate if rate is None else 100 * rate, 1)}% of its answers have no parseable "
        "JSON (format errors, scored 0; see the `fmt err` columns), so its accuracies below "
        "prove the pipeline runs but say nothing about the compressors. The reader-free "
        "retention results come first because they hold for any reader. For reader findings "
        "set `reader:` in params.yaml to a capable model (the default `backend: llamacpp`, "
        "`model: qwen2.5-coder-0.5b-instruct` or `-1.5b-`; a served Llama-3.1-8B-Instruct "
        "through `backend: openai` or `vllm`) and rerun `dvc repro`.",
        "",
    ]


def render(inp: ReportInput, f: Findings, figures: Mapping[str, Path], root: Path) -> str:
    """The whole markdown (figure links relative to ``root``, the report's folder)."""
    lines = [
        "# TPBench report",
        "",
        f"Reader {inp.reader}; datasets {', '.join(inp.datasets)}; seeds {list(inp.seeds)}; "
        f"retained fractions {', '.join(f'{r:g}' for r in inp.ratios)} (main r = "
        f"{inp.main_ratio:g}); methods {', '.join(inp.methods)}.",
        "",
        *banner(inp, f),
    ]
    with_figure: list[tuple[Section, str | None]] = [
        (sections.main_results, None),
        (cell_intervals, None),
        (sections.single_average, "rank_changes"),
        (paper_ranking, None),
        (sections.p3_gap, "p3_gap"),
        (lambda i, _: extra.deletions(i), None),
        (sections.answer_kinds, None),
        (sections.retention_reading, "retention_accuracy"),
        (sections.slot_types, None),
        (sections.kv_methods, None),
        (sections.wider_budgets, None),
        (extra.semantic, None),
    ]
    retention: tuple[Section, str | None] = (lambda i, _: extra.reader_free_retention(i), None)
    order = [retention, *with_figure] if f.weak_reader(inp) else [*with_figure, retention]
    for section, figure in order:
        lines += section(inp, f)
        if figure is not None:
            lines += _figure(figure, figures[figure], root)
    lines += extra.provenance(inp)
    return "\n".join(lines).rstrip("\n") + "\n"


def write_report(
    inp: ReportInput, report: Path, figure_paths: Mapping[str, Path]
) -> tuple[Findings, dict[str, Path]]:
    """Compute, draw and write; returns the findings and the figure files."""
    findings = compute(inp)
    figures = draw(inp, findings, figure_paths)
    text = render(inp, findings, figures, report.parent)
    with atomic_writer(report) as fh:
        fh.write(text)
    return findings, figures
