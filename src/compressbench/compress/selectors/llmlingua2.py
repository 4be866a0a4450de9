"""LLMLingua-2 turn selector (TPBench §5; Pan et al., 2024, "LLMLingua-2").

The LLMLingua-2 token classifier labels every word of the dialogue keep (1) or drop (0) at its
own rate (0.5 in TPBench; unrelated to the turn budget). A turn's score is the mean of its
words' binary labels; the ``k`` highest-scoring turns are kept (ties -> lower index) and
returned ascending.

Only the labels are used: ``PromptCompressor.compress_prompt_llmlingua2(...,
return_word_label=True)`` returns each word with its label, and the label field is read back
(with control-character separators so no word can be mistaken for one). No number is ever
parsed out of the compressed text or its rate strings - reading scores from the compressed
text was the bug the TPBench authors corrected.

How words are labelled: the dialogue is passed as one context, rendered as the selector
publishes it (turn texts joined by a single space). llmlingua chunks it into <= 512-token
pieces (ending at ``.``) and thresholds each piece at its rate, so turns compete within a piece
rather than each turn keeping half of its own words (which would give every turn about 0.5).
Words are mapped back to turns by walking the joined text in order. The TPBench release does
not record which of the two layouts produced its frozen contexts; this is a judgement call.

Budget: ``k = max(1, floor(n_turns * r))`` (computed by the caller). Published rendering:
``plain``.

Parameters
----------
model:
    Hub id or local directory of an LLMLingua-2 token-classification model. Default
    ``microsoft/llmlingua-2-xlm-roberta-large-meetingbank``. llmlingua picks its word-merging
    rule from the *name*: a local path must contain ``xlm-roberta-large`` (SentencePiece) or
    ``bert-base-multilingual-cased`` (WordPiece).
rate:
    LLMLingua-2's own keep rate. Default 0.5.
device:
    ``device_map`` for llmlingua. Default ``"cpu"``.
max_batch_size:
    llmlingua's chunk batch size. Default 50 (llmlingua's own default).

The compressor is loaded lazily on first use and shared by every selector built with the same
``(model, device, max_batch_size)`` in the process. tiktoken (which llmlingua builds in its
constructor) is pointed at the encodings shipped by ``bpe-openai`` first, so this works offline.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compressbench.compress.selectors.base import (
    FeatureMemo,
    register_selector,
    select_by_content,
    top_k,
)
from compressbench.corpora.model import Turn

DEFAULT_MODEL = "microsoft/llmlingua-2-xlm-roberta-large-meetingbank"
_WORD_SEP = "\x1e"  # ASCII record separator: never inside a tokenizer word
_LABEL_SEP = "\x1f"  # ASCII unit separator
_SEARCH_SLACK = 64  # characters a word may start after the previous one (normalisation, <unk>)
NAME_PARTS = ("xlm-roberta-large", "bert-base-multilingual-cased")  # llmlingua's word rules


@functools.lru_cache(maxsize=2)
def load_compressor(model: str, device: str, max_batch_size: int) -> Any:
    """An llmlingua ``PromptCompressor`` in LLMLingua-2 mode, loaded once per arguments."""
    from compressbench.compress.offline_tiktoken import ensure_tiktoken_cache

    ensure_tiktoken_cache()
    from llmlingua import PromptCompressor

    return PromptCompressor(
        model_name=model,
        use_llmlingua2=True,
        device_map=device,
        llmlingua2_config={"max_batch_size": max_batch_size},
    )


def parse_word_labels(labelled: str) -> list[tuple[str, int]]:
    """``(word, label)`` pairs from llmlingua's ``fn_labeled_original_prompt`` written with
    this module's separators."""
    pairs: list[tuple[str, int]] = []
    if not labelled:
        return pairs
    for item in labelled.split(_WORD_SEP):
        word, sep, label = item.rpartition(_LABEL_SEP)
        if not sep or label not in ("0", "1"):
            raise ValueError(f"malformed llmlingua word label {item!r}")
        pairs.append((word, int(label)))
    return pairs


def words_to_turns(words: Sequence[str], texts: Sequence[str]) -> list[int]:
    """Turn position of each word of ``" ".join(texts)``, by an in-order walk of that text.

    A word is looked for from the current cursor within a short slack; a word that cannot be
    found (tokenizer normalisation, unknown pieces) stays with the turn under the cursor.
    """
    joined = " ".join(texts)
    starts: list[int] = []
    pos = 0
    for text in texts:
        starts.append(pos)
        pos += len(text) + 1

    def turn_at(char: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:  # last start <= char
            mid = (lo + hi + 1) // 2
            if starts[mid] <= char:
                lo = mid
            else:
                hi = mid - 1
        return lo

    out: list[int] = []
    cursor = 0
    for raw in words:
        word = raw.lstrip("\u2581").strip()
        where = joined.find(word, cursor, cursor + len(word) + _SEARCH_SLACK) if word else -1
        if where >= 0:
            out.append(turn_at(where))
            cursor = where + len(word)
        else:
            out.append(turn_at(min(cursor, max(0, len(joined) - 1))))
    return out


def turn_scores(labels: Sequence[int], turn_of_word: Sequence[int], n_turns: int) -> list[float]:
    """Mean binary label per turn (0.0 for a turn with no words)."""
    sums = [0] * n_turns
    counts = [0] * n_turns
    for label, turn in zip(labels, turn_of_word, strict=True):
        sums[turn] += label
        counts[turn] += 1
    return [s / c if c else 0.0 for s, c in zip(sums, counts, strict=True)]


@register_selector("llmlingua2")
@dataclass
class LLMLingua2:
    """Turns ranked by their mean LLMLingua-2 word-keep label (see module docstring)."""

    model: str = DEFAULT_MODEL
    rate: float = 0.5
    _memo: FeatureMemo = field(default_factory=FeatureMemo, init=False, repr=False, compare=False)
    device: str = "cpu"
    max_batch_size: int = 50

    name = "llmlingua2"
    budget_rule = "floor"
    published_render = "plain"

    def __post_init__(self) -> None:
        if not 0.0 < self.rate <= 1.0:
            raise ValueError(f"rate must be in (0, 1], got {self.rate}")
        if not any(part in self.model for part in NAME_PARTS):
            raise ValueError(
                f"llmlingua picks LLMLingua-2's word rule from the model name; {self.model!r}"
                f" contains none of {NAME_PARTS} (rename the local directory)"
            )

    def word_labels(self, texts: Sequence[str]) -> list[tuple[str, int]]:
        """``(word, keep label)`` for every word of the space-joined turns."""
        joined = " ".join(texts)
        if not joined.strip():
            return []
        compressor = load_compressor(self.model, self.device, self.max_batch_size)
        res = compressor.compress_prompt_llmlingua2(
            [joined],
            rate=self.rate,
            use_context_level_filter=False,
            use_token_level_filter=True,
            return_word_label=True,
            word_sep=_WORD_SEP,
            label_sep=_LABEL_SEP,
            force_tokens=[],
            drop_consecutive=False,
        )
        return parse_word_labels(res.get("fn_labeled_original_prompt", ""))

    def scores(self, turns: Sequence[Turn]) -> list[float]:
        texts = [t.text for t in turns]
        pairs = self.word_labels(texts)
        owner = words_to_turns([w for w, _ in pairs], texts)
        return turn_scores([lab for _, lab in pairs], owner, len(texts))

    def select(self, turns: Sequence[Turn], k: int, probe_id: str) -> list[int]:
        return select_by_content(turns, k, self._memo, lambda: self.scores(turns), top_k)
