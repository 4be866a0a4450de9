"""Positional turn selectors of TPBench (spec §3.11); all use the ``round`` budget (§3.10)
and the published ``markers`` rendering (§3.9).

Selectors return positions into the ``turns`` sequence they are given, ascending; for a whole
dialogue a position equals the turn index.

* ``full_context`` - every turn (``k`` is ignored).
* ``recency`` - the last ``k`` turns.
* ``first_n`` - the first ``k`` turns ("earliest turns").
* ``random_seed{S}`` - ``k`` turns drawn with ``random.Random(seed)``, where ``seed`` is the first
  16 hex digits of ``sha256("{S}|{probe_id}")`` mod 2**32. ``S`` is the selector seed, not the
  sampling seed (42 in the main tables; 42-46 in the replications). ``random`` takes ``seed=``.
* ``uniform_stride`` - ``round(i * n / k)`` for ``i < k``, round-half-to-even, deduplicated.
* ``first_user_recent`` - the first USER turn plus the ``k - 1`` latest other turns.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from compressbench.compress.method import FULL_CONTEXT
from compressbench.compress.selectors.base import TurnSelector, register_selector
from compressbench.corpora.model import USER, Turn

RANDOM_SELECTOR_SEEDS: tuple[int, ...] = (42, 43, 44, 45, 46)
# Every name this module registers (they need no model: replay rebuilds them from text alone).
POSITIONAL_SELECTORS: tuple[str, ...] = (
    FULL_CONTEXT,
    "recency",
    "first_n",
    "random",
    *(f"random_seed{s}" for s in RANDOM_SELECTOR_SEEDS),
    "uniform_stride",
    "first_user_recent",
)


@dataclass(frozen=True)
class _Positional:
    """Shared attributes of the positional selectors."""

    name = "positional"
    budget_rule = "round"
    published_render = "markers"


@register_selector(FULL_CONTEXT)
@dataclass(frozen=True)
class FullContext(_Positional):
    """All turns; the uncompressed reference condition."""

    name = FULL_CONTEXT

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        return list(range(len(turns)))


@register_selector("recency")
@dataclass(frozen=True)
class Recency(_Positional):
    """Indices ``max(0, n - k) .. n - 1``."""

    name = "recency"

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        n = len(turns)
        return list(range(max(0, n - k), n))


@register_selector("first_n")
@dataclass(frozen=True)
class FirstN(_Positional):
    """Indices ``0 .. min(k, n) - 1``."""

    name = "first_n"

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        return list(range(min(max(k, 0), len(turns))))


def random_seed_for(selector_seed: int, probe_id: str) -> int:
    """``int(sha256(f"{selector_seed}|{probe_id}")[:16 hex], 16) mod 2**32`` (spec §3.11)."""
    digest = hashlib.sha256(f"{selector_seed}|{probe_id}".encode()).hexdigest()
    return int(digest[:16], 16) % (2**32)


@register_selector("random")
@dataclass
class RandomTurns:
    """``sorted(Random(seed).sample(range(n), min(k, n)))`` seeded per probe id.

    Parameters: ``seed`` - the selector seed (42 gives the paper's ``random_seed42``).
    """

    seed: int = 42
    name: str = field(init=False)
    budget_rule = "round"
    published_render = "markers"

    def __post_init__(self) -> None:
        self.name = f"random_seed{self.seed}"

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        n = len(turns)
        rng = random.Random(random_seed_for(self.seed, probe_id))
        return sorted(rng.sample(range(n), min(max(k, 0), n)))


def _random_factory(seed: int) -> Callable[[], TurnSelector]:
    def factory() -> TurnSelector:
        return RandomTurns(seed=seed)

    factory.__doc__ = f"``random`` with selector seed {seed}."
    return factory


for _seed in RANDOM_SELECTOR_SEEDS:
    register_selector(f"random_seed{_seed}")(_random_factory(_seed))


def uniform_stride_indices(n: int, k: int) -> list[int]:
    """Evenly spaced indices (spec §3.11): ``min(n-1, round(i * n / k))`` for ``i < k``."""
    if n == 0 or k <= 0:
        return []
    if k >= n:
        return list(range(n))
    step = n / k
    return sorted({min(n - 1, round(i * step)) for i in range(k)})


@register_selector("uniform_stride")
@dataclass(frozen=True)
class UniformStride(_Positional):
    """Every ``n/k``-th turn, starting at turn 0."""

    name = "uniform_stride"

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        return uniform_stride_indices(len(turns), k)


@register_selector("first_user_recent")
@dataclass(frozen=True)
class FirstUserRecent(_Positional):
    """The first USER turn plus the ``k - 1`` highest-index other turns (matched baseline)."""

    name = "first_user_recent"
    reads_speakers = True  # the first USER turn: meaningless on KEEP-Bench sentences

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        n = len(turns)
        if n == 0 or k <= 0:
            return []
        first = next((p for p, t in enumerate(turns) if t.speaker == USER), 0)
        others = [p for p in range(n - 1, -1, -1) if p != first][: k - 1]
        return sorted([first, *others])
