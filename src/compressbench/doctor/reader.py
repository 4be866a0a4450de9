"""Check ``reader``: the configured reader's model can be reached before the first stage asks it.

One probe per backend (:data:`PROBES`): ``hf`` / ``vllm`` a local path that exists, or a Hub
id whose ``config.json`` answers (with a token for a gated model); ``openai`` every server
(``--base-url``, repeatable for a pool, else ``reader.base_url`` / ``OPENAI_BASE_URL``)
answering ``GET /models`` and listing the model; ``llamacpp`` llama-cpp-python installed and
the packaged GGUF's parts installed (or the ``.gguf`` file present). Before its probe, each
backend's declared libraries are loaded (:mod:`compressbench.readers.libraries`): a missing
module or shared library is one FAIL line naming it. The readers checked are ``params.yaml``'s
``reader`` and the reader of every generative KEEP-Bench compressor it configures (``llm``
writes with the packaged Qwen2.5-Coder-1.5B by default).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from compressbench.config import ReaderSpec
from compressbench.doctor import hub, model
from compressbench.doctor.base import FAIL, PASS, Context, Result, Skip, gib, one_line
from compressbench.readers import packaged
from compressbench.readers.libraries import ReaderSource, backend_libraries, load_failure
from compressbench.readers.smollm import MODEL_NAME

OPENAI_DEFAULT = "https://api.openai.com/v1"


def _local(src: model.Source) -> Result:
    path = Path(src.ref)
    if not path.exists():
        return Result("reader", FAIL, f"model path {path} does not exist")
    return Result("reader", PASS, f"local model {path} ({gib(model.files_size(path))})")


def _hub(ctx: Context, src: model.Source) -> Result:
    from huggingface_hub import errors

    at = f"{src.ref}@{src.revision[:8]}" if src.revision else src.ref
    tok = hub.token()
    if hub.is_gated(src.ref) and tok is None:
        text = f"{src.ref} is gated and no Hugging Face token is set (HF_TOKEN or `hf auth login`)"
        return Result("reader", FAIL, text)
    token_note = "token set" if tok else "no token (public model)"
    if hub.offline():
        try:
            hub.fetch_config(src.ref, src.revision, ctx.options.timeout)
        except OSError:
            return Result("reader", FAIL, f"HF_HUB_OFFLINE is set and {at} is not in the cache")
        return Result("reader", PASS, f"HF_HUB_OFFLINE: {at} config in the local cache")
    try:
        hub.head_config(src.ref, src.revision, ctx.options.timeout)
    except errors.GatedRepoError:
        text = f"{at}: the token has no access to this gated repo (accept its licence on the Hub)"
        return Result("reader", FAIL, text)
    except errors.RevisionNotFoundError:
        return Result("reader", FAIL, f"{at}: revision {src.revision} is not in the repo")
    except errors.RepositoryNotFoundError:
        return Result("reader", FAIL, f"{src.ref}: no such repo on {hub.endpoint()} (or private)")
    except Exception as exc:
        return Result("reader", FAIL, f"{at}: Hub {hub.endpoint()} unreachable: {one_line(exc)}")
    return Result("reader", PASS, f"{at}: config.json answers on {hub.endpoint()}; {token_note}")


def _hf(ctx: Context, spec: ReaderSpec) -> Result:
    src = model.source(spec)
    if src.kind == model.PACKAGED:
        return _llamacpp(ctx, spec)
    return _local(src) if src.kind == model.LOCAL else _hub(ctx, src)


def _vllm(ctx: Context, spec: ReaderSpec) -> Result:
    if importlib.util.find_spec("vllm") is None:
        return Result("reader", FAIL, "reader vllm: vLLM is not installed (the cuda image has it)")
    return _hf(ctx, spec)


def served_models(base_url: str, timeout: float) -> list[str]:
    """The model ids ``GET {base_url}/models`` lists (raises on any failure)."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models")
    if key := os.environ.get("OPENAI_API_KEY"):
        request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        body = json.loads(resp.read().decode("utf-8"))
    return [str(m.get("id")) for m in body.get("data", []) if isinstance(m, dict)]


def _why(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(getattr(exc.reason, "strerror", None) or exc.reason)
    return one_line(exc)


def _openai(ctx: Context, spec: ReaderSpec) -> Result:
    urls = ctx.options.base_urls or (
        spec.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT,
    )
    for i, url in enumerate(urls):
        of = f" (server {i + 1} of {len(urls)})" if len(urls) > 1 else ""
        try:
            listed = served_models(url, ctx.options.timeout)
        except Exception as exc:
            return Result("reader", FAIL, f"{url}/models unreachable{of}: {_why(exc)}")
        if spec.model not in listed:
            text = f"{url} answers but does not list model {spec.model!r}{of}; it lists: "
            return Result("reader", FAIL, text + (", ".join(listed[:5]) or "nothing"))
    urls_text = ", ".join(urls)
    return Result("reader", PASS, f"{len(urls)} server(s) list {spec.model!r}: {urls_text}")


def _llamacpp(ctx: Context, spec: ReaderSpec) -> Result:
    src = model.source(spec)
    if spec.backend == "llamacpp":
        if importlib.util.find_spec("llama_cpp") is None:
            return Result(
                "reader", FAIL, "llama-cpp-python is not installed (the README's install)"
            )
        if spec.n_gpu_layers:
            import llama_cpp

            if not llama_cpp.llama_supports_gpu_offload():
                text = (
                    f"n_gpu_layers {spec.n_gpu_layers} but this llama-cpp-python has no GPU "
                    'offload (reinstall with CMAKE_ARGS="-DGGML_CUDA=on")'
                )
                return Result("reader", FAIL, text)
    if src.kind == model.LOCAL:
        return _local(src)
    found = packaged.lookup(src.ref)
    assert found is not None
    try:
        parts = packaged.part_paths(found)
    except packaged.PackagedModelError as exc:
        return Result("reader", FAIL, str(exc))
    except RuntimeError as exc:  # SmolLM2's distribution without its file
        return Result("reader", FAIL, f"reader model {src.ref!r}: {exc}")
    total = sum(p.stat().st_size for p in parts)
    joined = model.cached(ctx, src, total) == total
    state = (
        "joined in the cache" if joined else f"{len(parts)} parts installed, joined on first use"
    )
    return Result("reader", PASS, f"packaged {found.name} ({gib(total)}): {state}")


#: backend -> how to reach its model.
PROBES: dict[str, Callable[[Context, ReaderSpec], Result]] = {
    "hf": _hf,
    "vllm": _vllm,
    "openai": _openai,
    "llamacpp": _llamacpp,
}


def keep_readers(ctx: Context) -> list[tuple[str | None, ReaderSpec]]:
    """(where, spec) of each generative KEEP-Bench compressor's reader in ``params.yaml`` (its
    methods come through the shared method registry; a generative one declares its reader)."""
    from compressbench.compress.registry import get_method

    out: list[tuple[str | None, ReaderSpec]] = []
    for name, params in ctx.params.block("keepbench").compressors.items():
        method = get_method(name, params)
        found = method.reader_source() if isinstance(method, ReaderSource) else None
        if found is not None:
            backend, model = found
            spec = dataclasses.replace(ctx.reader, backend=backend, model=model or MODEL_NAME)
            out.append((f"keepbench.compressors.{name}", spec))
    return out


def _check_one(ctx: Context, where: str | None, spec: ReaderSpec) -> Result:
    """``where``: None for ``params.yaml``'s reader, else the KEEP compressor that asks it."""
    label = f"{where} ({spec.backend}): " if where else f"reader {spec.backend}: "
    failed = load_failure(backend_libraries(spec.backend))
    if failed is not None:
        return Result("reader", FAIL, label + failed)
    probe = PROBES.get(spec.backend)
    if probe is None:
        raise Skip(f"no reachability probe for reader backend {spec.backend!r}")
    found = probe(ctx, spec)
    return found if where is None else dataclasses.replace(found, summary=label + found.summary)


def check_reader(ctx: Context) -> Result:
    """Every reader the pipeline asks loads its libraries and reaches its model; the first
    that does not is the FAIL line. A KEEP reader that is ``reader`` itself is checked once."""
    same = (ctx.reader.backend, ctx.reader.model)
    keep = [(w, s) for w, s in keep_readers(ctx) if (s.backend, s.model) != same]
    results = [_check_one(ctx, where, spec) for where, spec in [(None, ctx.reader), *keep]]
    for result in results:
        if result.status != PASS:
            return result
    return Result("reader", PASS, "; ".join(r.summary for r in results))
