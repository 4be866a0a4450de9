"""Inference FLOPs of the matmuls a model runs on one case (KEEP-Bench paper, App. C.4).

Shared by both benchmarks: KEEP-Bench compressors and TPBench reader cells. Rules, from the
paper: only the large matmuls count, at 2 FLOPs per multiply-add (Q/K/V/O and FFN projections,
the two attention matmuls, cross-attention, the vocabulary projection); a KV cache is assumed;
norms, RoPE, softmax, embedding look-ups, batching and padding are left out.

Modules: :mod:`~.attention` (pair counts), :mod:`~.fields` (reading a Hugging Face
``config.json`` with located errors), :mod:`~.decoder`, :mod:`~.encoder`, :mod:`~.encdec`
(coefficients by architecture), :mod:`~.formulas` (the registry of formulas by name),
:mod:`~.amortize` (ICL prefix amortisation, eq. 7), :mod:`~.epr` (aggregation and EPR),
:mod:`~.cells` (TPBench cells).
"""
