"""Reader defaults, named once: what ``params.yaml``'s ``reader`` block and every backend,
press and judge use when nothing else is given."""

from __future__ import annotations

# Prompt tokens kept after left truncation (the paper's reader setting, spec §6).
DEFAULT_MAX_INPUT_TOKENS = 7168
# The hf reader's attention kernel and prompts per generate() batch.
DEFAULT_ATTN_IMPLEMENTATION = "eager"
DEFAULT_BATCH_SIZE = 1
