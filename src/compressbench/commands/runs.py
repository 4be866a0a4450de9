"""``compressbench runs reap``: mark orphaned MLflow runs KILLED by hand.

Every pipeline run already reaps, when it opens, the runs whose owner process on the same machine
is gone. This command does it without opening a run, and reaches runs owned elsewhere by an
explicit rule: ``--host NAME`` (that machine or container is gone, e.g. a preempted GPU box) and
``--older-than HOURS`` (nothing runs that long; a run whose owner provably runs is never
touched). ``--dry-run`` lists them and changes nothing.
"""

from __future__ import annotations

import argparse
from typing import Any

from compressbench.errors import InputError
from compressbench.tracking.orphans import reap_orphans
from compressbench.tracking.store import (
    DEFAULT_EXPERIMENT,
    experiment_id,
    open_client,
    resolve_tracking_uri,
)


def run(args: argparse.Namespace) -> int:
    if args.older_than is not None and args.older_than <= 0:
        raise InputError("must be positive", field="--older-than")
    uri = resolve_tracking_uri(args.tracking_uri)
    client = open_client(uri)
    if client.get_experiment_by_name(args.experiment) is None:
        raise InputError(f"no experiment {args.experiment!r} in {uri}", field="--experiment")
    exp_id = experiment_id(client, uri, args.experiment)
    reaped = reap_orphans(
        client,
        exp_id,
        hosts=tuple(args.host),
        older_than_s=None if args.older_than is None else args.older_than * 3600,
        dry_run=args.dry_run,
    )
    verb = "would mark" if args.dry_run else "marked"
    print(f"{verb} {len(reaped)} run(s) KILLED in experiment {args.experiment!r} ({uri})")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("runs", help="maintain the MLflow runs (reap orphaned RUNNING runs)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    reap = actions.add_parser("reap", help="mark RUNNING runs whose owner is gone KILLED")
    reap.add_argument(
        "--tracking-uri",
        help="MLflow store (default $MLFLOW_TRACKING_URI, else the repository's mlflow.db)",
    )
    reap.add_argument("--experiment", default=DEFAULT_EXPERIMENT, help="experiment name")
    reap.add_argument(
        "--host",
        action="append",
        default=[],
        help="a host whose runs' owners are gone (repeatable)",
    )
    reap.add_argument(
        "--older-than",
        type=float,
        metavar="HOURS",
        help="also reap runs RUNNING for longer than this",
    )
    reap.add_argument("--dry-run", action="store_true", help="list, change nothing")
    reap.set_defaults(func=run)
