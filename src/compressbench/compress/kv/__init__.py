"""KV-cache compression through kvpress, one module per job.

KV-cache methods leave the displayed dialogue intact and prune the reader's stored keys and
values while it prefills (TPBench §5, §6.4; spec §3.10, §6). Their budget unit is cache
entries: a press keeps the fraction ``r`` of the entries it compresses, so
``compression_ratio = 1 - r`` (the fraction dropped).

* :mod:`.record` - :class:`~.record.KVRecord` (what one generation under a press did), modes.
* :mod:`.build` - any kvpress press by class name or dict spec, and back to a spec.
* :mod:`.catalog` - kvpress's press classes and their fields, read from its source without
  importing it (cheap validation of ``params.yaml``).
* :mod:`.presets` - the preset registry (``snapkv``...); the presets themselves live one file
  each in :mod:`compressbench.compress.presses`, which import this registry.
* :mod:`.positions` - which cache positions a press kept (row matching and head voting).
* :mod:`.generate` - greedy generation under a press (prefill / question / decode loop).
* :mod:`.hook` - :class:`~.hook.KVPressHook`, the press hook of the HF reader.

Nothing here caches, logs or retries: the pipeline does.
"""
