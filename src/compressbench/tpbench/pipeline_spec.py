"""TPBench's blocks of ``params.yaml``: which probe types it asks, how it scores them, and its
retention and deletion experiments.

::

    probes: [P1, P2, P3]        # case ignored (p2 -> P2)
    scoring: {abstain: published}            # published | json_literal
    retention: {ratios: [0.1, 0.3, 0.5, 0.7], methods: null}
    deletions: {enabled: true, seed: null, max_new_tokens: 128, max_probes: null}

``config.py`` validates the blocks both benchmarks share (corpora, datasets, reader, methods,
tracking) and calls these for TPBench's, as it calls :mod:`compressbench.keepbench.pipeline_spec`
for KEEP-Bench's. Part of every stage's code (``config.py`` reads it): it imports no registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compressbench.params_check import Checker, spec_keys
from compressbench.tpbench.probe_names import PIPELINE_PROBES, canonical_probe

ABSTAIN_RULES = ("published", "json_literal")


@dataclass(frozen=True)
class ScoringSpec:
    abstain: str = "published"  # "published" (P2: bool() of the field) | "json_literal"


@dataclass(frozen=True)
class RetentionSpec:
    ratios: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7)
    methods: tuple[str, ...] | None = None  # None: the pipeline's `methods`


@dataclass(frozen=True)
class DeletionsSpec:
    enabled: bool = True
    seed: int | None = None  # None: the first of `seeds`
    max_new_tokens: int = 128  # the paper's deletion reader setting
    max_probes: int | None = None  # None: every full-context P2 probe of the seed

    def sample_seed(self, seeds: Sequence[int]) -> int:
        """The P2 sample the experiment uses: ``seed``, or the first of ``seeds`` when null."""
        return seeds[0] if self.seed is None else self.seed


def probe_name(c: Checker, value: Any, fieldname: str) -> str:
    """A pipeline probe type's name, case ignored (``p1`` -> ``P1``)."""
    found = canonical_probe(value)
    if found is None:
        allowed = ", ".join(PIPELINE_PROBES)
        raise c.fail(fieldname, f"must be one of {allowed} (case ignored); got {value!r}")
    return found


def parse_probes(c: Checker, raw: Any) -> tuple[str, ...]:
    """``probes`` (default: every pipeline probe type), each in its canonical case."""
    items = c.items(list(PIPELINE_PROBES) if raw is None else raw, str, "probes")
    return tuple(probe_name(c, p, f"probes[{i}]") for i, p in enumerate(items))


def parse_scoring(c: Checker, raw: Any) -> ScoringSpec:
    raw = c.mapping(raw, spec_keys(ScoringSpec), "scoring")
    abstain = raw.get("abstain", ScoringSpec.abstain)
    return ScoringSpec(abstain=c.choice(abstain, ABSTAIN_RULES, "scoring.abstain"))


def parse_retention(c: Checker, raw: Any) -> RetentionSpec:
    raw = c.mapping(raw, spec_keys(RetentionSpec), "retention")
    methods = raw.get("methods")
    return RetentionSpec(
        ratios=c.ratios(raw.get("ratios", list(RetentionSpec.ratios)), "retention.ratios"),
        methods=None if methods is None else c.items(methods, str, "retention.methods"),
    )


def parse_deletions(c: Checker, raw: Any, seeds: tuple[int, ...]) -> DeletionsSpec:
    raw = c.mapping(raw, spec_keys(DeletionsSpec), "deletions")
    seed = raw.get("seed")
    if seed is not None and c.typed(seed, int, "deletions.seed") not in seeds:
        raise c.fail("deletions.seed", f"must be one of seeds ({', '.join(map(str, seeds))})")
    return DeletionsSpec(
        enabled=c.typed(raw.get("enabled", True), bool, "deletions.enabled"),
        seed=seed,
        max_new_tokens=c.positive(raw.get("max_new_tokens", 128), "deletions.max_new_tokens"),
        max_probes=c.optional_positive(raw.get("max_probes"), "deletions.max_probes"),
    )
