"""KEEP-Bench metrics from proposition verdicts (paper §4.1, §5.4; research notes §1.1, §2.3, §5).

Per case, with z_p = 1 when the judge says proposition p is preserved:

- **All-Rec** = prod over E_q(c) of z_p (every setting);
- **Para-Rec** = prod over the referent pairs R_q of z_p1 * z_p2 (parallel only);
- **Cond-Rec** = z_{p_cond} (conditional only).

Each is averaged over its applicable cases and reported in percent; which subsets report
Para-Rec and Cond-Rec is each :class:`~compressbench.keepbench.subsets.Subset`'s ``recall``.
The overall All-Rec (:func:`overall_all_rec`, its one definition) is weighted by cases (= the
mean over all cases; with the subsets' published sizes it reproduces Table 3, e.g.
Gemma-4-31B 66.8). Rate is a ratio of averages: total source tokens / total compressed tokens
(o200k_base).

A verdict is ``True`` / ``False`` (or "yes" / "no"); ``None`` (or "error") is a judge call that
failed after its retries. ``errors="no"`` (default) counts such a proposition as not preserved;
``errors="exclude"`` drops the case from every average. A proposition with no verdict at all
is an InputError: metrics never run on incomplete verdicts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from compressbench.errors import InputError
from compressbench.keepbench.cases import CONDITIONAL, PARALLEL, KeepCase
from compressbench.keepbench.subsets import SUBSETS, get_subset

Label = bool | str | None
ERROR_POLICIES = ("no", "exclude")
_YES, _NO = frozenset({"yes", "true"}), frozenset({"no", "false"})


def preserved(label: Label) -> bool | None:
    """``True`` / ``False`` for a verdict, ``None`` for a judge error."""
    if label is None or isinstance(label, bool):
        return label
    text = label.strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    if text == "error":
        return None
    raise InputError(f"unknown verdict label {label!r}; allowed: yes, no, error")


@dataclass(frozen=True)
class CaseScore:
    """One case's recall indicators and what the error analysis needs."""

    case_id: str
    subset: str
    all_rec: bool
    para_rec: bool | None  # parallel only
    cond_rec: bool | None  # conditional only
    n_propositions: int
    n_missing: int  # propositions not preserved (errors included)
    n_groups: int  # chains (parallel) / perspectives (imbalanced) / 1 (conditional)
    groups_retained: int  # groups with at least one preserved proposition
    errors: int  # judge errors among the verdicts


def score_case(case: KeepCase, verdicts: Mapping[str, Label]) -> CaseScore:
    """Score one case from ``{proposition id: verdict}`` (extra ids are refused)."""
    unknown = sorted(set(verdicts) - set(case.proposition_ids))
    if unknown:
        raise InputError(f"verdicts for unknown propositions {unknown}", record=case.case_id)
    z: dict[str, bool] = {}
    errors = 0
    for p in case.propositions:
        if p.id not in verdicts:
            raise InputError("no verdict", record=case.case_id, field=f"proposition {p.id}")
        value = preserved(verdicts[p.id])
        errors += value is None
        z[p.id] = bool(value)
    para = all(z[a] and z[b] for a, b in case.referent_pairs) if case.setting == PARALLEL else None
    cond = None
    if case.setting == CONDITIONAL and case.condition is not None:
        cond = z[case.condition.proposition_id]
    retained = {p.group for p in case.propositions if z[p.id]}
    return CaseScore(
        case_id=case.case_id,
        subset=case.subset,
        all_rec=all(z.values()),
        para_rec=para,
        cond_rec=cond,
        n_propositions=len(z),
        n_missing=sum(not v for v in z.values()),
        n_groups=len(case.groups),
        groups_retained=len(retained),
        errors=errors,
    )


@dataclass(frozen=True)
class SubsetMetrics:
    """Averages over one subset, in percent (None where not applicable or no cases)."""

    subset: str
    n: int
    all_rec: float | None
    para_rec: float | None
    cond_rec: float | None
    errors: int
    excluded: int


def _pct(values: Sequence[bool]) -> float | None:
    return 100.0 * sum(values) / len(values) if values else None


def _kept(scores: Iterable[CaseScore], errors: str) -> tuple[list[CaseScore], int]:
    if errors not in ERROR_POLICIES:
        raise InputError(f"errors policy {errors!r}; allowed: {', '.join(ERROR_POLICIES)}")
    scores = list(scores)
    kept = [s for s in scores if errors == "no" or s.errors == 0]
    return kept, len(scores) - len(kept)


def subset_metrics(
    scores: Iterable[CaseScore], subset: str, *, errors: str = "no"
) -> SubsetMetrics:
    """All-Rec (and the subset's own recall, Para-Rec or Cond-Rec, where it has one) for one
    subset."""
    mine = [s for s in scores if s.subset == subset]
    kept, excluded = _kept(mine, errors)
    own = get_subset(subset).recall

    def recall(key: str) -> float | None:
        """The subset's own recall ``key`` over the kept cases it applies to (None: not its)."""
        if own is None or own.key != key:
            return None
        return _pct([v for s in kept if (v := getattr(s, key)) is not None])

    return SubsetMetrics(
        subset=subset,
        n=len(kept),
        all_rec=_pct([s.all_rec for s in kept]),
        para_rec=recall("para_rec"),
        cond_rec=recall("cond_rec"),
        errors=sum(s.errors for s in mine),
        excluded=excluded,
    )


def metrics_by_subset(
    scores: Iterable[CaseScore], *, errors: str = "no"
) -> dict[str, SubsetMetrics]:
    """:func:`subset_metrics` for every subset present, in Table 3 order."""
    scores = list(scores)
    present = {s.subset for s in scores}
    return {
        subset.name: subset_metrics(scores, subset.name, errors=errors)
        for subset in SUBSETS
        if subset.name in present
    }


def overall_all_rec(scores: Iterable[CaseScore], *, errors: str = "no") -> float | None:
    """Overall All-Rec in percent: the mean over all (kept) cases, i.e. weighted by cases (its
    one definition: FLOPs/EPR and the report read it from here). Over the cases of some
    subsets only, it pools them (Table 10 pools science and policy)."""
    kept, _ = _kept(scores, errors)
    return _pct([s.all_rec for s in kept])


def compression_rate(source_tokens: Sequence[int], compressed_tokens: Sequence[int]) -> float:
    """Rate = mean source length / mean compressed length (a ratio of averages).

    Equal-length sequences, one entry per case; ``inf`` when every compression is empty."""
    if len(source_tokens) != len(compressed_tokens):
        raise ValueError("one source and one compressed length per case")
    if not source_tokens:
        raise ValueError("no cases")
    total = sum(compressed_tokens)
    return float("inf") if total == 0 else sum(source_tokens) / total


def failure_scope(scores: Iterable[CaseScore], top: int = 4) -> dict[str, float]:
    """Table 5: percent of failed cases (All-Rec = 0) missing exactly 1, 2, ... or >= ``top``."""
    failed = [s.n_missing for s in scores if not s.all_rec]
    if not failed:
        return {}
    keys = [str(k) for k in range(1, top)] + [f">={top}"]
    counts = Counter(str(n) if n < top else f">={top}" for n in failed)
    return {k: 100.0 * counts.get(k, 0) / len(failed) for k in keys}


def group_retention(scores: Iterable[CaseScore]) -> dict[str, int]:
    """Failed multi-group cases by how many groups (chains/perspectives) kept any evidence:
    ``none``, ``single`` or ``multi`` (§5.4: EXIT keeps breadth, BRIEF-Pro one group)."""
    out = {"none": 0, "single": 0, "multi": 0}
    for s in scores:
        if s.all_rec or s.n_groups < 2:
            continue
        key = "none" if s.groups_retained == 0 else "single" if s.groups_retained == 1 else "multi"
        out[key] += 1
    return out


def percent(part: int, whole: int) -> float:
    """``part`` of ``whole`` in percent (the error analysis' shares)."""
    if whole <= 0:
        raise ValueError("whole must be positive")
    return 100.0 * part / whole
