"""KEEP-Bench compressors: one file each, a registry, the ``keep_compressor`` Method family.

``base`` (KEEP cases as Method sources, budgets, extractive/generative plumbing), ``registry``
(the leaf registry), ``family`` (every method by name; :func:`keep_method`), ``selectors``
(TPBench turn selectors on sentences), ``presses`` + ``press_span`` (TPBench KV presses on
cases, read back as kept context tokens), ``backend`` (the shared reader of generative ones), and
one file per compressor: ``llm`` (+ ``llm_prompt``), ``recomp_extractive``,
``recomp_abstractive``, ``exit``, ``brief_pro``.
"""
