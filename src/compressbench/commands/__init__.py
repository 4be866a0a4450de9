"""CLI subcommands, one module each (see ``compressbench.cli``)."""
