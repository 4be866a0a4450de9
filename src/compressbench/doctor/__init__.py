"""``compressbench doctor``: what a GPU box needs before a long run, one checked line each.

:mod:`~compressbench.doctor.checks` lists the checks (params, gpu, versions, image, libraries,
reader, disk, gpu-memory, tracking) and runs them; each lives in its own module and reports a
:class:`~compressbench.doctor.base.Result` (PASS, FAIL or SKIP with the reason and figures).
"""
