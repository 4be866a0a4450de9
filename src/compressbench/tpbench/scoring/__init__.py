"""Deterministic TPBench scorers (spec §1-§2)."""
