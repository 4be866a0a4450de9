"""The names of the probe types the pipeline samples, for code that must not import the
registry's samplers and scorers (``config.py``, code of every stage). The registry
(:mod:`compressbench.tpbench.probe_types`) checks at import that it holds exactly these."""

from __future__ import annotations

PIPELINE_PROBES: tuple[str, ...] = ("P1", "P2", "P3")
"""The probe types the pipeline samples and asks, in report order."""


def canonical_probe(name: object) -> str | None:
    """``name`` as a pipeline probe type's name, case ignored (``p2`` -> ``P2``), or None."""
    if not isinstance(name, str):
        return None
    upper = name.upper()
    return upper if upper in PIPELINE_PROBES else None
