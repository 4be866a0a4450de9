"""KEEP-Bench prompt templates: versioned ``{{VAR}}`` text files, replaceable without code.

``compress/<version>/`` holds the ``llm`` compressor's prompts, ``judge/<version>/`` the
proposition judge's. The paper's Appendix E text is not available here, so ``v1`` is written
for this project from the paper's description (§4.1, C.2, D.2); the official text can be
dropped into a folder of the same file names and named with ``prompt_dir``
(:mod:`compressbench.keepbench.prompts.templates`).
"""
