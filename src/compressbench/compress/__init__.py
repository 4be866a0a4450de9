"""Compression methods: one contract (:mod:`.method`), one registry by name (:mod:`.registry`).

Turn selectors (:mod:`.selectors`, one file each) and KV-cache presses (:mod:`.presses`
presets, any kvpress class, generation under a press in :mod:`.kv`) meet the contract through
:mod:`.selector_method` and :mod:`.press_method`; budgets, rendering and cost records are
shared by all of them.
"""
