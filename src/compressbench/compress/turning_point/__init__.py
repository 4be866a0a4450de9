"""The turning-point compressor: sub-turn span selection that keeps revisions and the goal."""

from compressbench.compress.turning_point.method import TurningPointMethod

__all__ = ["TurningPointMethod"]
