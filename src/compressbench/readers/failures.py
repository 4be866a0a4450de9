"""A stage cell whose model calls raised fails loudly instead of writing error rows.

A generation that raised is kept as a row with ``error = "exception:<Type>:<message>"``
(:func:`compressbench.readers.postprocess.from_exception`) and is never cached. One such row is
a transient fault; a cell where most rows are such rows is a broken setup (an incompatible
transformers under a KV press, a server that is not there), and writing it would score every
failed call as a wrong answer. :func:`check_model_calls` therefore raises
:class:`~compressbench.errors.ModelCallsFailed` when more than :data:`MAX_FAILED_FRACTION` of a
cell's calls raised (always when all of them did), with one line naming the cell, the count and
the most common error; below that it logs a warning with the same figures. The stages call it
before writing anything, so a failed cell leaves no output and a rerun asks the failed calls
again (the answer cache never stored them).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable

from compressbench.errors import ModelCallsFailed

log = logging.getLogger(__name__)

MAX_FAILED_FRACTION = 0.1
"""A cell fails when more than this fraction of its model calls raised (the one default)."""

EXCEPTION_PREFIX = "exception:"
_MAX_CAUSE_CHARS = 300  # the cause is one line; a long exception text is cut


def failed_calls(errors: Iterable[str | None]) -> list[str]:
    """The errors of the calls that raised (``exception:...``), each on one line."""
    return [" ".join(e.split()) for e in errors if e is not None and e.startswith(EXCEPTION_PREFIX)]


def failure_summary(cell: str, errors: Iterable[str | None], noun: str = "answers") -> str | None:
    """``"<cell>: 12 of 12 answers failed: exception:KeyError:'cache_position'"``, or None when
    no call raised. With several distinct errors the most common is named with its count."""
    errors = list(errors)
    failed = failed_calls(errors)
    if not failed:
        return None
    counts = Counter(failed)
    cause, n = counts.most_common(1)[0]
    if len(cause) > _MAX_CAUSE_CHARS:
        cause = cause[: _MAX_CAUSE_CHARS - 3] + "..."
    where = "" if len(counts) == 1 else f" (most common, {n} of them; {len(counts)} distinct)"
    return f"{cell}: {len(failed)} of {len(errors)} {noun} failed: {cause}{where}"


def check_model_calls(
    cell: str,
    errors: Iterable[str | None],
    *,
    noun: str = "answers",
    max_fraction: float = MAX_FAILED_FRACTION,
) -> None:
    """Raise :class:`ModelCallsFailed` when more than ``max_fraction`` of the calls (one error
    or None per call) raised; warn when some did. ``cell`` names the cell in the message."""
    errors = list(errors)
    summary = failure_summary(cell, errors, noun)
    if summary is None:
        return
    n_failed = len(failed_calls(errors))
    if n_failed == len(errors) or n_failed > max_fraction * len(errors):
        raise ModelCallsFailed(f"{summary}; nothing written (more than {max_fraction:.0%} failed)")
    log.warning("%s; kept as error rows (at most %.0f%% may fail)", summary, 100 * max_fraction)
