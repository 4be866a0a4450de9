"""Budgeted selection of segments (the turning-point compressor's core, pure).

Every value-like mention carries ``p``, the scorer's probability that it is a current value
(:mod:`.scorer`). A segment's gain is the sum of ``p`` over its mentions whose text no kept
segment holds yet (a value stated twice is worth keeping once), plus ``cue`` when it carries a
revision or confirmation cue. Selection is greedy by ``gain / cost**density`` under the token
budget, recomputing gains as mentions get covered; budget left over then goes to the remaining
segments (most valuable and latest first), so at ``r = 1`` every segment is kept. Two rules:

* the goal segment (the first user request) is taken first, alone (taking the segments that
  revise its values along lowered retention on SGD dev: the goal outweighs a stale value);
* **no stale value alone**: a segment holding a mention that a later mention of the same type
  supersedes is only taken together with the segment of the most likely later mention of
  that type (transitively), so a kept old value comes with the turn that revises it
  (``revisions="same_speaker"``: only a later mention by the same speaker supersedes).

``recency`` (default 0) weighs later mentions more: at tight budgets the values set late in a
dialogue, its turning points, are the ones the goal leaves room for.

Costs are estimates (a segment's tokens, plus its turn's marker when the turn is opened, else a
gap marker); the caller re-counts the rendered text exactly and drops the least valuable
segments while it is over budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from compressbench.compress.turning_point.features import cues
from compressbench.compress.turning_point.segments import Segment
from compressbench.corpora.model import USER

REVISIONS = ("any_speaker", "same_speaker")
# which turns a kept value brings whole (the ``frame`` settings that keep whole turns), read
# from the turn's cues ``(revision, confirmation, acceptance)``: every turn, or only a turn
# that revises ("No, change the name to Joseph."), confirms ("Please confirm: a table for 2
# at 6 pm.") or does either
WHOLE_TURNS: dict[str, Callable[[tuple[bool, bool, bool]], bool]] = {
    "turn": lambda cue: True,
    "revision": lambda cue: cue[0],
    "confirmation": lambda cue: cue[1],
    "cued": lambda cue: cue[0] or cue[1],
}
FRAMES = ("piece", "lead", "reply", *WHOLE_TURNS)
FILLS = ("latest", "frames")
"""What the budget left after the values goes to: ``latest`` (default) the remaining segments,
most valuable and latest first; ``frames`` first the words just before each kept value in its
turn (breadth-first over the kept values, most valuable first), then as ``latest``."""


@dataclass(frozen=True)
class Candidate:
    """A segment, its mentions as ``(text, p)``, its cue bonus and the segments it needs."""

    seg: Segment
    mentions: tuple[tuple[str, float], ...]
    bonus: float
    needs: tuple[int, ...]

    def value(self) -> float:
        return sum(p for _, p in self.mentions) + self.bonus


def candidates(
    segs: Sequence[Segment],
    located: Sequence[tuple[int, str, str, float]],
    cue: float,
    revisions: str = "any_speaker",
    recency: float = 0.0,
    frame: str = "piece",
    revised: float = 0.0,
) -> list[Candidate]:
    """Candidates from ``located`` mentions ``(segment, kind, text, p)`` in dialogue order.

    ``revisions``: which later mention of a type supersedes an earlier one (and so must come
    along with it): ``any_speaker`` (default) or ``same_speaker`` (a system turn restating a
    user's date as "next Monday" does not supersede the user's "the 4th of this month").
    ``recency`` in [0, 1]: a mention's ``p`` is scaled by ``1 - recency + recency * t``, ``t``
    its turn's position (0 first, 1 last): late mentions weigh more (0: unscaled).
    ``frame="turn"``: a segment with a mention needs every other segment of its turn (a kept
    value comes with the whole turn that frames it); ``"revision"``, ``"confirmation"``,
    ``"cued"``: the same, only in a turn with that cue (:data:`WHOLE_TURNS`); ``"lead"``: the
    segment just before it in its turn; ``"reply"``: a system segment brings the user's reply
    to it where the next turn accepts it (the first segment of that turn with an acceptance
    cue: an offer "at 9:40 am?" with "Yes, that works."); ``"piece"`` (default): none.
    ``revised`` >= 0: a user's mention of a kind the user stated before with another text (the
    user's own revision, a turning point) has its ``p`` scaled by ``1 + revised`` (0:
    unscaled)."""
    last = segs[-1].pos if segs else 0
    per_seg: list[list[tuple[str, float]]] = [[] for _ in segs]
    needs: list[set[int]] = [set() for _ in segs]
    stated: dict[str, set[str]] = {}  # the texts the user stated so far, by kind
    for n, (i, kind, text, _) in enumerate(located):
        late = segs[i].pos / last if last else 1.0  # 0 at the first turn, 1 at the last
        scale = 1.0 - recency + recency * late
        if segs[i].speaker == USER:
            earlier = stated.setdefault(kind, set())
            scale *= 1.0 + (revised if earlier - {text} else 0.0)
            earlier.add(text)
        per_seg[i].append((text, located[n][3] * scale))
        later = [m for m in located[n + 1 :] if m[1] == kind and m[2] != text and m[0] != i]
        if revisions == "same_speaker":  # a restatement by the other side is no revision
            later = [m for m in later if segs[m[0]].speaker == segs[i].speaker]
        if later:  # superseded: bring the most likely later mention of this type along
            needs[i].add(max(later, key=lambda m: (m[3], m[0]))[0])
    cue_of = [cues(s.text) for s in segs]  # (revision, confirmation, acceptance) per segment
    whole = WHOLE_TURNS.get(frame)
    framed = {s.pos for s, c in zip(segs, cue_of, strict=True) if whole is not None and whole(c)}
    accepts: dict[int, int] = {}  # a user turn's position -> its first segment that accepts
    for j, s in enumerate(segs):
        if s.speaker == USER and cue_of[j][2]:
            accepts.setdefault(s.pos, j)
    for i, s in enumerate(segs):
        if not per_seg[i]:
            continue
        if s.pos in framed:
            needs[i].update(j for j, t in enumerate(segs) if t.pos == s.pos and j != i)
        elif frame == "lead" and i > 0 and segs[i - 1].pos == s.pos:
            needs[i].add(i - 1)
        elif frame == "reply" and s.speaker != USER and s.pos + 1 in accepts:
            needs[i].add(accepts[s.pos + 1])  # the user's next turn accepts it
    out = []
    for i, s in enumerate(segs):
        revision, confirm, _ = cue_of[i]
        bonus = cue if (revision or confirm) and per_seg[i] else 0.0
        out.append(Candidate(s, tuple(per_seg[i]), bonus, tuple(sorted(needs[i]))))
    return out


def closure(cands: Sequence[Candidate], i: int) -> set[int]:
    """Segment ``i`` and, transitively, the later segments it needs."""
    out, todo = {i}, [i]
    while todo:
        for j in cands[todo.pop()].needs:
            if j not in out:
                out.add(j)
                todo.append(j)
    return out


def select(
    cands: Sequence[Candidate],
    budget: int,
    cost: Callable[[int, set[int]], int],
    density: float,
    fill: str = "latest",
    reserve: int = 0,
) -> list[int]:
    """Indices of the segments to keep (ascending), greedy under ``budget``.

    ``cost(i, chosen)`` is the estimated token cost of adding segment ``i`` to ``chosen``;
    ``fill``: what the budget left after the values goes to (:data:`FILLS`); ``reserve``: tokens
    the values may not use (the goal excepted), left for the fill.
    """
    chosen: set[int] = set()
    covered: set[str] = set()
    used = 0

    def group_cost(group: set[int]) -> int:
        extra, tentative = 0, set(chosen)
        for j in sorted(group - chosen):
            extra += cost(j, tentative)
            tentative.add(j)
        return extra

    def gain(group: set[int]) -> float:
        seen = set(covered)
        total = 0.0
        for j in sorted(group - chosen):
            for text, p in cands[j].mentions:
                if text not in seen:
                    seen.add(text)
                    total += p
            total += cands[j].bonus
        return total

    def take(group: set[int], extra: int) -> None:
        nonlocal used
        chosen.update(group)
        used += extra
        for j in group:
            covered.update(text for text, _ in cands[j].mentions)

    groups = {i: closure(cands, i) for i in range(len(cands))}
    goal = {i for i, c in enumerate(cands) if c.seg.goal}
    if goal and group_cost(goal) <= budget:  # alone: its revisions compete like the rest
        take(goal, group_cost(goal))
    while True:
        best, best_key, best_cost = -1, 0.0, 0
        for i, group in groups.items():
            if i in chosen:
                continue
            extra = group_cost(group)
            if used + extra > budget - reserve:
                continue
            g = gain(group)
            key = g / max(1, extra) ** density
            if g > 0 and key > best_key:
                best, best_key, best_cost = i, key, extra
        if best < 0:
            break
        take(groups[best], best_cost)
    if fill == "frames":  # budget left: each kept value's turn, read backwards from the value
        heads = sorted((i for i in chosen if cands[i].mentions), key=lambda i: -cands[i].value())
        while heads:
            grown = []
            for i in heads:
                lead = i - 1
                if lead < 0 or cands[lead].seg.pos != cands[i].seg.pos or lead in chosen:
                    continue
                extra = group_cost(groups[lead])
                if used + extra <= budget:
                    take(groups[lead], extra)
                    grown.append(lead)
            heads = grown
    # budget left: the remaining segments, most valuable and latest first, while they fit
    for i in sorted(range(len(cands)), key=lambda i: (-cands[i].value(), -i)):
        if i not in chosen:
            extra = group_cost(groups[i])
            if used + extra <= budget:
                take(groups[i], extra)
    return sorted(chosen)


def drop_order(cands: Sequence[Candidate], kept: Sequence[int]) -> list[set[int]]:
    """What to drop from ``kept``, first to last: the least valuable segment first (the goal
    last), each together with the kept segments that need it (no stale value left alone)."""
    order = sorted(kept, key=lambda i: (cands[i].seg.goal, cands[i].value(), i))
    return [
        {i} | {j for j in kept if i in closure(cands, j) and not cands[j].seg.goal} for i in order
    ]
