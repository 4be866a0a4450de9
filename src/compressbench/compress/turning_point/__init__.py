"""The turning-point compressor: sub-turn span selection that keeps revisions and the goal."""

from compressbench.compress.turning_point.method import NAMED_VARIANTS, TurningPointMethod

__all__ = ["NAMED_VARIANTS", "TurningPointMethod"]
