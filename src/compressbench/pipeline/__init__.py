"""The pipeline engine: stage declarations, dvc.yaml generation, code fingerprints, path
templates, the answer-cache location (no benchmark's stages: those live in each benchmark's
``stages`` package)."""
