"""The paper's Table 3 (KEEP-Bench, arXiv 2610.26827) as data, for the report's comparison rows
and figure. Per row: each subset's columns (``Subset.table_columns``: Rate, [Para-Rec |
Cond-Rec,] All-Rec) and EPR, plus the overall All-Rec (case-weighted over the subsets'
published cases) and the TFLOPs per case back-computed as 36*A/EPR**2 (Table 9 is not in
the available text; research notes §5).
"""

from __future__ import annotations

from dataclasses import dataclass

from compressbench.keepbench.subsets import SUBSETS


@dataclass(frozen=True)
class PaperRow:
    method: str
    group: str  # dedicated | open | proprietary
    subsets: dict[str, tuple[float, ...]]  # subset -> its Table 3 columns, in order
    epr: float | None
    overall: float
    tflops: float | None


def _r(
    method: str, group: str, v: tuple[float, ...], epr: float | None, a: float, f: float | None
) -> PaperRow:
    """A row from the subsets' columns in Table 3 order (``v``), EPR, A and TFLOPs."""
    by_subset, start = {}, 0
    for s in SUBSETS:
        width = len(s.table_columns)
        by_subset[s.name] = v[start : start + width]
        start += width
    if start != len(v):
        raise ValueError(f"{method}: {len(v)} subset values, Table 3 has {start}")
    return PaperRow(method, group, by_subset, epr, a, f)


PAPER_TABLE3: tuple[PaperRow, ...] = (
    _r(
        "RECOMP (abstractive)*",
        "dedicated",
        (32.4, 0.0, 0.0, 30.2, 5.6, 1.4, 21.7, 0.2, 19.4, 0.0),
        1.727,
        0.51,
        6.21,
    ),
    _r(
        "BRIEF-Pro",
        "dedicated",
        (13.8, 0.3, 0.0, 12.6, 61.6, 19.9, 9.8, 0.4, 12.6, 0.0),
        3.320,
        6.72,
        21.93,
    ),
    _r(
        "RECOMP (extractive)",
        "dedicated",
        (12.8, 12.9, 1.4, 12.3, 19.4, 2.5, 11.0, 11.4, 12.5, 4.0),
        10.716,
        4.75,
        1.49,
    ),
    _r(
        "EXIT",
        "dedicated",
        (12.9, 41.9, 3.0, 12.7, 25.1, 4.5, 9.8, 10.5, 11.3, 7.6),
        1.941,
        6.27,
        59.95,
    ),
    _r(
        "Llama-3.2-1B-Instruct",
        "open",
        (16.4, 2.4, 0.0, 21.2, 13.8, 0.1, 16.2, 0.2, 14.9, 1.1),
        0.893,
        0.30,
        13.75,
    ),
    _r(
        "Llama-3.2-3B-Instruct",
        "open",
        (13.9, 10.4, 2.8, 20.5, 28.4, 6.7, 32.2, 1.5, 14.5, 8.6),
        2.180,
        4.95,
        37.48,
    ),
    _r(
        "Llama-3.1-8B-Instruct",
        "open",
        (13.3, 34.1, 13.0, 20.9, 51.6, 23.5, 19.2, 4.1, 15.1, 34.5),
        2.981,
        18.64,
        75.51,
    ),
    _r(
        "Qwen3-4B",
        "open",
        (13.2, 22.9, 14.4, 18.7, 40.4, 26.6, 17.5, 14.4, 15.9, 21.0),
        3.445,
        19.79,
        60.03,
    ),
    _r(
        "Qwen3-8B",
        "open",
        (18.7, 32.9, 23.8, 23.1, 44.9, 29.3, 21.8, 15.2, 17.2, 29.8),
        3.291,
        24.72,
        82.17,
    ),
    _r(
        "Qwen3-14B",
        "open",
        (14.8, 49.2, 33.0, 21.4, 56.5, 43.1, 18.6, 23.2, 16.6, 32.4),
        2.955,
        33.82,
        139.45,
    ),
    _r(
        "Qwen3-32B",
        "open",
        (15.2, 58.9, 42.1, 22.2, 58.6, 44.6, 17.6, 31.3, 14.8, 40.5),
        2.060,
        39.95,
        338.90,
    ),
    _r(
        "Gemma-4-E2B-it",
        "open",
        (23.4, 6.6, 2.3, 30.7, 31.7, 8.3, 29.2, 5.9, 22.0, 4.1),
        3.219,
        5.54,
        19.26,
    ),
    _r(
        "Gemma-4-E4B-it",
        "open",
        (17.8, 38.4, 24.6, 24.2, 40.4, 27.9, 23.2, 22.1, 17.0, 24.4),
        5.163,
        25.04,
        33.82,
    ),
    _r(
        "Gemma-4-12B-it",
        "open",
        (19.9, 57.9, 43.9, 26.4, 65.8, 54.5, 19.7, 63.2, 17.2, 52.1),
        4.623,
        53.83,
        90.68,
    ),
    _r(
        "Gemma-4-31B-it",
        "open",
        (21.5, 71.2, 57.6, 27.0, 85.2, 71.2, 20.7, 69.9, 17.7, 65.8),
        3.168,
        66.81,
        239.63,
    ),
    _r(
        "GPT-5.4-mini",
        "proprietary",
        (17.2, 43.7, 31.9, 24.9, 50.1, 37.0, 23.0, 60.3, 16.0, 22.6),
        None,
        38.71,
        None,
    ),
    _r(
        "Claude-Haiku-4.5",
        "proprietary",
        (12.4, 76.1, 63.8, 20.8, 83.5, 70.0, 29.9, 45.5, 15.9, 65.0),
        None,
        61.60,
        None,
    ),
)
