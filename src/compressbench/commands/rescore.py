"""``compressbench rescore``: re-score extracted answers with the TPBench scorers (spec §2)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from compressbench.commands._args import output_file, probe_type_of
from compressbench.tpbench.probe_types import PROBE_TYPES
from compressbench.tpbench.scoring.rescore import rescore_file

log = logging.getLogger(__name__)


def run(args: argparse.Namespace) -> int:
    n = rescore_file(args.probe, args.input, args.output)
    log.info("rescored %d %s rows -> %s", n, args.probe, args.output)
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rescore",
        help="re-score extracted answers (no generation)",
        description=(
            "Re-score rows carrying dataset, prediction, optional abstain/error and the "
            "reference (p3: reference_goal, reference_value); writes each row plus 'scores'."
        ),
    )
    p.add_argument(
        "--probe",
        required=True,
        type=probe_type_of(pipeline=False),
        metavar="{" + ",".join(PROBE_TYPES) + "}",
        help="probe type (case ignored)",
    )
    p.add_argument("--input", required=True, help="input JSONL (.gz ok)")
    p.add_argument(
        "--output", required=True, type=output_file, help="output JSONL (written atomically)"
    )
    p.set_defaults(func=run)
