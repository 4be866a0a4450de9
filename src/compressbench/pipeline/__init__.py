"""The TPBench pipeline: one function per DVC stage (see ``dvc.yaml``)."""
