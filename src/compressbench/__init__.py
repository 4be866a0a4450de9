"""compressbench: measure what context compression throws away (TPBench, KEEP-Bench)."""

__version__ = "0.1.0"
