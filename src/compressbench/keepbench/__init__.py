"""KEEP-Bench: does a compressed context still entail every evidence proposition a query needs?

Modules: ``cases`` (the one case model, sentence budgets), ``loader`` + ``release_schema``
(built-in sample, local JSON/JSONL/parquet, the release through ``datasets``; published counts),
``sentences`` (offline splitter), ``metrics`` (All-Rec, Para-Rec, Cond-Rec, case-weighted
overall, Rate, error analysis), ``rate`` (o200k token counts), ``positions`` (the 14 block
arrangements of §5.3); compressors, judges, prompts and FLOPs live in their own modules.
"""
