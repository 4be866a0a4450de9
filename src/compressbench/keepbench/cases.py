"""The one KEEP-Bench case model every loader produces and every later stage reads.

A :class:`KeepCase` is a query, its source context (a tuple of paragraphs in presentation
order) and the evidence set E_q(c): the :class:`Proposition` s a compressed context must still
entail. Each proposition has an ``id`` (unique within the case), its ``text``, a ``role`` and a
``group``:

============  =====================================  ==========================================
setting       roles                                  group
============  =====================================  ==========================================
parallel      ``evidence`` (2h of them)              ``chain1`` / ``chain2`` (the two chains)
conditional   ``evidence`` (h hops) + ``condition``  ``chain`` (all of them, one chain)
imbalanced    ``dominant`` / ``minority`` (n)        the perspective id (one proposition each)
============  =====================================  ==========================================

Setting-specific structure:

- parallel: ``chains`` (two tuples of proposition ids, hop order, each of length h),
  ``ambiguous_mentions`` (mention -> its qualified referents; the judge's constraints block),
  ``referent_pairs`` (R_q: per mention the two propositions that tell its referents apart,
  one from each chain; Para-Rec) and ``Proposition.involves_ambiguous_entity``;
- conditional: ``condition`` (:class:`Condition`: the key, the qualifier proposition p_cond
  scored as Cond-Rec, the conditioned "general" hop, and the disambiguation text that is judge
  metadata only, never scored);
- imbalanced: ``domain`` is ``science`` or ``policy``; policy propositions carry a
  ``jurisdiction``.

``hops`` (h) is set for parallel/conditional, ``perspectives`` (n) for imbalanced;
:func:`sentence_budget` turns them into the compressor's sentence budget K. ``demonstration``
marks cases kept for in-context examples (never evaluated), whose ``reference_compression`` is
the demonstration answer within its own K. :func:`case_to_dict` /
:func:`case_from_dict` are this model's own JSON form (the released dataset's field names are
mapped in ``keepbench.loader``); :func:`case_from_dict` checks the structure and raises
:class:`~compressbench.errors.InputError` naming file, case and field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from compressbench.errors import InputError

PARALLEL = "parallel"
CONDITIONAL = "conditional"
IMBALANCED = "imbalanced"
SETTINGS = (PARALLEL, CONDITIONAL, IMBALANCED)
# Domains allowed per setting; parallel/conditional come from (fictionalised) MuSiQue.
DOMAINS: dict[str, tuple[str, ...]] = {
    PARALLEL: ("musique",),
    CONDITIONAL: ("musique",),
    IMBALANCED: ("science", "policy"),
}
EVIDENCE, CONDITION, DOMINANT, MINORITY = "evidence", "condition", "dominant", "minority"
ROLES: dict[str, tuple[str, ...]] = {
    PARALLEL: (EVIDENCE,),
    CONDITIONAL: (EVIDENCE, CONDITION),
    IMBALANCED: (DOMINANT, MINORITY),
}
BUDGET_SCALES = (0.5, 1.0, 2.0)  # the paper's 0.5x / 1x / 2x budgets (C.2, Table 10)


@dataclass(frozen=True)
class Proposition:
    """One evidence proposition of E_q(c). ``paragraph`` indexes the supporting paragraph."""

    id: str
    text: str
    role: str
    group: str
    paragraph: int | None = None
    involves_ambiguous_entity: bool = False  # parallel: send the constraints block to the judge
    jurisdiction: str = ""  # policy perspectives: the jurisdiction the judge must see kept


@dataclass(frozen=True)
class AmbiguousMention:
    """An underspecified mention and its qualified referents (parallel)."""

    mention: str
    referents: tuple[str, ...]


@dataclass(frozen=True)
class Condition:
    """The conditional setting's qualifier: p_cond (Cond-Rec) and the hop it governs."""

    key: str
    proposition_id: str
    conditioned_hop_id: str
    disambiguation: str = ""  # judge metadata only, not an evaluated proposition
    disambiguating_paragraph: int | None = None


@dataclass(frozen=True)
class KeepCase:
    """One KEEP-Bench case (see the module docstring for the per-setting fields)."""

    case_id: str
    setting: str
    domain: str
    query: str
    paragraphs: tuple[str, ...]
    propositions: tuple[Proposition, ...]
    answers: tuple[str, ...] = ()
    hops: int | None = None
    perspectives: int | None = None
    chains: tuple[tuple[str, ...], ...] = ()
    ambiguous_mentions: tuple[AmbiguousMention, ...] = ()
    referent_pairs: tuple[tuple[str, str], ...] = ()
    condition: Condition | None = None
    demonstration: bool = False
    reference_compression: str = ""  # demonstrations: a compression within their own K
    source: str = ""

    @property
    def subset(self) -> str:
        """Its Table 3 subset (:mod:`compressbench.keepbench.subsets`): the setting, or an
        imbalanced case's domain."""
        return self.domain if self.setting == IMBALANCED else self.setting

    @property
    def context(self) -> str:
        """The source context as one text (paragraphs separated by a blank line)."""
        return "\n\n".join(self.paragraphs)

    @property
    def proposition_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.propositions)

    @property
    def groups(self) -> tuple[str, ...]:
        """Distinct proposition groups in first-appearance order."""
        return tuple(dict.fromkeys(p.group for p in self.propositions))

    def proposition(self, prop_id: str) -> Proposition:
        for p in self.propositions:
            if p.id == prop_id:
                return p
        raise KeyError(f"case {self.case_id} has no proposition {prop_id!r}")


def budget_for(setting: str, count: int, scale: float = 1.0) -> int:
    """Sentence budget K from the hop/perspective count: 2h, or 2n+1 for imbalanced.

    The 0.5x / 2x budgets scale the hop or perspective term (C.2): K = h or 4h, n+1 or 4n+1.
    For the published scales the term is always whole; any other positive scale rounds the
    term up (our choice, so a budget never drops to zero), never below one sentence.
    """
    if setting not in SETTINGS:
        raise InputError(f"unknown setting {setting!r}; allowed: {', '.join(SETTINGS)}")
    if not isinstance(scale, int | float) or isinstance(scale, bool) or not scale > 0:
        raise InputError(
            f"budget scale must be a positive number (paper: 0.5, 1, 2), got {scale!r}"
        )
    if count < 1:
        raise InputError(f"hop/perspective count must be >= 1, got {count}")
    term = max(1, math.ceil(2 * count * scale - 1e-9))
    return term + 1 if setting == IMBALANCED else term


def sentence_budget(case: KeepCase, scale: float = 1.0) -> int:
    """K for ``case`` at budget ``scale`` (K = 2h parallel/conditional, 2n+1 imbalanced)."""
    count = case.perspectives if case.setting == IMBALANCED else case.hops
    if count is None:
        raise InputError("hops/perspectives not set", record=case.case_id)
    return budget_for(case.setting, count, scale)


def case_to_dict(case: KeepCase) -> dict[str, Any]:
    """JSON-ready form (this project's schema; ``json.dumps`` writes the tuples as lists)."""
    return asdict(case)


class _Reader:
    """Typed field access on one raw record, failing with file/case/field named."""

    def __init__(self, row: Mapping[str, Any], file: str | None, record: str | None) -> None:
        self.row, self.file, self.record = row, file, record

    def fail(self, field: str, message: str) -> InputError:
        return InputError(message, file=self.file, record=self.record, field=field)

    def get(
        self, obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str
    ) -> Any:
        if not isinstance(obj, Mapping) or obj.get(key) is None:
            raise self.fail(where, "missing required field")
        value = obj[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise self.fail(where, f"expected {_kind_name(kind)}, got {type(value).__name__}")
        return value

    def opt(
        self, obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str
    ) -> Any:
        return self.get(obj, key, kind, where) if obj.get(key) is not None else None

    def strings(
        self, obj: Mapping[str, Any], key: str, where: str, required: bool = True
    ) -> tuple[str, ...]:
        if not required and obj.get(key) is None:
            return ()
        values = self.get(obj, key, list, where)
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise self.fail(f"{where}[{i}]", f"expected a string, got {type(v).__name__}")
        return tuple(values)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def case_from_dict(
    row: Mapping[str, Any], *, file: str | None = None, record: str | None = None
) -> KeepCase:
    """Inverse of :func:`case_to_dict`; checks types and structure (:func:`check_case`).

    ``record`` names the row in errors until its ``case_id`` is known."""
    r = _Reader(row, file, record)
    case_id = r.get(row, "case_id", str, "case_id")
    r.record = case_id  # from here on errors name the case
    props = []
    for i, p in enumerate(r.get(row, "propositions", list, "propositions")):
        w = f"propositions[{i}]"
        props.append(
            Proposition(
                id=r.get(p, "id", str, f"{w}.id"),
                text=r.get(p, "text", str, f"{w}.text"),
                role=r.get(p, "role", str, f"{w}.role"),
                group=r.get(p, "group", str, f"{w}.group"),
                paragraph=r.opt(p, "paragraph", int, f"{w}.paragraph"),
                involves_ambiguous_entity=bool(p.get("involves_ambiguous_entity", False)),
                jurisdiction=r.opt(p, "jurisdiction", str, f"{w}.jurisdiction") or "",
            )
        )
    mentions = tuple(
        AmbiguousMention(
            mention=r.get(m, "mention", str, f"ambiguous_mentions[{i}].mention"),
            referents=r.strings(m, "referents", f"ambiguous_mentions[{i}].referents"),
        )
        for i, m in enumerate(r.opt(row, "ambiguous_mentions", list, "ambiguous_mentions") or [])
    )
    chains = tuple(
        r.strings({"c": c}, "c", f"chains[{i}]")
        for i, c in enumerate(r.opt(row, "chains", list, "chains") or [])
    )
    pairs = []
    for i, pair in enumerate(r.opt(row, "referent_pairs", list, "referent_pairs") or []):
        ids = r.strings({"p": pair}, "p", f"referent_pairs[{i}]")
        if len(ids) != 2:
            raise r.fail(f"referent_pairs[{i}]", f"expected 2 proposition ids, got {len(ids)}")
        pairs.append((ids[0], ids[1]))
    cond_row = r.opt(row, "condition", dict, "condition")
    condition = None
    if cond_row is not None:
        condition = Condition(
            key=r.get(cond_row, "key", str, "condition.key"),
            proposition_id=r.get(cond_row, "proposition_id", str, "condition.proposition_id"),
            conditioned_hop_id=r.get(
                cond_row, "conditioned_hop_id", str, "condition.conditioned_hop_id"
            ),
            disambiguation=r.opt(cond_row, "disambiguation", str, "condition.disambiguation") or "",
            disambiguating_paragraph=r.opt(
                cond_row, "disambiguating_paragraph", int, "condition.disambiguating_paragraph"
            ),
        )
    case = KeepCase(
        case_id=case_id,
        setting=r.get(row, "setting", str, "setting"),
        domain=r.get(row, "domain", str, "domain"),
        query=r.get(row, "query", str, "query"),
        paragraphs=r.strings(row, "paragraphs", "paragraphs"),
        propositions=tuple(props),
        answers=r.strings(row, "answers", "answers", required=False),
        hops=r.opt(row, "hops", int, "hops"),
        perspectives=r.opt(row, "perspectives", int, "perspectives"),
        chains=chains,
        ambiguous_mentions=mentions,
        referent_pairs=tuple(pairs),
        condition=condition,
        demonstration=bool(row.get("demonstration", False)),
        reference_compression=r.opt(row, "reference_compression", str, "reference_compression")
        or "",
        source=r.opt(row, "source", str, "source") or "",
    )
    check_case(case, file=file)
    return case


def check_case(case: KeepCase, *, file: str | None = None) -> None:
    """Structural checks of one case; the first violation raises InputError naming the field."""

    def fail(field: str, message: str) -> InputError:
        return InputError(message, file=file, record=case.case_id, field=field)

    if case.setting not in SETTINGS:
        raise fail("setting", f"unknown setting {case.setting!r}; allowed: {', '.join(SETTINGS)}")
    if case.domain not in DOMAINS[case.setting]:
        allowed = ", ".join(DOMAINS[case.setting])
        raise fail("domain", f"{case.domain!r} not allowed for {case.setting}; allowed: {allowed}")
    if not case.query.strip():
        raise fail("query", "empty query")
    if not case.paragraphs:
        raise fail("paragraphs", "no context paragraphs")
    ids = [p.id for p in case.propositions]
    if len(set(ids)) != len(ids):
        raise fail("propositions", "duplicate proposition ids")
    for i, p in enumerate(case.propositions):
        if p.role not in ROLES[case.setting]:
            allowed = ", ".join(ROLES[case.setting])
            raise fail(f"propositions[{i}].role", f"{p.role!r} not allowed; allowed: {allowed}")
        if not p.text.strip():
            raise fail(f"propositions[{i}].text", "empty proposition")
        if p.paragraph is not None and not 0 <= p.paragraph < len(case.paragraphs):
            raise fail(f"propositions[{i}].paragraph", f"index {p.paragraph} out of range")
    _SETTING_CHECKS[case.setting](case, fail)


def _check_parallel(case: KeepCase, fail: Any) -> None:
    h = case.hops
    if h is None or h < 1:
        raise fail("hops", "parallel cases need hops >= 1")
    if len(case.propositions) != 2 * h:
        raise fail(
            "propositions", f"expected 2h = {2 * h} propositions, got {len(case.propositions)}"
        )
    if len(case.chains) != 2 or any(len(c) != h for c in case.chains):
        raise fail("chains", f"expected two chains of {h} proposition ids")
    chained = [pid for c in case.chains for pid in c]
    if sorted(chained) != sorted(case.proposition_ids):
        raise fail("chains", "chains must partition the propositions")
    if not case.referent_pairs:
        raise fail("referent_pairs", "parallel cases need at least one referent pair")
    for i, (a, b) in enumerate(case.referent_pairs):
        if a not in case.chains[0] or b not in case.chains[1]:
            raise fail(
                f"referent_pairs[{i}]", "pair must hold one id of chain 1 then one of chain 2"
            )
    if len(case.answers) not in (0, 2):
        raise fail("answers", f"parallel cases have 2 answers, got {len(case.answers)}")


def _check_conditional(case: KeepCase, fail: Any) -> None:
    h = case.hops
    if h is None or h < 1:
        raise fail("hops", "conditional cases need hops >= 1")
    if len(case.propositions) != h + 1:
        raise fail(
            "propositions", f"expected h+1 = {h + 1} propositions, got {len(case.propositions)}"
        )
    cond = case.condition
    if cond is None:
        raise fail("condition", "conditional cases need a condition")
    if cond.proposition_id not in case.proposition_ids:
        raise fail("condition.proposition_id", f"no proposition {cond.proposition_id!r}")
    if case.proposition(cond.proposition_id).role != CONDITION:
        raise fail(
            "condition.proposition_id", "the condition proposition must have role 'condition'"
        )
    if sum(p.role == CONDITION for p in case.propositions) != 1:
        raise fail("propositions", "exactly one proposition has role 'condition'")
    if (
        cond.conditioned_hop_id not in case.proposition_ids
        or cond.conditioned_hop_id == cond.proposition_id
    ):
        raise fail(
            "condition.conditioned_hop_id", f"no hop proposition {cond.conditioned_hop_id!r}"
        )


def _check_imbalanced(case: KeepCase, fail: Any) -> None:
    n = case.perspectives
    if n is None or n < 1:
        raise fail("perspectives", "imbalanced cases need perspectives >= 1")
    if len(case.propositions) != n:
        raise fail("propositions", f"expected n = {n} perspectives, got {len(case.propositions)}")
    if len(set(case.groups)) != n:
        raise fail("propositions", "each perspective needs its own group id")
    if case.domain == "policy":
        for i, p in enumerate(case.propositions):
            if not p.jurisdiction:
                raise fail(
                    f"propositions[{i}].jurisdiction", "policy perspectives name a jurisdiction"
                )


_SETTING_CHECKS = {
    PARALLEL: _check_parallel,
    CONDITIONAL: _check_conditional,
    IMBALANCED: _check_imbalanced,
}
