"""The benchmark's pipeline stages (one module per DVC stage, registered in
:mod:`compressbench.stages`)."""
