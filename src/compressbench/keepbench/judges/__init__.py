"""KEEP-Bench proposition judges (D.2): ``calls`` (which prompt labels which proposition,
verdict schemas, no-call shortcuts), ``judge`` (shared machinery, the LLM backend, verdict
rows), ``openai_reader`` (reasoning-judge request options), ``lexical`` (the offline
approximation), ``registry`` (judges by name).
"""
