"""Context rendering of kept turns (spec §3.9).

* ``markers`` - one line per kept turn, ``[T{i}] {SPEAKER}: {text}``, joined by ``\\n``, in
  ascending order with the original indices (gaps stay visible); no trailing newline. Used by
  full context and every positional selector.
* ``plain`` - the kept turns' raw texts in order joined by a single space (the published form of
  the content-aware selectors).

Each method has a published style; ``render_mode`` ``published`` keeps it, ``markers`` or
``plain`` forces one style on every method.

``i`` is the turn's own index and SPEAKER its own speaker; loaders guarantee that turn 0 is USER
and speakers alternate, so this equals the spec's parity rule (even -> USER, odd -> SYSTEM).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compressbench.corpora.model import Turn

Renderer = Callable[[Sequence[Turn], Sequence[int]], str]
PUBLISHED = "published"  # each method's own published style
RENDER_CHOICES: tuple[str, ...] = (PUBLISHED, "markers", "plain")


def marker_line(turn: Turn) -> str:
    """``[T{index}] {SPEAKER}: {text}`` for one turn."""
    return f"[T{turn.index}] {turn.speaker}: {turn.text}"


def render_markers(turns: Sequence[Turn], keep: Sequence[int]) -> str:
    """Marker rendering of ``turns[p]`` for each position ``p`` in ``keep`` (ascending)."""
    return "\n".join(marker_line(turns[p]) for p in sorted(keep))


def render_plain(turns: Sequence[Turn], keep: Sequence[int]) -> str:
    """Space-joined raw texts of the kept turns, in order."""
    return " ".join(turns[p].text for p in sorted(keep))


RENDERERS: dict[str, Renderer] = {
    "markers": render_markers,
    "plain": render_plain,
}


def render(turns: Sequence[Turn], keep: Sequence[int], style: str = "markers") -> str:
    """Render kept turns in the named style (``markers`` or ``plain``)."""
    try:
        fn = RENDERERS[style]
    except KeyError:
        raise KeyError(f"unknown render style {style!r}; known: {', '.join(RENDERERS)}") from None
    return fn(turns, keep)


def render_style(published: str, render_mode: str = PUBLISHED) -> str:
    """The style a method gets: its ``published`` one, or the one forced for every method."""
    if render_mode not in RENDER_CHOICES:
        raise ValueError(f"unknown render mode {render_mode!r}; known: {', '.join(RENDER_CHOICES)}")
    return published if render_mode == PUBLISHED else render_mode
