"""The report names the decode mode its cells were answered in and refuses to mix modes."""

from __future__ import annotations

from typing import Any

import pytest

from compressbench.errors import InputError
from compressbench.readers.decode_modes import FAST
from compressbench.tpbench.report.decode_modes import decode_mode_label
from compressbench.tpbench.report.model import CellData


def cells(**decoding: dict[str, Any]) -> dict[Any, CellData]:
    return {
        ("sgd", method, 0.3): CellData(
            dataset="sgd",
            method=method,
            ratio=0.3,
            scores=[],
            contexts=[],
            stats={"decoding": {"do_sample": False, **value}},
        )
        for method, value in decoding.items()
    }


def test_paper_and_fast_are_named() -> None:
    assert decode_mode_label(cells(full_context={}, recency={})) == ", decode mode `paper`"
    fast = decode_mode_label(cells(full_context=FAST.decoding(), recency=FAST.decoding()))
    assert fast.startswith(", decode mode `fast` (batched static-cache")
    assert "compare these numbers only with another fast-mode run" in fast


def test_mixed_modes_are_refused_naming_the_cells() -> None:
    with pytest.raises(
        InputError,
        match=r"different decode modes .*\(fast: sgd/snapkv/0\.3; paper: sgd/full_context/0\.3\)",
    ):
        decode_mode_label(cells(full_context={}, snapkv=FAST.decoding()))
