"""``compressbench retention``: reader-free answer retention per (dataset, method, ratio)."""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

from tqdm import tqdm

from compressbench.commands._args import (
    add_corpus_args,
    csv_of,
    method_name,
    output_file,
    positive_int,
    ratio,
)
from compressbench.compress.budgets import READER_TOKENS
from compressbench.compress.method import TURN_BUDGET_UNIT
from compressbench.config import load_params
from compressbench.corpora.loaders import load_corpus
from compressbench.jsonl import write_jsonl
from compressbench.tpbench.retention import retention_rows
from compressbench.tpbench.retention_log import RetentionLog
from compressbench.tpbench.slot_types import SLOT_TYPES

DEFAULT_RATIOS = [0.1, 0.3, 0.5, 0.7]
BUDGET_UNITS = (TURN_BUDGET_UNIT, READER_TOKENS)


def format_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: one line per row (rates to 3 decimals, '–' where undefined)."""

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    lines = [
        "| dataset | method | budget | r | n (P2) | P2 value | n (P3) | P3 goal | P3 joint"
        " | stale kept, revision kept (n) | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        stale = r.get("stale_revision_kept")
        lines.append(
            f"| {r['dataset']} | {r['method']} | {r.get('budget_unit', '–')} | {r['ratio']}"
            f" | {r['n']} | {f(r['p2_retention'])} | {r['n_p3']} | {f(r['p3_goal_retention'])}"
            f" | {f(r['p3_joint_retention'])} | {f(stale)} ({r.get('n_stale', 0)})"
            f" | {r['seconds']:.1f} |"
        )
    return "\n".join(lines)


def format_slot_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of P2 value retention per slot type (paper Table 7 groups), ``rate (n)``."""
    groups = [g for g, _ in SLOT_TYPES] + ["other"]
    lines = [
        "| dataset | method | r | " + " | ".join(groups) + " |",
        "|---|---|---|" + "---|" * len(groups),
    ]
    for r in rows:
        cells = []
        for g in groups:
            cell = r["by_slot_type"].get(g)
            empty = not cell or cell["p2_retention"] is None
            cells.append("–" if empty else f"{cell['p2_retention']:.3f} ({cell['n']})")
        lines.append(
            f"| {r['dataset']} | {r['method']} | {r['ratio']} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def default_log_path(output: str) -> Path:
    """``OUT.jsonl`` -> ``OUT.events.jsonl`` beside it."""
    out = Path(output)
    return out.with_name(out.name.removesuffix(".jsonl") + ".events.jsonl")


def run(args: argparse.Namespace) -> int:
    # The KV side (presses, readers) loads only when the command runs, not to build the CLI.
    from compressbench.readers.registry import get_reader
    from compressbench.tpbench.retention_reader import LazyReader
    from compressbench.tpbench.stages.retention import prefill_identity, retention_setup

    dialogues = itertools.islice(
        load_corpus(args.corpus, args.path, args.splits), args.max_dialogues
    )
    if args.params:
        setup = retention_setup(load_params(args.params), share_prefix=args.share_prefix)
    else:
        reader = LazyReader(lambda: get_reader("hf"), share_prefix=args.share_prefix)
        identity = {"reader": "hf-default", **prefill_identity(args.share_prefix)}
        setup = {"reader": reader, "reader_identity": identity}
    log = None if args.no_log else RetentionLog(args.log or default_log_path(args.output))
    rows = retention_rows(
        dialogues,
        args.methods,
        args.ratios,
        **setup,
        log=log,
        progress=lambda it: tqdm(it, desc="retention", unit="dlg", disable=None),
        budget_unit=args.budget_unit,
        tokenizer=args.tokenizer,
    )
    write_jsonl(args.output, rows)
    print(format_table(rows))
    print("\nP2 value kept by slot type, rate (n):\n" + format_slot_table(rows))
    if args.verbose:
        print(json.dumps(rows, indent=2))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "retention",
        help="reader-free answer retention of compressors (paper §6.1.3)",
        description=(
            "For every P2-eligible change event, does the current value survive compression "
            "(phrase-bounded); for every P3-eligible one, do the initial goal and both survive?"
        ),
    )
    add_corpus_args(p)
    p.add_argument("--ratios", type=csv_of(ratio), default=DEFAULT_RATIOS)
    p.add_argument(
        "--methods",
        type=csv_of(method_name),
        required=True,
        help="turn selectors or KV press presets (presets run the default SmolLM2 reader, "
        "or the reader of --params)",
    )
    p.add_argument(
        "--params",
        help="a project's params.yaml: its method_params (e.g. a local llmlingua2 model or another "
        "encoder) and, for KV presses, its reader (default: built-in parameters, HF SmolLM2)",
    )
    p.add_argument(
        "--output",
        required=True,
        type=output_file,
        help="JSONL, one row per (dataset, method, ratio)",
    )
    p.add_argument(
        "--max-dialogues",
        type=positive_int,
        default=None,
        help="only the first N dialogues (corpus order)",
    )
    p.add_argument(
        "--log",
        type=output_file,
        help="per-dialogue outcome log: a rerun or a resumed run reuses what it holds "
        "(default: OUT.events.jsonl beside --output)",
    )
    p.add_argument("--no-log", action="store_true", help="measure everything, keep no log")
    p.add_argument(
        "--share-prefix",
        action="store_true",
        help="KV presses: cut a context-only press's prefix from the full prompt's forward "
        "(one forward per event, not two; float rounding may flip a near-tie, see "
        "compressbench.compress.kv.shared)",
    )
    p.add_argument(
        "--budget-unit",
        choices=BUDGET_UNITS,
        default=TURN_BUDGET_UNIT,
        help="dialogue_turns: each selector's published turn rule; reader_tokens: every turn "
        "selector keeps at most r x the reader tokens of the rendered full dialogue",
    )
    p.add_argument(
        "--tokenizer",
        help="tokenizer.json (or a folder with one) counting reader tokens "
        "(default: the offline SmolLM2 reader's)",
    )
    p.set_defaults(func=run)
