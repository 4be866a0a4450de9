"""Position analysis (paper §5.3, Table 4): 14 block arrangements per two-hop parallel case.

Each chain's two supporting paragraphs form an indivisible branch block B_i in reasoning order;
every other paragraph keeps its relative order. Distances: *adjacent* (blocks next to each
other), *middle* (separated by about half the context), *distant* (at opposite ends). Adjacent
and middle cross three placements (front, center, end) with both block orders; distant has the
two orders only: 2 x 3 x 2 + 2 = 14.

The paper gives no exact rule for "about half the context" or for "center"; ours
(**derived**, counted in paragraphs): with N paragraphs and m = N - 4 others, the middle gap is
g = min(m, max(0, round(N / 2) - 2)) other paragraphs, so block starts lie about N/2 apart;
the r = m - g remaining others go after the pair (front), r // 2 before it (center) or all
before it (end).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from compressbench.errors import InputError
from compressbench.keepbench.cases import PARALLEL, KeepCase
from compressbench.keepbench.metrics import Label, preserved, score_case

DISTANCES = ("adjacent", "middle", "distant")
PLACEMENTS = ("front", "center", "end")
ORDERS = ((1, 2), (2, 1))


@dataclass(frozen=True)
class Arrangement:
    """One arrangement: distance, placement, which chain's block comes first, the new order."""

    distance: str
    placement: str  # front / center / end; "ends" for distant
    order: tuple[int, int]
    paragraph_order: tuple[int, ...]  # original paragraph indices in their new order

    @property
    def name(self) -> str:
        return f"{self.distance}-{self.placement}-{self.order[0]}{self.order[1]}"


def branch_blocks(case: KeepCase) -> tuple[tuple[int, int], tuple[int, int]]:
    """Supporting paragraphs of chain 1 and chain 2, in hop order."""
    if case.setting != PARALLEL or case.hops != 2:
        raise InputError("position analysis needs a two-hop parallel case", record=case.case_id)
    blocks = []
    for n, chain in enumerate(case.chains, start=1):
        paras = [case.proposition(pid).paragraph for pid in chain]
        first, second = paras
        if first is None or second is None:
            raise InputError(f"chain {n} lacks supporting paragraphs", record=case.case_id)
        blocks.append((first, second))
    used = [p for b in blocks for p in b]
    if len(set(used)) != 4:
        raise InputError("the four hops need four distinct paragraphs", record=case.case_id)
    return blocks[0], blocks[1]


def middle_gap(n_paragraphs: int) -> int:
    """Other paragraphs between the blocks in the *middle* condition."""
    others = n_paragraphs - 4
    return min(others, max(0, int(n_paragraphs / 2 + 0.5) - 2))


def arrangements(case: KeepCase) -> list[Arrangement]:
    """The 14 arrangements of ``case`` in a fixed order (distance, placement, block order)."""
    b1, b2 = branch_blocks(case)
    in_blocks = set(b1) | set(b2)
    others = [i for i in range(len(case.paragraphs)) if i not in in_blocks]
    m = len(others)
    out = []
    for distance in DISTANCES:
        gap = {"adjacent": 0, "middle": middle_gap(len(case.paragraphs)), "distant": m}[distance]
        rest = m - gap
        placements = {"front": 0, "center": rest // 2, "end": rest}
        for placement in ("ends",) if distance == "distant" else PLACEMENTS:
            before = placements.get(placement, 0)
            for order in ORDERS:
                first, second = (b1, b2) if order == (1, 2) else (b2, b1)
                seq = (
                    others[:before]
                    + list(first)
                    + others[before : before + gap]
                    + list(second)
                    + others[before + gap :]
                )
                out.append(Arrangement(distance, placement, order, tuple(seq)))
    return out


def arrange(case: KeepCase, arrangement: Arrangement) -> KeepCase:
    """``case`` with its paragraphs reordered (proposition paragraph indices follow)."""
    if sorted(arrangement.paragraph_order) != list(range(len(case.paragraphs))):
        raise InputError(f"arrangement {arrangement.name} does not fit", record=case.case_id)
    new_index = {old: new for new, old in enumerate(arrangement.paragraph_order)}
    props = tuple(
        replace(p, paragraph=None if p.paragraph is None else new_index[p.paragraph])
        for p in case.propositions
    )
    return replace(
        case,
        case_id=f"{case.case_id}@{arrangement.name}",
        paragraphs=tuple(case.paragraphs[i] for i in arrangement.paragraph_order),
        propositions=props,
    )


def position_variants(cases: Iterable[KeepCase]) -> list[tuple[KeepCase, Arrangement]]:
    """Every arrangement of every eligible (two-hop parallel, evaluated) case."""
    out: list[tuple[KeepCase, Arrangement]] = []
    for case in cases:
        if case.setting == PARALLEL and case.hops == 2 and not case.demonstration:
            out.extend((arrange(case, a), a) for a in arrangements(case))
    return out


def position_summary(
    results: Sequence[tuple[KeepCase, Arrangement, Mapping[str, Label]]],
) -> dict[str, dict[str, float]]:
    """Table 4 per distance, in percent: Para-Rec, All-Rec (and their change from adjacent),
    Earlier/Later Rec of the first proposition of each chain, and delta = earlier - later.

    ``results`` holds (arranged case, its arrangement, its verdicts)."""
    acc: dict[str, dict[str, list[bool]]] = {}
    for case, arrangement, verdicts in results:
        score = score_case(case, verdicts)
        row = acc.setdefault(arrangement.distance, {k: [] for k in ("para", "all", "ear", "lat")})
        row["para"].append(bool(score.para_rec))
        row["all"].append(score.all_rec)
        first_chain = arrangement.order[0]
        for n, chain in enumerate(case.chains, start=1):
            row["ear" if n == first_chain else "lat"].append(preserved(verdicts[chain[0]]) is True)
    out: dict[str, dict[str, float]] = {}
    for distance in DISTANCES:
        if distance not in acc:
            continue
        row = acc[distance]

        def pct(values: list[bool]) -> float:
            return 100.0 * sum(values) / len(values)

        out[distance] = {
            "n": float(len(row["all"])),
            "para_rec": pct(row["para"]),
            "all_rec": pct(row["all"]),
            "earlier_rec": pct(row["ear"]),
            "later_rec": pct(row["lat"]),
        }
        out[distance]["delta"] = out[distance]["earlier_rec"] - out[distance]["later_rec"]
    if "adjacent" in out:
        for row_out in out.values():
            row_out["para_rec_change"] = row_out["para_rec"] - out["adjacent"]["para_rec"]
            row_out["all_rec_change"] = row_out["all_rec"] - out["adjacent"]["all_rec"]
    return out
