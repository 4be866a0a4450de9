"""How the report names the reader's decode mode, and its refusal to mix modes in one table.

A cell's ``.stats.json`` records its reader's ``decoding()``; the hf reader's ``fast`` mode
(:mod:`compressbench.readers.decode_modes`) writes ``decode_mode`` there, every other reader and
mode nothing, which reads as ``paper``. Every table of a report holds cells of one mode.
"""

from __future__ import annotations

from collections.abc import Mapping

from compressbench.errors import InputError
from compressbench.readers.decode_modes import DEFAULT_DECODE_MODE, mode_of
from compressbench.tpbench.report.model import CellData, CellKey
from compressbench.tpbench.stages import paths

MODE_NOTES = {
    DEFAULT_DECODE_MODE: "",
    "fast": (
        " (batched static-cache greedy decoding, not the paper's: compare these numbers only"
        " with another fast-mode run)"
    ),
}


def cell_mode(cell: CellData) -> str:
    """The decode mode a cell's answers were produced in."""
    return mode_of(dict(cell.stats.get("decoding") or {}))


def decode_mode_label(cells: Mapping[CellKey, CellData]) -> str:
    """``", decode mode `<mode>`"`` plus what the mode means; InputError naming the cells of
    each mode when the cells were answered in more than one."""
    modes: dict[str, list[str]] = {}
    for c in cells.values():
        modes.setdefault(cell_mode(c), []).append(f"{c.dataset}/{c.method}/{c.ratio}")
    if len(modes) > 1:
        listed = "; ".join(f"{m}: {', '.join(sorted(names))}" for m, names in sorted(modes.items()))
        raise InputError(
            f"cells answered in different decode modes cannot share one report ({listed}); "
            "rerun them with one reader.decode_mode",
            file=paths.ANSWER_STATS,
            field="decoding.decode_mode",
        )
    mode = next(iter(modes), DEFAULT_DECODE_MODE)
    return f", decode mode `{mode}`" + MODE_NOTES.get(mode, "")
