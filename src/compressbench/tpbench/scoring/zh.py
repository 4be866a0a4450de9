"""RiSAWOZ P1 scorer (spec §1.7): the P1 rule with the Chinese tokeniser.

RiSAWOZ P2 needs nothing special: it is the ordinary P2 scorer with dataset ``risawoz``.
"""

from __future__ import annotations

from compressbench.text.tokens import zh_tokens
from compressbench.tpbench.scoring.p1 import P1Scores, score_p1, score_p1_text


def score_p1_zh(
    prediction: object, gold: object, *, abstain: bool = False, error: bool = False
) -> P1Scores:
    """P1 scores with CJK-character tokens (§1.7); abstentions score 0 (the zh guard)."""
    return score_p1(prediction, gold, abstain=abstain, error=error, tokenize=zh_tokens)


def score_p1_zh_text(text: object, gold: object) -> P1Scores:
    """Score raw reader text with the P1 parser and the Chinese tokeniser."""
    return score_p1_text(text, gold, tokenize=zh_tokens)


def is_chinese_dataset(dataset: object) -> bool:
    """RiSAWOZ is the Chinese dataset whose P1 uses :func:`score_p1_zh`."""
    return isinstance(dataset, str) and dataset.lower().startswith("risawoz")
