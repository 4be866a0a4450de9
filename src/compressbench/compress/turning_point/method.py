"""The turning-point compressor under the method contract (registered as ``turning_point``).

It reads the dialogue's turn texts and speakers only - never the state annotations, which are
the benchmark's answer key - and keeps a faithful subset of the dialogue: verbatim segments
(sentences, clauses or phrases, :mod:`.segments`) in their order, each turn's kept segments on
one line labelled with its speaker, gaps inside a turn shown as `` … ``. What it keeps
(:mod:`.select`): the user's first request, then the segments whose value-like mentions are
most likely current (a logistic scorer over text features, :mod:`.scorer`, fitted on SGD train),
each distinct mention counted once, never a superseded value without the segment of the
likeliest later value of its type.

Budget (``budget_unit: reader_tokens``): the rendered output has at most ``floor(r * T)``
reader tokens, ``T`` the tokens of the full dialogue rendered with markers; counted exactly
with the reader's tokenizer (``Source.tokenizer``, else the ``tokenizer`` parameter, else the
offline SmolLM2 reader's).

Parameters
----------
tokenizer:
    ``None`` (the default reader's tokenizer), or a ``tokenizer.json`` / folder holding one.
units:
    ``sentence``, ``clause`` (sentences cut at commas and semicolons) or ``phrase`` (default:
    clauses cut before prepositions, never inside a value-like span); for tight budgets
    ``mention`` (each value with the preposition before it) and ``value`` (each value alone).
scorer:
    the mention scorer's JSON (``None``: the packaged one, fitted on SGD train).
cue:
    gain added to a segment with a revision or confirmation cue. Default 0.2.
density:
    greedy priority is ``gain / cost**density``. Default 1.0.
labels:
    line labels: ``speaker`` (``SPEAKER:``, default), ``turn`` (``[Tn] SPEAKER:``, which
    costs about three more tokens a line) or ``none`` (a labelled variant for tight budgets:
    the kept pieces alone, one turn a line; the reader no longer sees who said what).
schema:
    service schema files (SGD / MultiWOZ 2.2 layout, ``.json[.gz]``, comma-separated; e.g. a
    corpus's ``schema.json.gz``): the values their categorical
    slots list become mentions too (:mod:`.schema`). Default None (text patterns only).
revisions:
    which later mention supersedes an earlier one of its type (the "no stale value alone"
    rule, :mod:`.select`): ``any_speaker`` (default) or ``same_speaker`` (a labelled variant:
    a system restatement is no revision; measured in docs/results.md, issue #31).

recency:
    in [0, 1]; a mention's probability is scaled by ``1 - recency + recency * t``, ``t`` its
    turn's relative position (0 first turn, 1 last). Default 0 (unscaled).

fill:
    what the budget left after the values goes to: ``latest`` (default: the remaining
    segments, most valuable and latest first) or ``frames`` (a labelled variant for reading:
    first the words just before each kept value in its turn, "it will depart peterborough"
    before "at 19:48", so the reader sees which slot a value fills; :data:`.select.FILLS`).
fill_share:
    in [0, 1): the share of the budget the values may not use, left for the fill (default 0:
    the fill gets what the values leave). Recorded when non-zero.

state:
    ``none`` (default), ``latest``: a last line ``LATEST: time 9:40 am; date March 5th`` with
    the dialogue's last mention of each changed time, date or schema-slot kind, ``counted``:
    those and each unit's count ("4 people"), ``named``: those counts too and the names of
    the user's last naming turn when a name changed, ``unpaired``: ``counted`` without the
    kinds a single turn names with two texts (a pick-up and a drop-off date), ``ranged``:
    ``counted`` whose date entry lists the dates of the last turn naming two, in order
    ("March 8th to March 12th"), or ``spanned``: those two dates as a start and an end date
    (:mod:`.state`; a labelled rendering variant, its tokens within the budget). Recorded when
    not ``none``.

state_at:
    where the state line goes: ``end`` (default, after the kept pieces) or ``start`` (before
    them). Recorded when not ``end``.

dates:
    how dates are found (:data:`.features.DATE_RULES`): ``in_names`` (default, the first
    rules: a capitalised run reads on into a month, "Seattle on March 7th" gives the name
    "Seattle on March" and no date, and a date stops before its year) or ``whole`` (a
    labelled variant: a name stops where a date or a time starts, and a date keeps its year:
    "Seattle", "March 7th 2019"). Recorded when not ``in_names``.

frame:
    ``piece`` (default): a value-bearing segment is kept alone; ``lead``: it brings the segment
    just before it in its turn ("No, change the name" before "to Joseph."); ``turn``: the rest
    of its turn; ``revision`` / ``confirmation`` / ``cued``: the rest of its turn where the
    turn has a revision cue / a confirmation cue ("Please confirm: ...") / either; ``reply``: a
    system piece brings the user's next turn's piece that accepts it ("Yes, that works.").

query:
    ``none`` (default): the question is never read; ``question``: the **query-aware** variant
    reads ``Source.query`` (the probe's question) and weighs mentions of other kinds than its
    slot's down (:mod:`.query`): an upper line for the query-agnostic method, never mixed with it.

revised:
    >= 0; a user's mention of a kind the user stated before with another text (a revision by
    the user, the turning point P3 asks about) has its probability scaled by ``1 + revised``.
    Default 0 (unscaled); 3 in the labelled tight variant of issue #31 (tuned on SGD dev and
    train at r = 0.1).

``units: mention`` or ``value``, ``revisions: same_speaker``, ``recency > 0`` and ``revised > 0``
are labelled variants for tight budgets (r = 0.1), ``frame: turn`` one for reading (#31); the
defaults are the method as first measured, and a variant's non-default settings are recorded in
every compression's ``params``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from compressbench.compress.budgets import READER_TOKENS
from compressbench.compress.method import Compression, Source
from compressbench.compress.reader_tokens import dialogue_token_budget, reader_counter
from compressbench.compress.render import render_style
from compressbench.compress.text_method import TextMethod
from compressbench.compress.turning_point.features import DATE_RULES, MentionRules
from compressbench.compress.turning_point.query import QUERY_MODES, kind_weight, question_kind
from compressbench.compress.turning_point.schema import load_vocabulary, merged
from compressbench.compress.turning_point.scorer import load_scorer, located_mentions
from compressbench.compress.turning_point.segments import (
    FINE_UNITS,
    UNITS,
    Segment,
    segment_dialogue,
)
from compressbench.compress.turning_point.select import (
    FILLS,
    FRAMES,
    REVISIONS,
    Candidate,
    candidates,
    drop_order,
    select,
)
from compressbench.compress.turning_point.state import STATES
from compressbench.corpora.model import Turn

GAP = " … "
# line labels of the markers style: with the turn's index, or the speaker alone
LABELS: dict[str, Callable[[Segment], str]] = {
    "turn": lambda s: f"[T{s.turn}] {s.speaker}:",
    "speaker": lambda s: f"{s.speaker}:",
    "none": lambda s: "",  # a labelled variant for tight budgets: the pieces alone
}


def render_segments(
    segs: Sequence[Segment], style: str = "markers", labels: str = "turn"
) -> tuple[str, str]:
    """``(context, retained)``: the kept segments, one line per turn (labelled ``[Tn]
    SPEAKER:`` or ``SPEAKER:`` in the ``markers`` style, space-joined turns in ``plain``), and
    the same without labels, one turn per line (what the retention diagnostic searches)."""
    lines: list[tuple[Segment, str]] = []
    prev: Segment | None = None
    for s in segs:
        if prev is not None and prev.pos == s.pos:
            head, text = lines[-1]
            # adjacent segments keep the original space (or none) between them, gaps a marker
            joiner = " " * (s.start - prev.end) if _adjacent(prev, s) else GAP
            lines[-1] = (head, text + joiner + s.text)
        else:
            lines.append((s, s.text))
        prev = s
    retained = "\n".join(text for _, text in lines)
    if style == "plain":
        return " ".join(text for _, text in lines), retained
    label = LABELS[labels]
    return "\n".join(f"{label(s)} {text}".lstrip() for s, text in lines), retained


# where the state line goes: after the kept pieces (default) or before them
STATE_PLACES = ("end", "start")


def _place(text: str, line: str, at: str) -> str:
    """``text`` with the state ``line`` (none when "") after it (``end``) or before it."""
    parts = (text, line) if at == "end" else (line, text)
    return "\n".join(t for t in parts if t)


def _adjacent(a: Segment, b: Segment) -> bool:
    return a.end <= b.start and b.start - a.end <= 1 and a.pos == b.pos


@functools.lru_cache(maxsize=8)
def mention_rules(scorer_path: str | None, schema: str | None, dates: str) -> MentionRules:
    """The mention rules: the scorer's lexicon, with ``schema``'s terms when named, and the
    ``dates`` rule."""
    vocab = merged(load_scorer(scorer_path).vocabulary, load_vocabulary(schema) if schema else None)
    return MentionRules(vocab, dates)


@functools.lru_cache(maxsize=64)
def _plan(
    key: tuple[tuple[int, str, str], ...],
    units: str,
    scorer_path: str | None,
    cue: float,
    schema: str | None,
    revisions: str,
    recency: float,
    frame: str,
    revised: float,
    dates: str,
    wanted: str | None,
) -> tuple[list[Segment], list[Candidate]]:
    turns = [Turn(i, speaker, text) for i, speaker, text in key]  # texts only: no state
    rules = mention_rules(scorer_path, schema, dates)
    scorer = load_scorer(scorer_path)
    segs = segment_dialogue(turns, units=units, rules=rules)
    located = [
        (
            loc.seg,
            loc.mention.kind,
            loc.mention.text,
            scorer.p(loc.x) * kind_weight(loc.mention.kind, wanted),
        )
        for loc in located_mentions(segs, len(turns), rules)
    ]
    return segs, candidates(segs, located, cue, revisions, recency, frame, revised)


@dataclass(frozen=True)
class TurningPointMethod(TextMethod):
    """Span selection that keeps turning points (see the module docstring)."""

    name: str = "turning_point"
    tokenizer: str | None = None
    units: str = "phrase"
    scorer: str | None = None
    cue: float = 0.2
    density: float = 1.0
    labels: str = "speaker"
    schema: str | None = None
    revisions: str = "any_speaker"
    recency: float = 0.0
    revised: float = 0.0
    frame: str = "piece"
    query: str = "none"
    fill: str = "latest"
    fill_share: float = 0.0
    state: str = "none"
    state_at: str = "end"
    dates: str = "in_names"

    family = "span_selector"
    budget_unit = READER_TOKENS
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "units": UNITS,
        "labels": tuple(LABELS),
        "revisions": REVISIONS,
        "frame": FRAMES,
        "query": QUERY_MODES,
        "fill": FILLS,
        "state": tuple(STATES),
        "state_at": STATE_PLACES,
        "dates": tuple(DATE_RULES),
    }
    # the parameters that name files it reads (``schema``: a comma-separated list)
    PATH_PARAMS: ClassVar[tuple[str, ...]] = ("tokenizer", "scorer", "schema")

    def __post_init__(self) -> None:
        for key, allowed in self.CHOICES.items():
            if getattr(self, key) not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}")
        if not 0.0 <= self.recency <= 1.0:
            raise ValueError("recency must be in [0, 1]")
        if self.revised < 0.0:
            raise ValueError("revised must be >= 0")
        if not 0.0 <= self.fill_share < 1.0:
            raise ValueError("fill_share must be in [0, 1)")

    def plan(
        self, turns: Sequence[Turn], wanted: str | None = None
    ) -> tuple[list[Segment], list[Candidate]]:
        """The dialogue's segments and their scored candidates (no budget involved; memoised
        on the turn texts and speakers, so several ratios of one dialogue plan once);
        ``wanted``: the mention kind the question asks for (the query-aware variant only)."""
        key = tuple((t.index, t.speaker, t.text) for t in turns)
        return _plan(
            key,
            self.units,
            self.scorer,
            self.cue,
            self.schema,
            self.revisions,
            self.recency,
            self.frame,
            self.revised,
            self.dates,
            wanted,
        )

    def compress(self, source: Source, ratio: float) -> Compression:
        # the result depends on the texts, the ratio, the rendering, the tokenizer and (for the
        # query-aware variant) the question's slot kind only (not on source.key): the events of
        # one dialogue share one compression per ratio
        key = tuple((t.index, t.speaker, t.text) for t in source.units)
        wanted = question_kind(source.query) if self.query == "question" else None
        return self._compress(key, ratio, source.render, source.tokenizer, wanted)

    def _variant_params(self) -> dict[str, Any]:
        """The labelled variants' settings that differ from the defaults (none by default, so
        the default's records are unchanged)."""
        out: dict[str, Any] = {}
        if self.revisions != "any_speaker":
            out["revisions"] = self.revisions
        if self.recency:
            out["recency"] = self.recency
        if self.revised:
            out["revised"] = self.revised
        if self.frame != "piece":
            out["frame"] = self.frame
        if self.query != "none":
            out["query"] = self.query
        if self.fill != "latest":
            out["fill"] = self.fill
        if self.fill_share:
            out["fill_share"] = self.fill_share
        if self.state != "none":
            out["state"] = self.state
        if self.state_at != "end":
            out["state_at"] = self.state_at
        if self.dates != "in_names":
            out["dates"] = self.dates
        return out

    @functools.lru_cache(maxsize=64)  # noqa: B019 - a frozen, hashable dataclass
    def _compress(
        self,
        key: tuple[tuple[int, str, str], ...],
        ratio: float,
        render: str,
        tokenizer: Any,
        wanted: str | None,
    ) -> Compression:
        turns = [Turn(i, speaker, text) for i, speaker, text in key]
        source = Source(turns, key="", render=render, tokenizer=tokenizer)
        count = reader_counter(source.tokenizer or self.tokenizer)
        budget, full = dialogue_token_budget(turns, ratio, count)
        style = render_style("markers", source.render)
        segs, cands = self.plan(turns, wanted)
        seg_tokens = [count(s.text) for s in segs]
        opener = {s.pos: count(LABELS[self.labels](s)) + 1 for s in segs}

        # mention and value units cut turns finely: a segment next to a kept one of its turn is
        # joined by the original space (no gap marker), which the phrase units' estimate omits
        joins = self.units in FINE_UNITS

        def cost(i: int, chosen: set[int]) -> int:
            if joins and any(
                _adjacent(segs[j], segs[i]) or _adjacent(segs[i], segs[j]) for j in chosen
            ):
                return seg_tokens[i]
            same_turn = any(segs[j].pos == segs[i].pos for j in chosen)
            return seg_tokens[i] + (1 if same_turn else opener[segs[i].pos])

        # the state line (a rendering variant) goes last (or first); its tokens come off the
        # budget first
        line = STATES[self.state](turns, mention_rules(self.scorer, self.schema, self.dates))
        line_cost = count(line) + 1 if line else 0
        if line_cost >= budget:  # no room for the pieces beside it: no line
            line, line_cost = "", 0
        reserve = int(budget * self.fill_share)
        kept = select(cands, budget - line_cost, cost, self.density, self.fill, reserve)

        def rendered(kept: Sequence[int]) -> tuple[str, str]:
            text, retained = render_segments([segs[i] for i in kept], style, self.labels)
            return _place(text, line, self.state_at), _place(retained, line, self.state_at)

        text, retained = rendered(kept)
        drop = drop_order(cands, kept)
        while count(text) > budget and drop:  # exact count: never over budget
            gone = drop.pop(0)
            kept = [i for i in kept if i not in gone]
            text, retained = rendered(kept)
        return self._compression(
            turns,
            ratio,
            text=text,
            kept_ids=tuple(sorted({segs[i].turn for i in kept})),
            kept_text=retained,
            render=style,
            params={
                "units": self.units,
                "scorer": self.scorer,
                "cue": self.cue,
                "density": self.density,
                "labels": self.labels,
                "schema": self.schema,
                **self._variant_params(),
            },
            budget=budget,
            full_tokens=full,
            kept_tokens=count(text),
            kept_segments=len(kept),
            n_segments=len(segs),
        )
