"""Compressors: budgets, turn selectors (registry by name), KV-cache presses."""
