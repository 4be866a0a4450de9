"""The turning-point compressor: sub-turn span selection that keeps revisions and the goal."""

from compressbench.compress.turning_point.method import TurningPointMethod
from compressbench.compress.turning_point.variants import NAMED_VARIANTS

__all__ = ["NAMED_VARIANTS", "TurningPointMethod"]
