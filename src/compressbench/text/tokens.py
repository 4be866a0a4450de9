"""Content tokenisers of TPBench (spec §1.3, §1.4, §1.6, §1.7). Each returns a ``frozenset``.

* :func:`p1_tokens` - P1 / P3 content tokens (§1.3), P1 stopword list.
* :func:`overlap_tokens` - P2 diagnostic overlap tokens (§1.4), on raw text.
* :func:`lme_norm` / :func:`lme_tokens` - the LongMemEval-KU normaliser and its tokens (§1.6).
* :func:`zh_tokens` - the RiSAWOZ P1 tokeniser (§1.7): one token per CJK code point.

The stopword lists are data copied from the spec.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from compressbench.text.normalize import HMM_TIME, PUNCT, SPACES, ampm_to_24h, pad_hour


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# §1.3 (64 distinct entries; the source lists "is" twice).
P1_STOPWORDS: frozenset[str] = _words(
    """a an the is are was were be to for of in on at by with and or i you we they this that
    these those my your our user please want need would like find looking search me agent
    should next do action what it have has had will shall can could may might as from up out
    if so no not but"""
)

# §1.4 (62 entries): P2 overlap tokens and LME-KU content tokens.
OVERLAP_STOPWORDS: frozenset[str] = _words(
    """the a an of to in on for at by is are was were be been i you he she it we they me my
    your his her our their this that these those and or but if then so yes no not do does did
    have has had with without from as than also just about please thanks thank ok okay"""
)

# §1.7 small Latin stoplist of the Chinese P1 tokeniser.
ZH_LATIN_STOPWORDS: frozenset[str] = _words(
    """a an the is are was were be to for of in on at by with and or i you we they this that
    my your please want need"""
)

_ASCII_RUN = re.compile(r"[a-z0-9]+")

_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _text(value: object) -> str:
    return "" if value is None else str(value)


@lru_cache(maxsize=100_000)
def _p1_tokens(text: str) -> frozenset[str]:
    return frozenset(
        t for t in _ASCII_RUN.findall(text.lower()) if len(t) >= 2 and t not in P1_STOPWORDS
    )


def p1_tokens(value: object) -> frozenset[str]:
    """P1/P3 content tokens (§1.3): ASCII ``[a-z0-9]`` runs of the lower-cased text,
    length >= 2, not P1 stopwords. ``None`` -> empty set."""
    return _p1_tokens(_text(value))


def overlap_tokens(value: object) -> frozenset[str]:
    """P2 auxiliary overlap tokens (§1.4) of the raw text: lower-case, non-``[a-z0-9\\s]``
    characters become spaces, whitespace split, length > 1, minus the §1.4 list."""
    return frozenset(
        t
        for t in _ASCII_RUN.findall(_text(value).lower())
        if len(t) > 1 and t not in OVERLAP_STOPWORDS
    )


# §1.6: like §1.1a but the suffix is ``a``/``p``, optional ``.``, ``m``, optional ``.``; the
# trailing word boundary then lets ``9 a.m. tomorrow`` match as ``9 a.m`` (backtracking).
_LME_AMPM = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b", re.IGNORECASE)


@lru_cache(maxsize=100_000)
def _lme_norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().strip()
    text = _LME_AMPM.sub(ampm_to_24h, text)
    text = HMM_TIME.sub(pad_hour, text)
    text = PUNCT.sub(" ", text)
    return SPACES.sub(" ", text).strip()


def lme_norm(value: object) -> str:
    """LongMemEval-KU normaliser (§1.6): ``None``/booleans -> ``""``; NFKC, lower, strip;
    permissive am/pm rewrite; H:MM padding; no bare-digit rule, no aliases; punctuation and
    whitespace as §1.1 steps 4-5."""
    if value is None or isinstance(value, bool):
        return ""
    return _lme_norm(str(value))


def lme_tokens(value: object) -> frozenset[str]:
    """LME-KU content tokens (§1.6): ``[a-z0-9]+`` runs of :func:`lme_norm` text, length > 1,
    minus the §1.4 list."""
    return frozenset(
        t for t in _ASCII_RUN.findall(lme_norm(value)) if len(t) > 1 and t not in OVERLAP_STOPWORDS
    )


@lru_cache(maxsize=100_000)
def _zh_tokens(text: str) -> frozenset[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    cjk = _CJK.findall(text)
    latin = (t for t in _ASCII_RUN.findall(text) if len(t) >= 2 and t not in ZH_LATIN_STOPWORDS)
    return frozenset((*cjk, *latin))


def zh_tokens(value: object) -> frozenset[str]:
    """Chinese P1 tokens (§1.7): NFKC + lower; each CJK code point (U+3400-4DBF, U+4E00-9FFF,
    U+F900-FAFF) is a token, plus ASCII ``[a-z0-9]+`` runs of length >= 2 not in the Latin
    stoplist."""
    return _zh_tokens(_text(value))


def set_f1(gold: frozenset[str], pred: frozenset[str]) -> float:
    """Set-based token F1 (§2.2): 0 when either set is empty or nothing overlaps."""
    overlap = len(gold & pred)
    if not gold or not pred or overlap == 0:
        return 0.0
    p = overlap / len(pred)
    r = overlap / len(gold)
    return 2 * p * r / (p + r)
