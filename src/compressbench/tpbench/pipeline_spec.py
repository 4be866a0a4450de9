"""TPBench's blocks of ``params.yaml``: which probe types it asks, how it scores them, and its
retention and deletion experiments.

::

    probes: [P1, P2, P3]        # case ignored (p2 -> P2)
    scoring: {abstain: published}            # published | json_literal
    retention: {ratios: [0.1, 0.3, 0.5, 0.7], methods: null}
    deletions: {enabled: true, seed: null, max_new_tokens: 128, max_probes: null}

``config.py`` validates the blocks both benchmarks share (corpora, datasets, reader, methods,
tracking); TPBench registers these keys as :data:`BLOCKS` (the ``compressbench.param_blocks``
entry point in ``pyproject.toml``), with the P1 judge's (:mod:`compressbench.tpbench.judge.spec`);
stages read them through the typed accessors (``RETENTION.of(params)``). Part of every stage's
code (``config.py`` loads it): it imports no registry at module level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from compressbench.config import ParamBlock, Params
from compressbench.params_check import Checker, spec_keys
from compressbench.tpbench.judge.spec import JudgeSpec, parse_judge
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


# reader.max_new_tokens when params.yaml gives none: the paper's Llama answer budgets (spec §6).
DEFAULT_MAX_NEW_TOKENS: dict[str, int] = {"P1": 96, "P2": 96, "P3": 128}


def settle_max_new_tokens(c: Checker, params: Params) -> Params:
    """``reader.max_new_tokens`` keyed by canonical probe names (default:
    :data:`DEFAULT_MAX_NEW_TOKENS`), one for each of ``probes``."""
    tokens: dict[str, int] = {}
    for key, value in (params.reader.max_new_tokens or DEFAULT_MAX_NEW_TOKENS).items():
        probe = probe_name(c, key, f"reader.max_new_tokens.{key}")
        if probe in tokens:
            raise c.fail(f"reader.max_new_tokens.{key}", f"{probe} given twice")
        tokens[probe] = value
    for probe in PROBES.of(params):
        if probe not in tokens:
            raise c.fail(f"reader.max_new_tokens.{probe}", "missing")
    ordered = {p: tokens[p] for p in PIPELINE_PROBES if p in tokens}
    return replace(params, reader=replace(params.reader, max_new_tokens=ordered))


def parse_p3_ratio(c: Checker, raw: Any, params: Params) -> float:
    """``p3_ratio`` (default 0.3): the one ratio P3 is built at, so one of ``ratios``."""
    p3_ratio = c.ratio(0.3 if raw is None else raw, "p3_ratio")
    if "P3" in PROBES.of(params) and p3_ratio not in params.ratios:
        raise c.fail(
            "p3_ratio",
            f"P3 is built only at p3_ratio, which must be one of ratios "
            f"({', '.join(map(str, params.ratios))}); got {p3_ratio}",
        )
    return p3_ratio


def check_retention_methods(c: Checker, params: Params) -> Params:
    """Every ``retention.methods`` name against the method registry."""
    from compressbench.compress.registry import check_method

    for i, name in enumerate(RETENTION.of(params).methods or ()):
        check_method(name, f"retention.methods[{i}]", c.source)
    return params


CODE = ("tpbench/pipeline_spec.py", "tpbench/probe_names.py", "tpbench/judge/spec.py")
PROBES: ParamBlock[tuple[str, ...]] = ParamBlock(
    "probes", lambda c, raw, _: parse_probes(c, raw), settle_max_new_tokens, CODE
)
P3_RATIO: ParamBlock[float] = ParamBlock("p3_ratio", parse_p3_ratio, code=CODE)
SCORING: ParamBlock[ScoringSpec] = ParamBlock(
    "scoring", lambda c, raw, _: parse_scoring(c, raw), code=CODE
)
RETENTION: ParamBlock[RetentionSpec] = ParamBlock(
    "retention", lambda c, raw, _: parse_retention(c, raw), check_retention_methods, CODE
)
DELETIONS: ParamBlock[DeletionsSpec] = ParamBlock(
    "deletions", lambda c, raw, p: parse_deletions(c, raw, p.seeds), code=CODE
)
JUDGE: ParamBlock[JudgeSpec] = ParamBlock(
    "judge", lambda c, raw, _: parse_judge(raw, c.source), code=CODE
)
BLOCKS = (PROBES, P3_RATIO, SCORING, RETENTION, DELETIONS, JUDGE)
"""TPBench's top-level keys, in parse order (``p3_ratio`` reads ``probes``)."""
