"""Run logs: what one run of a stage observed, kept out of DVC's graph.

A stage that asks a model writes a ``.stats.json`` beside its outputs. Part of it is a fact of
the result (the reader's model id and revision, its decoding and batch, the KV press records,
the counts and FLOPs), the same bytes whenever the result is the same; part of it is an
observation of this run (seconds, tokens/s, when the batch ran, the process id and its model
loads, cache hits, hashing seconds), different on every run although every answer is
byte-identical. DVC hashes every declared output, and a stage below hashes every output it
depends on: an observation among them changes ``dvc.lock`` on every cold ``dvc repro``, and
its hash reruns the stages below.

So a stage splits what it records (:func:`write_stats`): the facts stay in the declared
``.stats.json``; the observations go to the run log beside it under ``logs/``
(:func:`log_file`: ``data/answers/<ds>/<method>/<r>.stats.json`` ->
``logs/answers/<ds>/<method>/<r>.json``), which is neither a DVC output nor a dependency,
git-ignored and DVC-ignored. Only tracking code reads a run log (:func:`read_observations`), to
log its values to MLflow as metrics and tags. It is the one exception to "every stage declares
every file it reads": nothing any stage computes depends on it, so a missing log (outputs
pulled from a DVC remote, a stage DVC skipped) or a stale one only leaves an MLflow run
without timings. A log records the sha256 of the outputs it describes, and
:func:`read_observations` returns nothing once they changed (a log from another run).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from compressbench.jsonl import write_json

LOGS = Path("logs")  # the run logs' root (relative to the repo root, like data/)
STATS_SUFFIX = ".stats.json"


def log_file(stats_file: str | Path) -> Path:
    """The run log of a ``.stats.json`` output: under ``logs/`` instead of ``data/``, named
    ``<name>.json`` (``data/keepbench/compressed/first_n/1.0.stats.json`` ->
    ``logs/keepbench/compressed/first_n/1.0.json``)."""
    path = Path(stats_file)
    if not path.name.endswith(STATS_SUFFIX):
        raise ValueError(f"{path}: a stats file's name ends in {STATS_SUFFIX}")
    parts = path.parts[1:] if path.parts and path.parts[0] == "data" else path.parts
    name = path.name[: -len(STATS_SUFFIX)] + ".json"
    return LOGS.joinpath(*parts[:-1], name)


def split(
    stats: Mapping[str, Any], facts: Collection[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``stats`` as (its keys named in ``facts``, every other key): the deterministic part and
    the run's observations. A key nobody named is an observation, so a new counter never
    reaches a DVC output unless it is declared a fact."""
    kept = {k: v for k, v in stats.items() if k in facts}
    observed = {k: v for k, v in stats.items() if k not in facts}
    return kept, observed


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_stats(
    stats_file: str | Path,
    stats: Mapping[str, Any],
    facts: Collection[str],
    describes: Sequence[str | Path] = (),
) -> None:
    """Write the ``facts`` of ``stats`` to ``stats_file`` (a declared output) and the rest to
    its run log (:func:`log_file`), with the sha256 of ``stats_file`` and of each already
    written output in ``describes`` (checked by :func:`read_observations`)."""
    kept, observed = split(stats, facts)
    write_json(stats_file, kept, default=str)
    files = [Path(stats_file), *map(Path, describes)]
    write_json(
        log_file(stats_file),
        {"describes": {str(f): _sha256(f) for f in files}, "observed": observed},
        default=str,
    )


def read_observations(stats_file: str | Path, root: str | Path = ".") -> dict[str, Any]:
    """The observations the run that wrote ``stats_file`` (relative to the project ``root``)
    logged; ``{}`` when there is no log, it cannot be read, or a file it describes is missing
    or no longer has the bytes it had."""
    base = Path(root)
    try:
        log = json.loads((base / log_file(stats_file)).read_text(encoding="utf-8"))
        described = {base / f: h for f, h in dict(log["describes"]).items()}
        if any(not f.is_file() or _sha256(f) != h for f, h in described.items()):
            return {}
        return dict(log["observed"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def with_observations(
    stats_file: str | Path, stats: Mapping[str, Any], root: str | Path = "."
) -> dict[str, Any]:
    """The facts read from ``stats_file`` (``stats``) with its run's observations beside them:
    the whole record a tracking stage logs (observations absent when there is no log)."""
    return {**stats, **read_observations(stats_file, root)}
