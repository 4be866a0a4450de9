"""Orphaned runs: runs left RUNNING by a process that died (SIGKILL, preemption, power loss).

Every run the project opens records its owner (:mod:`.owner`). :func:`reap_orphans` marks a
RUNNING run KILLED when its owner is provably gone: same host, boot and pid namespace as the
caller, and that pid no longer runs (or now names another process). Runs owned elsewhere (another
machine or container) are left alone unless the caller names their host (``hosts``: "that
machine is gone") or sets an age (``older_than_s``: "nothing of ours runs that long"); a run
whose owner provably still runs is never touched. The RUNNING child runs of a reaped run are
reaped with it. A reaped run gets an end time (its last sign of life: the latest start or end of
it and its children), tag ``compressbench.reaped`` (why, when, by whom) and, when a new run
reaps it, tag ``compressbench.replaced_by`` (that run's id). One log line per reaped run.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from compressbench.tracking.owner import Owner, this_process
from compressbench.tracking.store import PARENT_TAG

__all__ = ["REAPED_TAG", "REPLACED_BY_TAG", "Reaped", "reap_orphans"]

REPLACED_BY_TAG = "compressbench.replaced_by"
REAPED_TAG = "compressbench.reaped"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reaped:
    """A run marked KILLED: its id, name, why, and the end time given (epoch ms)."""

    run_id: str
    run_name: str
    reason: str
    end_time: int


def _search(client: Any, experiment_id: str, filter_string: str) -> list[Any]:
    runs: list[Any] = []
    token: str | None = None
    while True:
        page = client.search_runs(
            [experiment_id], filter_string=filter_string, max_results=1000, page_token=token
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _reason(
    run: Any, here: Owner, hosts: Collection[str], older_than_s: float | None, now_ms: int
) -> str | None:
    """Why ``run`` is an orphan, or None to leave it alone."""
    owner = Owner.from_tags(dict(run.data.tags))
    gone = owner.is_gone(here) if owner is not None else None
    if gone is False:
        return None
    if gone and owner is not None:
        return f"its owner, {owner.label} (start {owner.start}), no longer runs"
    if owner is not None and owner.host in hosts:
        return f"its owner, {owner.label}, runs on a host declared gone"
    started = run.info.start_time or now_ms
    if older_than_s is not None and now_ms - started > older_than_s * 1000:
        who = owner.label if owner is not None else "an unrecorded owner"
        return f"it has been RUNNING for over {older_than_s / 3600:g} h ({who})"
    return None


def _last_sign_of_life(run: Any, children: list[Any]) -> int:
    times = [run.info.start_time or 0]
    for child in children:
        times += [child.info.start_time or 0, child.info.end_time or 0]
    return max(times)


def reap_orphans(
    client: Any,
    experiment_id: str,
    *,
    replaced_by: str | None = None,
    hosts: Collection[str] = (),
    older_than_s: float | None = None,
    dry_run: bool = False,
) -> list[Reaped]:
    """Mark the orphaned RUNNING runs of an experiment KILLED (see the module doc).

    ``replaced_by``: the id of the run that starts now (never reaped itself; named in tag
    ``compressbench.replaced_by``). ``dry_run``: find them, change nothing.
    """
    here = this_process()
    now_ms = int(datetime.datetime.now(datetime.UTC).timestamp() * 1000)
    running = [
        r
        for r in _search(client, experiment_id, "attributes.status = 'RUNNING'")
        if r.info.run_id != replaced_by
    ]
    found: dict[str, tuple[Any, str]] = {}
    for run in running:
        reason = _reason(run, here, hosts, older_than_s, now_ms)
        if reason is not None:
            found[run.info.run_id] = (run, reason)
    alive = {r.info.run_id for r in running} - set(found)
    children: dict[str, list[Any]] = {}
    for run_id in list(found):
        kids = _search(client, experiment_id, f"tags.`{PARENT_TAG}` = '{run_id}'")
        children[run_id] = kids
        for kid in kids:
            new = kid.info.run_id not in found and kid.info.run_id != replaced_by
            if kid.info.status == "RUNNING" and new:
                found[kid.info.run_id] = (kid, f"its pipeline run {run_id} was reaped")
                alive.discard(kid.info.run_id)
    if alive:
        logger.info(
            "%d RUNNING run(s) in experiment %s left alone (owner alive, elsewhere or unknown; "
            "`compressbench runs reap --host/--older-than` marks gone ones KILLED): %s",
            len(alive),
            experiment_id,
            ", ".join(sorted(alive)),
        )
    stamp = datetime.datetime.fromtimestamp(now_ms / 1000, datetime.UTC).isoformat(
        timespec="seconds"
    )
    by = f"run {replaced_by}" if replaced_by else "compressbench runs reap"
    reaped = []
    for run_id, (run, reason) in found.items():
        end = _last_sign_of_life(run, children.get(run_id, []))
        item = Reaped(run_id, run.info.run_name or "", reason, end)
        reaped.append(item)
        if not dry_run:
            tags = {REAPED_TAG: f"marked KILLED at {stamp} by {by}: {reason}"}
            if replaced_by:
                tags[REPLACED_BY_TAG] = replaced_by
            for key, value in tags.items():
                client.set_tag(run_id, key, value)
            client.set_terminated(run_id, "KILLED", end_time=end)
        replaced = f"; replaced by run {replaced_by}" if replaced_by else ""
        logger.warning(
            "%s run %s (%r) KILLED: %s%s",
            "would mark" if dry_run else "marked",
            run_id,
            item.run_name,
            reason,
            replaced,
        )
    return reaped
