"""FLOPs of a TPBench cell: the reader's decoder formula over the token counts its answer rows
already record (``tokens_in`` = P, the prompt after the chat template; ``tokens_out`` = G).

Each row costs ``a*T + b*A(T) + c*Z`` with ``T = P + G - 1``, ``Z = G``; the cell reports the
sum and the mean per prompt in TFLOPs. TPBench prompts share no ICL prefix, so nothing is
amortised. Under a KV press the reader still prefills the whole prompt; the shorter cache its
decoding attends to is not modelled (the count is the uncompressed one, and says so).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from compressbench.errors import InputError
from compressbench.flops.decoder import DecoderCost, decoder_cost
from compressbench.flops.fields import ConfigFields
from compressbench.readers.base import Reader

log = logging.getLogger(__name__)


def reader_config(reader: Reader) -> dict[str, Any] | None:
    """The Hugging Face config of an in-process reader's model (None for a remote API): its
    :meth:`~compressbench.readers.base.Reader.model_config`."""
    return reader.model_config()


def cell_flops(
    rows: Iterable[Mapping[str, Any]], cost: DecoderCost, source: str = "answers"
) -> dict[str, Any]:
    """Sum and mean FLOPs of one cell's answer rows (each needs ``tokens_in``, ``tokens_out``)."""
    total = counted = rows_seen = 0
    for i, row in enumerate(rows):
        rows_seen += 1
        try:
            p, g = int(row["tokens_in"]), int(row["tokens_out"])
        except (KeyError, TypeError, ValueError):
            raise InputError(
                "needs integer tokens_in and tokens_out",
                file=source,
                record=i + 1,
                field="tokens_in",
            ) from None
        if p > 0:
            counted += 1
            total += cost.case(p, g)
    return {
        **cost.to_dict(),
        "rows": rows_seen,
        "rows_counted": counted,  # rows with a prompt (failed requests record 0 tokens)
        "flops_total": total,
        "tflops_per_prompt": total / 1e12 / counted if counted else None,
        "note": "decoder formula, T = P + G - 1, Z = G; a KV press's shorter cache not modelled",
    }


def reader_cell_flops(reader: Reader, rows: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """:func:`cell_flops` with the reader's own config; None when the reader has no local config
    (an API model) or the config is not one the decoder formula counts."""
    raw = reader_config(reader)
    if raw is None:
        return None
    try:
        cost = decoder_cost(ConfigFields(raw, source=f"{reader.model_id} config"))
    except InputError as exc:
        log.warning("no FLOPs for this cell: %s", exc)
        return None
    return cell_flops(rows, cost)
