"""Attention pair counts (KEEP-Bench paper, App. C.4, eqs. 2-3)."""

from __future__ import annotations


def pairs_causal(t: int) -> int:
    """``A_inf(T) = T(T+1)/2``: query-key pairs of causal attention over ``T`` positions."""
    _check(t)
    return t * (t + 1) // 2


def pairs_window(t: int, window: int) -> int:
    """``A_w(T)``: causal pairs when each position sees at most ``window`` positions
    (itself included): ``A_inf(T)`` for ``T <= w``, else ``w*T - w(w-1)/2``."""
    _check(t)
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if t <= window:
        return pairs_causal(t)
    return window * t - window * (window - 1) // 2


def _check(t: int) -> None:
    if t < 0:
        raise ValueError(f"sequence length must be >= 0, got {t}")
