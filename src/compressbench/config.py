r"""Typed, validated view of ``params.yaml`` (every pipeline knob lives there).

Validation errors name the file and the field (``reader.batch_size``) and say what is wrong
(for a name: the allowed values). Unknown keys are errors at every level: a misspelt knob
must not be silently ignored. Reader backends come from the reader registry, so a backend
registered at run time (an in-process test reader) is valid. This module validates the blocks
both benchmarks share (corpora, datasets, seeds, ratios, reader, methods, tracking) and imports
no benchmark: each benchmark registers the top-level keys it owns as :class:`ParamBlock`\ s
under the ``compressbench.param_blocks`` entry point (``pyproject.toml``), as method families
are registered (TPBench's ``probes``, ``p3_ratio``, ``scoring``, ``retention``, ``deletions``,
``judge``: :mod:`compressbench.tpbench.pipeline_spec`; KEEP-Bench's ``keepbench``:
:mod:`compressbench.keepbench.pipeline_spec`). A block's value is read with its typed accessor,
``RETENTION.of(params)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

import yaml

from compressbench.corpora.loaders import CORPUS_LOADERS
from compressbench.errors import InputError
from compressbench.params_check import Checker, spec_keys
from compressbench.readers.decode_modes import DECODE_MODES, DEFAULT_DECODE_MODE
from compressbench.readers.defaults import (
    DEFAULT_ATTN_IMPLEMENTATION,
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_INPUT_TOKENS,
)
from compressbench.readers.registry import (
    model_problem,
    reader_names,
    reader_parameters,
    structured_backends,
)

T = TypeVar("T")
BLOCK_GROUP = "compressbench.param_blocks"  # entry points naming a tuple of ParamBlocks

CORPUS_SOURCES = ("builtin", "local", "upstream")
RENDERS = ("published", "markers")
DTYPES = ("auto", "float32", "float16", "bfloat16")
ATTN_IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention")
# Keys a corpus entry may hold, by its source (anything else would be silently ignored).
CORPUS_KEYS: dict[str, tuple[str, ...]] = {
    "builtin": ("source", "splits"),
    "local": ("source", "loader", "path", "splits"),
    "upstream": ("source", "loader", "splits"),
}


@dataclass(frozen=True)
class CorpusSpec:
    name: str
    source: str
    loader: str = "builtin"
    path: str | None = None
    splits: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ReaderSpec:
    backend: str = "hf"
    model: str = "smollm2"
    revision: str | None = None  # Hub revision (commit) of `model`; None: the default branch
    dtype: str = "float32"
    attn_implementation: str = DEFAULT_ATTN_IMPLEMENTATION
    batch_size: int = DEFAULT_BATCH_SIZE
    decode_mode: str = DEFAULT_DECODE_MODE  # hf: paper (as published) or fast (static cache)
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS
    # Answer budgets (max new tokens) by question type; empty: the benchmark's defaults (TPBench:
    # one per probe type, filled in by its ``probes`` block).
    max_new_tokens: dict[str, int] = field(default_factory=dict)
    base_url: str | None = None
    concurrency: int = 4
    max_retries: int = 6
    n_ctx: int = 4096  # llamacpp: context size (prompt + answer)
    n_threads: int | None = None  # llamacpp: CPU threads (None: up to 8, one per core)
    n_gpu_layers: int = 0  # llamacpp: layers offloaded to a GPU (-1: all; needs a CUDA build)
    structured: bool = False  # llamacpp: answers constrained to the probe's answer schema
    worker: bool = False  # reader stages run in one long-lived process (commands/worker.py)
    # Keyword parameters of the backend that have no key above (the mock's mode, its table)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackingSpec:
    uri: str | None = None
    experiment: str = "compressbench-tpbench"


@dataclass(frozen=True)
class Params:
    corpora: dict[str, CorpusSpec]
    datasets: tuple[str, ...]
    seeds: tuple[int, ...]
    ratios: tuple[float, ...]
    n_per_cell: int
    methods: tuple[str, ...]
    render: str
    reader: ReaderSpec
    tracking: TrackingSpec
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The benchmarks' own top-level keys (ParamBlock.key -> its parsed value), in params order.
    blocks: Mapping[str, Any] = field(default_factory=dict)
    source: str = "params.yaml"

    def block(self, key: str) -> Any:
        """The parsed value of a registered block's top-level key (``ParamBlock.of`` types it)."""
        try:
            return self.blocks[key]
        except KeyError:
            registered = ", ".join(self.blocks)
            raise KeyError(f"params has no block {key!r}; registered: {registered}") from None

    def value(self, key: str) -> Any:
        """A top-level key's value: a shared field or a registered block."""
        return self.block(key) if key in self.blocks else getattr(self, key)

    def as_dict(self) -> dict[str, Any]:
        """Every top-level key -> its value as plain data (for MLflow), ``source`` left out."""
        shared = {f: dataclasses.asdict(self)[f] for f in shared_keys()}
        blocks = {k: _plain(v) for k, v in self.blocks.items()}
        return shared | blocks

    def lookup(self, path: str) -> Any:
        """A dotted key's value: ``keepbench.compressors`` is the block's ``compressors``."""
        head, *rest = path.split(".")
        value = self.value(head)
        for part in rest:
            value = getattr(value, part)
        return value

    def corpus(self, name: str) -> CorpusSpec:
        try:
            return self.corpora[name]
        except KeyError:
            raise InputError(
                f"unknown corpus {name!r}; defined: {', '.join(self.corpora)}",
                file=self.source,
                field="datasets",
            ) from None


def _corpus(c: Checker, name: str, raw: Any) -> CorpusSpec:
    where = f"corpora.{name}"
    c.typed(raw, dict, where)
    source = c.choice(raw.get("source"), CORPUS_SOURCES, f"{where}.source")
    c.mapping(raw, CORPUS_KEYS[source], where)
    loader = "builtin"
    if source != "builtin":
        loader = c.choice(raw.get("loader"), sorted(CORPUS_LOADERS), f"{where}.loader")
    path = raw.get("path")
    if source == "local":
        c.typed(path, str, f"{where}.path")
    splits = raw.get("splits")
    split_tuple = None if splits is None else c.items(splits, str, f"{where}.splits")
    return CorpusSpec(name=name, source=source, loader=loader, path=path, splits=split_tuple)


def _reader(c: Checker, raw: Any) -> ReaderSpec:
    """The ``reader`` block; which names ``max_new_tokens`` may hold is the benchmark's check
    (TPBench's ``probes`` block), here each budget is a positive integer."""
    default = ReaderSpec()
    raw = c.mapping(raw, spec_keys(ReaderSpec), "reader")
    raw_tokens = c.typed(raw.get("max_new_tokens") or {}, dict, "reader.max_new_tokens")
    new_tokens = {
        str(key): c.positive(value, f"reader.max_new_tokens.{key}")
        for key, value in raw_tokens.items()
    }

    def get(key: str) -> Any:
        return raw.get(key, getattr(default, key))

    backend = c.choice(get("backend"), reader_names(), "reader.backend")
    structured = bool(c.typed(get("structured"), bool, "reader.structured"))
    if structured and backend not in structured_backends():
        raise c.fail("reader.structured", f"needs backend {' or '.join(structured_backends())}")
    model = c.typed(get("model"), str, "reader.model")
    problem = model_problem(backend, model)
    if problem is not None:
        raise c.fail("reader.model", problem)
    mode = c.choice(get("decode_mode"), tuple(DECODE_MODES), "reader.decode_mode")
    if mode != DEFAULT_DECODE_MODE and "decode_mode" not in reader_parameters(backend):
        raise c.fail("reader.decode_mode", f"{mode} decoding is the hf backend's, not {backend}'s")
    options = c.typed(raw.get("options") or {}, dict, "reader.options")
    for key in options:
        if key in spec_keys(ReaderSpec) or key not in reader_parameters(backend):
            raise c.fail(f"reader.options.{key}", f"not a parameter only backend {backend} takes")
    return ReaderSpec(
        backend=backend,
        model=model,
        revision=c.optional_str(get("revision"), "reader.revision"),
        dtype=c.choice(get("dtype"), DTYPES, "reader.dtype"),
        attn_implementation=c.choice(
            get("attn_implementation"), ATTN_IMPLEMENTATIONS, "reader.attn_implementation"
        ),
        batch_size=c.positive(get("batch_size"), "reader.batch_size"),
        decode_mode=mode,
        max_input_tokens=c.positive(get("max_input_tokens"), "reader.max_input_tokens"),
        max_new_tokens=new_tokens,
        base_url=c.optional_str(get("base_url"), "reader.base_url"),
        concurrency=c.positive(get("concurrency"), "reader.concurrency"),
        max_retries=c.positive(get("max_retries"), "reader.max_retries", minimum=0),
        n_ctx=c.positive(get("n_ctx"), "reader.n_ctx", minimum=64),
        n_threads=c.optional_positive(get("n_threads"), "reader.n_threads"),
        n_gpu_layers=int(c.typed(get("n_gpu_layers"), int, "reader.n_gpu_layers")),
        structured=structured,
        worker=bool(c.typed(get("worker"), bool, "reader.worker")),
        options={str(k): v for k, v in options.items()},
    )


def _tracking(c: Checker, raw: Any) -> TrackingSpec:
    raw = c.mapping(raw, spec_keys(TrackingSpec), "tracking")
    experiment = c.typed(raw.get("experiment", TrackingSpec.experiment), str, "tracking.experiment")
    if not experiment.strip():
        raise c.fail("tracking.experiment", "must not be empty")
    return TrackingSpec(uri=c.optional_str(raw.get("uri"), "tracking.uri"), experiment=experiment)


def _method_params(c: Checker, raw: Any) -> dict[str, dict[str, Any]]:
    raw = {} if raw is None else c.typed(raw, dict, "method_params")
    out = {}
    for name, mp in raw.items():
        out[str(name)] = dict(c.typed({} if mp is None else mp, dict, f"method_params.{name}"))
    return out


@dataclass(frozen=True)
class ParamBlock(Generic[T]):
    """A top-level ``params.yaml`` key a benchmark owns: how to parse it and a typed accessor.

    ``parse(checker, raw, params)`` gets the key's raw value (None when absent) and the params
    parsed so far (the shared keys, then the blocks registered before it) and returns the
    block's value. ``settle(checker, params)``, when given, runs once every block is parsed and
    returns ``params`` completed or checked against this block (TPBench's ``probes`` fills and
    checks ``reader.max_new_tokens``).
    """

    key: str
    parse: Callable[[Checker, Any, Params], T]
    settle: Callable[[Checker, Params], Params] | None = None
    # Source paths under src/compressbench parsing it reads: code of every stage (BASE_CODE).
    code: tuple[str, ...] = ()

    def of(self, params: Any) -> T:
        """This block's value in ``params`` (a :class:`Params` or a stage's view of one)."""
        return cast(T, params.block(self.key))


_blocks: list[ParamBlock[Any]] = []
_blocks_loaded = False


def register_blocks(*blocks: ParamBlock[Any]) -> None:
    """Add parameter blocks (a block parses after those registered before it)."""
    for block in blocks:
        if block.key in shared_keys() or any(b.key == block.key for b in _blocks):
            raise ValueError(f"params.yaml key {block.key!r} registered twice")
        _blocks.append(block)


def param_blocks() -> list[ParamBlock[Any]]:
    """Every registered block: those the ``compressbench.param_blocks`` entry points name (in
    entry-point name order), then any registered in process."""
    global _blocks_loaded
    if not _blocks_loaded:
        _blocks_loaded = True
        from importlib.metadata import entry_points

        known = {b.key for b in _blocks}
        points = sorted(entry_points(group=BLOCK_GROUP), key=lambda p: p.name)
        loaded = [b for point in points for b in point.load() if b.key not in known]
        _blocks[:0] = loaded
    return list(_blocks)


def shared_keys() -> tuple[str, ...]:
    """The top-level keys this module parses itself."""
    return tuple(f.name for f in dataclasses.fields(Params) if f.name not in ("blocks", "source"))


def param_keys() -> tuple[str, ...]:
    """Every top-level ``params.yaml`` key: the shared ones, then the registered blocks'."""
    return (*shared_keys(), *(b.key for b in param_blocks()))


def _plain(value: Any) -> Any:
    is_instance = dataclasses.is_dataclass(value) and not isinstance(value, type)
    return dataclasses.asdict(value) if is_instance else value


def parse_params(raw: Any, source: str = "params.yaml") -> Params:
    """Validate a loaded params mapping into :class:`Params`."""
    c = Checker(source)
    raw = c.mapping(raw, list(param_keys()), "(top level)")
    for key in ("corpora", "datasets", "methods"):
        if key not in raw:
            raise c.fail(key, "missing")
    corpora_raw = c.typed(raw["corpora"], dict, "corpora")
    if not corpora_raw:
        raise c.fail("corpora", "must define at least one corpus")
    corpora = {str(name): _corpus(c, str(name), spec) for name, spec in corpora_raw.items()}
    datasets = c.items(raw["datasets"], str, "datasets")
    for i, name in enumerate(datasets):
        if name not in corpora:
            raise c.fail(
                f"datasets[{i}]",
                f"{name!r} is not defined under corpora (defined: {', '.join(corpora)})",
            )
    params = Params(
        corpora=corpora,
        datasets=datasets,
        seeds=c.items(raw.get("seeds", [42]), int, "seeds"),
        ratios=c.ratios(raw.get("ratios", [0.3]), "ratios"),
        n_per_cell=c.positive(raw.get("n_per_cell", 200), "n_per_cell"),
        methods=c.items(raw["methods"], str, "methods"),
        render=c.choice(raw.get("render", "published"), RENDERS, "render"),
        reader=_reader(c, raw.get("reader")),
        method_params=_method_params(c, raw.get("method_params")),
        tracking=_tracking(c, raw.get("tracking")),
        source=source,
    )
    blocks = param_blocks()
    for block in blocks:
        value = block.parse(c, raw.get(block.key), params)
        params = dataclasses.replace(params, blocks={**params.blocks, block.key: value})
    # Method names and method_params against the registry (imported here: it is light, but
    # importing config alone should not load every method family).
    from compressbench.compress.registry import check_methods

    check_methods(params.methods, params.method_params, source=source)
    for block in blocks:
        if block.settle is not None:
            params = block.settle(c, params)
    return params


def load_params(path: str | Path = "params.yaml") -> Params:
    """Read and validate ``params.yaml``."""
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("parameters file not found", file=str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"unreadable ({exc})", file=str(p)) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=str(p)) from exc
    return parse_params(raw, str(p))
