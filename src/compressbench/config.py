"""Typed, validated view of ``params.yaml`` (every pipeline knob lives there).

Validation errors name the file and the field (``reader.batch_size``) and say what is wrong
(for a name: the allowed values). Unknown keys are errors at every level: a misspelt knob
must not be silently ignored. Reader backends come from the reader registry, so a backend
registered at run time (an in-process test reader) is valid. This module validates the blocks
both benchmarks share (corpora, datasets, seeds, ratios, reader, methods, tracking); each
benchmark validates its own (:mod:`compressbench.tpbench.pipeline_spec`,
:mod:`compressbench.keepbench.pipeline_spec`, the P1 judge's
:mod:`compressbench.tpbench.judge.spec`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compressbench.corpora.loaders import CORPUS_LOADERS
from compressbench.errors import InputError
from compressbench.keepbench.pipeline_spec import KeepSpec, parse_keepbench
from compressbench.params_check import Checker, spec_keys
from compressbench.readers.decode_modes import DECODE_MODES, DEFAULT_DECODE_MODE
from compressbench.readers.hf import DEFAULT_ATTN_IMPLEMENTATION, DEFAULT_BATCH_SIZE
from compressbench.readers.registry import (
    STRUCTURED_BACKENDS,
    model_problem,
    reader_names,
    reader_parameters,
)
from compressbench.tpbench.judge.spec import JudgeSpec, parse_judge
from compressbench.tpbench.pipeline_spec import (
    DeletionsSpec,
    RetentionSpec,
    ScoringSpec,
    parse_deletions,
    parse_probes,
    parse_retention,
    parse_scoring,
    probe_name,
)
from compressbench.tpbench.probe_names import PIPELINE_PROBES

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
    max_input_tokens: int = 7168
    max_new_tokens: dict[str, int] = field(default_factory=lambda: {"P1": 96, "P2": 96, "P3": 128})
    base_url: str | None = None
    concurrency: int = 4
    max_retries: int = 6
    n_ctx: int = 4096  # llamacpp: context size (prompt + answer)
    n_threads: int | None = None  # llamacpp: CPU threads (None: up to 8, one per core)
    n_gpu_layers: int = 0  # llamacpp: layers offloaded to a GPU (-1: all; needs a CUDA build)
    structured: bool = False  # llamacpp: answers constrained to the probe's answer schema
    worker: bool = False  # reader stages run in one long-lived process (commands/worker.py)


@dataclass(frozen=True)
class TrackingSpec:
    uri: str | None = None
    experiment: str = "compressbench-tpbench"


@dataclass(frozen=True)
class Params:
    corpora: dict[str, CorpusSpec]
    datasets: tuple[str, ...]
    probes: tuple[str, ...]
    seeds: tuple[int, ...]
    ratios: tuple[float, ...]
    p3_ratio: float
    n_per_cell: int
    methods: tuple[str, ...]
    render: str
    reader: ReaderSpec
    tracking: TrackingSpec
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    retention: RetentionSpec = field(default_factory=RetentionSpec)
    scoring: ScoringSpec = field(default_factory=ScoringSpec)
    deletions: DeletionsSpec = field(default_factory=DeletionsSpec)
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    keepbench: KeepSpec = field(default_factory=KeepSpec)
    source: str = "params.yaml"

    def check_cell(
        self,
        dataset: str | None = None,
        method: str | None = None,
        ratio: float | None = None,
        compressor: str | None = None,
    ) -> None:
        """Raise InputError unless each given value is one of the pipeline's (``datasets``,
        ``methods``, ``ratios``, KEEP compressors); the message names the parameter and its
        allowed values."""
        given = {
            "datasets": dataset,
            "methods": method,
            "ratios": ratio,
            "keepbench.compressors": compressor,
        }
        for key, value in given.items():
            allowed = list(self.keepbench.compressors) if "." in key else getattr(self, key)
            if value is not None and value not in allowed:
                raise InputError(
                    f"{value!r} is not in {key}; allowed: {', '.join(map(str, allowed))}",
                    file=self.source,
                    field=key,
                )

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


def _reader(c: Checker, raw: Any, probes: tuple[str, ...]) -> ReaderSpec:
    """The ``reader`` block; ``max_new_tokens`` must give each of ``probes`` a budget."""
    default = ReaderSpec()
    raw = c.mapping(raw, spec_keys(ReaderSpec), "reader")
    new_tokens: dict[str, Any] = {}
    raw_tokens = c.typed(
        raw.get("max_new_tokens", default.max_new_tokens), dict, "reader.max_new_tokens"
    )
    for key, value in raw_tokens.items():
        probe = probe_name(c, key, f"reader.max_new_tokens.{key}")
        if probe in new_tokens:
            raise c.fail(f"reader.max_new_tokens.{key}", f"{probe} given twice")
        new_tokens[probe] = c.positive(value, f"reader.max_new_tokens.{key}")
    for probe in probes:
        if probe not in new_tokens:
            raise c.fail(f"reader.max_new_tokens.{probe}", "missing")

    def get(key: str) -> Any:
        return raw.get(key, getattr(default, key))

    backend = c.choice(get("backend"), reader_names(), "reader.backend")
    structured = bool(c.typed(get("structured"), bool, "reader.structured"))
    if structured and backend not in STRUCTURED_BACKENDS:
        raise c.fail("reader.structured", f"needs backend {' or '.join(STRUCTURED_BACKENDS)}")
    model = c.typed(get("model"), str, "reader.model")
    problem = model_problem(backend, model)
    if problem is not None:
        raise c.fail("reader.model", problem)
    mode = c.choice(get("decode_mode"), tuple(DECODE_MODES), "reader.decode_mode")
    if mode != DEFAULT_DECODE_MODE and "decode_mode" not in reader_parameters(backend):
        raise c.fail("reader.decode_mode", f"{mode} decoding is the hf backend's, not {backend}'s")
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
        max_new_tokens={p: new_tokens[p] for p in PIPELINE_PROBES if p in new_tokens},
        base_url=c.optional_str(get("base_url"), "reader.base_url"),
        concurrency=c.positive(get("concurrency"), "reader.concurrency"),
        max_retries=c.positive(get("max_retries"), "reader.max_retries", minimum=0),
        n_ctx=c.positive(get("n_ctx"), "reader.n_ctx", minimum=64),
        n_threads=c.optional_positive(get("n_threads"), "reader.n_threads"),
        n_gpu_layers=int(c.typed(get("n_gpu_layers"), int, "reader.n_gpu_layers")),
        structured=structured,
        worker=bool(c.typed(get("worker"), bool, "reader.worker")),
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


def parse_params(raw: Any, source: str = "params.yaml") -> Params:
    """Validate a loaded params mapping into :class:`Params`."""
    c = Checker(source)
    raw = c.mapping(raw, [k for k in spec_keys(Params) if k != "source"], "(top level)")
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
    probes = parse_probes(c, raw.get("probes"))
    ratios = c.ratios(raw.get("ratios", [0.3]), "ratios")
    p3_ratio = c.ratio(raw.get("p3_ratio", 0.3), "p3_ratio")
    if "P3" in probes and p3_ratio not in ratios:
        raise c.fail(
            "p3_ratio",
            f"P3 is built only at p3_ratio, which must be one of ratios "
            f"({', '.join(map(str, ratios))}); got {p3_ratio}",
        )
    seeds = c.items(raw.get("seeds", [42]), int, "seeds")
    params = Params(
        corpora=corpora,
        datasets=datasets,
        probes=probes,
        seeds=seeds,
        ratios=ratios,
        p3_ratio=p3_ratio,
        n_per_cell=c.positive(raw.get("n_per_cell", 200), "n_per_cell"),
        methods=c.items(raw["methods"], str, "methods"),
        render=c.choice(raw.get("render", "published"), RENDERS, "render"),
        reader=_reader(c, raw.get("reader"), probes),
        method_params=_method_params(c, raw.get("method_params")),
        retention=parse_retention(c, raw.get("retention")),
        scoring=parse_scoring(c, raw.get("scoring")),
        tracking=_tracking(c, raw.get("tracking")),
        deletions=parse_deletions(c, raw.get("deletions"), seeds),
        judge=parse_judge(raw.get("judge"), source),
        keepbench=parse_keepbench(raw.get("keepbench"), source),
        source=source,
    )
    # Method names and method_params against the registry (imported here: it is light, but
    # importing config alone should not load every method family).
    from compressbench.compress.registry import check_methods

    check_methods(
        params.methods,
        params.method_params,
        retention_methods=params.retention.methods,
        source=source,
    )
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
