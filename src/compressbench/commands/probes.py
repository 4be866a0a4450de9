"""``compressbench probes``: sample P1/P2/P3 probes from a corpus or a released probe file."""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

from compressbench.commands._args import (
    add_corpus_args,
    csv_of,
    output_file,
    positive_int,
    probe_type,
    ratio,
)
from compressbench.corpora.loaders import load_corpus
from compressbench.errors import InputError
from compressbench.jsonl import write_jsonl
from compressbench.tpbench.candidates import candidate_pool
from compressbench.tpbench.probes import DEFAULT_N, ProbeRecord, build_probes, cells
from compressbench.tpbench.released import read_released, released_probes

log = logging.getLogger(__name__)


def _override(text: str) -> tuple[str, list[float]]:
    """``p1=0.3`` or ``p2=0.1,0.3`` -> ("P1", [0.3])."""
    name, sep, values = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected PROBE=R1,R2, got {text!r}")
    return probe_type(name), csv_of(ratio)(values)


def _corpus_probes(args: argparse.Namespace) -> Iterator[ProbeRecord]:
    pool = candidate_pool(load_corpus(args.corpus, args.path, args.splits))
    log.info("candidate pool: %d change events", len(pool))
    grid = cells(args.probes, args.seeds, args.ratios, dict(args.ratio_override or []))
    return build_probes(pool, grid, args.n)


def _released(args: argparse.Namespace) -> Iterator[ProbeRecord]:
    probes = [
        p
        for p in released_probes(read_released(args.released)).values()
        if p.probe_type in args.probes
    ]
    if not probes:
        raise InputError(
            f"no full_context rows of probe types {', '.join(args.probes)}",
            file=args.released,
        )
    return iter(probes)


def run(args: argparse.Namespace) -> int:
    records = list(_released(args) if args.released else _corpus_probes(args))
    write_jsonl(args.output, (r.to_row() for r in records))
    counts = Counter((r.probe_type, r.seed, r.ratio) for r in records)
    for (pt, seed, r), n in sorted(counts.items()):
        print(f"{pt} seed={seed} ratio={r}: {n}")
    log.info("%d probe rows -> %s", len(records), args.output)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "probes",
        help="sample P1/P2/P3 probes",
        description=(
            "Every change event of the corpus is a candidate question; P1/P2 shuffle the pool "
            "with each seed and keep the first N (P2: the survivors of the final/alias/value "
            "filters), P3 samples N eligible late updates. One row per probe type x seed x "
            "ratio x question. With --released, the probes are read from TPBench's released "
            "rows instead (their full_context rows)."
        ),
    )
    source = p.add_mutually_exclusive_group(required=True)
    add_corpus_args(p, corpus_group=source)
    source.add_argument("--released", help="TPBench released probe JSONL instead of a corpus")
    p.add_argument(
        "--probes",
        type=csv_of(probe_type),
        default=["P1", "P2", "P3"],
        help="probe types (default p1,p2,p3)",
    )
    p.add_argument("--seeds", type=csv_of(int), default=[42, 43, 44], help="sample seeds")
    p.add_argument("--ratios", type=csv_of(ratio), default=[0.3], help="retained fractions")
    p.add_argument(
        "--ratio-override",
        type=_override,
        action="append",
        metavar="PROBE=R,..",
        help="ratios for one probe type (e.g. p3=0.3); repeatable",
    )
    p.add_argument(
        "--n", type=positive_int, default=DEFAULT_N, help=f"questions per cell ({DEFAULT_N})"
    )
    p.add_argument(
        "--output", required=True, type=output_file, help="probe JSONL (written atomically)"
    )
    p.set_defaults(func=run)
