"""Dialogue corpora: one model, loaders by name."""
