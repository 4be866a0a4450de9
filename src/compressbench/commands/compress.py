"""``compressbench compress``: every dialogue of a corpus compressed by one method, one row each.

Rows: ``dataset``, ``split``, ``dialogue_id``, ``method``, ``ratio``, ``budget_unit``,
``compressed_text`` (the context the reader would get), ``full_tokens`` (reader tokens of the
full dialogue rendered with ``[Tn] SPEAKER:`` markers) and ``kept_tokens`` (reader tokens of
``compressed_text``). Turn selectors run under the budget unit asked for (reader tokens by
default, so every method is compared on one budget); a span method budgets in reader tokens
itself; a KV press leaves the text whole (its budget is cache entries, applied by the reader).
"""

from __future__ import annotations

import argparse
import itertools
import logging
from collections.abc import Iterator
from typing import Any

from tqdm import tqdm

from compressbench.commands._args import (
    add_corpus_args,
    method_name,
    output_file,
    positive_int,
    ratio,
)

log = logging.getLogger(__name__)


def compress_rows(
    dialogues: Any, method: str, r: float, params: dict[str, Any], unit: str, tokenizer: Any
) -> Iterator[dict[str, Any]]:
    """One row per dialogue (see the module docstring)."""
    from compressbench.compress.method import Source
    from compressbench.compress.reader_tokens import full_dialogue_tokens, reader_counter
    from compressbench.compress.registry import get_method
    from compressbench.compress.token_budget import with_budget_unit

    m = with_budget_unit(get_method(method, params), unit, tokenizer)
    count = reader_counter(tokenizer)
    for d in dialogues:
        source = Source(d.turns, key=f"{d.dataset}:{d.dialogue_id}", tokenizer=None)
        comp = m.compress(source, r)
        yield {
            "dataset": d.dataset,
            "split": d.split,
            "dialogue_id": d.dialogue_id,
            "method": method,
            "ratio": r,
            "budget_unit": comp.budget_unit,
            "compressed_text": comp.text,
            "full_tokens": full_dialogue_tokens(d.turns, count),
            "kept_tokens": count(comp.text),
        }


def run(args: argparse.Namespace) -> int:
    from compressbench.config import load_params
    from compressbench.corpora.loaders import load_corpus
    from compressbench.jsonl import write_jsonl

    params = load_params(args.params).method_params.get(args.method, {}) if args.params else {}
    dialogues = itertools.islice(
        load_corpus(args.corpus, args.path, args.splits), args.max_dialogues
    )
    rows = compress_rows(
        tqdm(dialogues, desc=f"compress {args.method}", unit="dlg", disable=None),
        args.method,
        args.ratio,
        params,
        args.budget_unit,
        args.tokenizer,
    )
    n = write_jsonl(args.output, rows)  # atomic: nothing is left behind on an error
    log.info("%d dialogues -> %s", n, args.output)
    print(f"{n} dialogues compressed by {args.method} at r = {args.ratio} -> {args.output}")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compress",
        help="compress every dialogue of a corpus with one method (one JSONL row each)",
        description=(
            "Compress every dialogue with any registered method at retained fraction r and "
            "write its context, budget unit and reader-token counts, one row per dialogue."
        ),
    )
    add_corpus_args(p)
    p.add_argument("--method", type=method_name, required=True, help="a registered method")
    p.add_argument("--ratio", type=ratio, required=True, help="retained fraction r in (0, 1]")
    p.add_argument("--output", type=output_file, required=True, help="JSONL, one row a dialogue")
    p.add_argument(
        "--budget-unit",
        choices=("reader_tokens", "dialogue_turns"),
        default="reader_tokens",
        help="budget of turn selectors (default reader_tokens: at most r x the reader tokens "
        "of the rendered full dialogue; dialogue_turns: each selector's published turn rule)",
    )
    p.add_argument(
        "--tokenizer",
        help="tokenizer.json (or a folder with one) counting reader tokens "
        "(default: the offline SmolLM2 reader's)",
    )
    p.add_argument("--params", help="a project's params.yaml: the method's method_params")
    p.add_argument("--max-dialogues", type=positive_int, help="only the first N dialogues")
    p.set_defaults(func=run)
