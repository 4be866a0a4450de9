"""The TPBench semantic-equivalence judge (P1 semantic accuracy, spec §8 H8; paper §6.1.1).

Modules: ``prompt`` (the released prompt, verbatim; the verdict schema; the input message),
``judge`` (a judge on any OpenAI-compatible server, cached, retried), ``p1`` (scored P1 rows ->
verdict rows -> semantic accuracy), ``ae`` (answer-equivalence validation sets with human
labels), ``track`` (a judge run in MLflow).
"""
