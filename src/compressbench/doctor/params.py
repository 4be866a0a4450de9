"""Check ``params``: the parameters the other checks read are valid; names the configured reader."""

from __future__ import annotations

from compressbench.doctor.base import FAIL, PASS, Context, Result


def reader_label(ctx: Context) -> str:
    """``hf meta-llama/Llama-3.1-8B-Instruct@0e9e39f2`` (backend, model, short revision)."""
    spec = ctx.reader
    rev = f"@{spec.revision[:8]}" if spec.revision else ""
    return f"{spec.backend} {spec.model}{rev}"


def check_params(ctx: Context) -> Result:
    path = ctx.options.params
    if ctx.params_error is not None:
        return Result("params", FAIL, ctx.params_error)
    spec = ctx.reader
    figures = {
        "file": str(path),
        "backend": spec.backend,
        "model": spec.model,
        "revision": spec.revision,
        "datasets": list(ctx.params.datasets),
        "methods": len(ctx.params.methods),
    }
    summary = (
        f"{path}: reader {reader_label(ctx)}; datasets {', '.join(ctx.params.datasets)}; "
        f"{len(ctx.params.methods)} methods"
    )
    return Result("params", PASS, summary, figures)
