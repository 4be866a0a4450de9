"""Every TPBench probe type, registered once (:class:`~.spec.ProbeType`).

Adding a probe type: a module beside these defining its :class:`~.spec.ProbeType`, its entry in
:data:`PROBE_TYPES` and, if the pipeline samples it, its name in
:mod:`compressbench.tpbench.probe_names`. Samplers, prompts, scorers, reports and ``rescore``
read it from here; the report's per-probe tables iterate :func:`pipeline_probe_types` when they
run, so a probe type registered later (a test's) shows in them too.
"""

from __future__ import annotations

from compressbench.tpbench.probe_names import PIPELINE_PROBES
from compressbench.tpbench.probe_types.lme import P2_LME
from compressbench.tpbench.probe_types.p1 import P1
from compressbench.tpbench.probe_types.p2 import P2
from compressbench.tpbench.probe_types.p3 import P3
from compressbench.tpbench.probe_types.spec import ProbeType

PROBE_TYPES: dict[str, ProbeType] = {p.name: p for p in (P1, P2, P3, P2_LME)}

if tuple(n for n, p in PROBE_TYPES.items() if p.in_pipeline) != PIPELINE_PROBES:
    raise ImportError("probe_names.PIPELINE_PROBES must list the registry's pipeline probe types")


def pipeline_probe_types() -> list[ProbeType]:
    """The registered probe types the pipeline samples, in registry (report) order."""
    return [p for p in PROBE_TYPES.values() if p.in_pipeline]


def find_probe_type(name: object) -> ProbeType | None:
    """The probe type called ``name`` (case ignored: ``p2`` is ``P2``), or None."""
    return PROBE_TYPES.get(name.upper()) if isinstance(name, str) else None


def get_probe_type(name: object, *, pipeline: bool = False) -> ProbeType:
    """The probe type called ``name``; KeyError naming the allowed names otherwise
    (``pipeline=True``: only the probe types the pipeline samples)."""
    found = find_probe_type(name)
    allowed = PIPELINE_PROBES if pipeline else tuple(PROBE_TYPES)
    if found is None or found.name not in allowed:
        raise KeyError(f"unknown probe type {name!r}; allowed: {', '.join(allowed)}")
    return found


def by_artifact_name(name: str) -> ProbeType | None:
    """The probe type the released artifact calls ``name`` (``P3`` -> P2, ``P1_LATE`` -> P3)."""
    return next((p for p in PROBE_TYPES.values() if p.artifact_name == name), None)
