"""Helpers shared by the tests (importable as ``support.*``: pyproject's pytest ``pythonpath``
puts tests/ on ``sys.path``). Fixtures built on them live in the conftest.py files."""
