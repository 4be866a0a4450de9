"""Typed, validated view of ``params.yaml`` (every pipeline knob lives there).

Validation errors name the file and the field (``reader.batch_size``) and say what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compressbench.errors import InputError

CORPUS_SOURCES = ("builtin", "local", "upstream")
PROBES = ("p1", "p2", "p3")
RENDERS = ("published", "markers")
BACKENDS = ("hf", "openai", "vllm")


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
    dtype: str = "float32"
    attn_implementation: str = "eager"
    batch_size: int = 8
    max_input_tokens: int = 7168
    max_new_tokens: dict[str, int] = field(default_factory=lambda: {"p1": 96, "p2": 96, "p3": 128})
    base_url: str | None = None
    concurrency: int = 4
    max_retries: int = 6


@dataclass(frozen=True)
class TrackingSpec:
    uri: str | None = None
    experiment: str = "compressbench-tpbench"


@dataclass(frozen=True)
class ScoringSpec:
    abstain: str = "published"  # "published" (P2: bool() of the field) | "json_literal"


ABSTAIN_RULES = ("published", "json_literal")


@dataclass(frozen=True)
class RetentionSpec:
    ratios: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7)
    methods: tuple[str, ...] | None = None  # None: the pipeline's `methods`


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
    source: str = "params.yaml"

    def corpus(self, name: str) -> CorpusSpec:
        try:
            return self.corpora[name]
        except KeyError:
            raise InputError(
                f"unknown corpus {name!r}; defined: {', '.join(self.corpora)}",
                file=self.source,
                field="datasets",
            ) from None


class _Checker:
    """Small helpers that raise InputError naming params.yaml and the dotted field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, fieldname: str, message: str) -> InputError:
        return InputError(message, file=self.source, field=fieldname)

    def typed(self, value: Any, kind: type | tuple[type, ...], fieldname: str) -> Any:
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(fieldname, f"expected a number, got {value!r}")
        if not isinstance(value, kind):
            raise self.fail(fieldname, f"expected {_kind_name(kind)}, got {value!r}")
        return value

    def choice(self, value: Any, choices: tuple[str, ...], fieldname: str) -> str:
        if value not in choices:
            raise self.fail(fieldname, f"must be one of {', '.join(choices)}; got {value!r}")
        return str(value)

    def items(self, value: Any, kind: type | tuple[type, ...], fieldname: str) -> tuple[Any, ...]:
        self.typed(value, list, fieldname)
        if not value:
            raise self.fail(fieldname, "must not be empty")
        return tuple(self.typed(v, kind, f"{fieldname}[{i}]") for i, v in enumerate(value))

    def ratio(self, value: Any, fieldname: str) -> float:
        r = float(self.typed(value, (int, float), fieldname))
        if not 0.0 < r <= 1.0:
            raise self.fail(fieldname, f"a retained fraction must be in (0, 1]; got {value!r}")
        return r

    def positive(self, value: Any, fieldname: str) -> int:
        v = int(self.typed(value, int, fieldname))
        if v < 1:
            raise self.fail(fieldname, f"must be >= 1; got {value!r}")
        return v


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if kind == (int, float):
        return "a number"
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _corpus(c: _Checker, name: str, raw: Any) -> CorpusSpec:
    where = f"corpora.{name}"
    c.typed(raw, dict, where)
    source = c.choice(raw.get("source"), CORPUS_SOURCES, f"{where}.source")
    loader = "builtin" if source == "builtin" else raw.get("loader")
    if source != "builtin":
        c.typed(loader, str, f"{where}.loader")
    path = raw.get("path")
    if source == "local":
        c.typed(path, str, f"{where}.path")
    splits = raw.get("splits")
    split_tuple = None if splits is None else c.items(splits, str, f"{where}.splits")
    return CorpusSpec(name=name, source=source, loader=str(loader), path=path, splits=split_tuple)


def _reader(c: _Checker, raw: Any) -> ReaderSpec:
    c.typed(raw, dict, "reader")
    default = ReaderSpec()
    unknown = set(raw) - set(default.__dataclass_fields__)
    if unknown:
        raise c.fail("reader", f"unknown key(s): {', '.join(sorted(unknown))}")
    new_tokens = raw.get("max_new_tokens", default.max_new_tokens)
    c.typed(new_tokens, dict, "reader.max_new_tokens")
    for probe in PROBES:
        if probe not in new_tokens:
            raise c.fail(f"reader.max_new_tokens.{probe}", "missing")
        c.positive(new_tokens[probe], f"reader.max_new_tokens.{probe}")
    return ReaderSpec(
        backend=c.choice(raw.get("backend", default.backend), BACKENDS, "reader.backend"),
        model=c.typed(raw.get("model", default.model), str, "reader.model"),
        dtype=c.typed(raw.get("dtype", default.dtype), str, "reader.dtype"),
        attn_implementation=c.typed(
            raw.get("attn_implementation", default.attn_implementation),
            str,
            "reader.attn_implementation",
        ),
        batch_size=c.positive(raw.get("batch_size", default.batch_size), "reader.batch_size"),
        max_input_tokens=c.positive(
            raw.get("max_input_tokens", default.max_input_tokens), "reader.max_input_tokens"
        ),
        max_new_tokens={p: int(new_tokens[p]) for p in PROBES},
        base_url=raw.get("base_url"),
        concurrency=c.positive(raw.get("concurrency", default.concurrency), "reader.concurrency"),
        max_retries=int(
            c.typed(raw.get("max_retries", default.max_retries), int, "reader.max_retries")
        ),
    )


def parse_params(raw: Any, source: str = "params.yaml") -> Params:
    """Validate a loaded params mapping into :class:`Params`."""
    c = _Checker(source)
    c.typed(raw, dict, "(top level)")
    for key in ("corpora", "datasets", "methods"):
        if key not in raw:
            raise c.fail(key, "missing")
    c.typed(raw["corpora"], dict, "corpora")
    corpora = {name: _corpus(c, name, spec) for name, spec in raw["corpora"].items()}
    datasets = c.items(raw["datasets"], str, "datasets")
    for i, name in enumerate(datasets):
        if name not in corpora:
            raise c.fail(f"datasets[{i}]", f"{name!r} is not defined under corpora")
    probes = c.items(raw.get("probes", list(PROBES)), str, "probes")
    for i, p in enumerate(probes):
        c.choice(p, PROBES, f"probes[{i}]")
    ratios = tuple(
        c.ratio(r, f"ratios[{i}]")
        for i, r in enumerate(c.items(raw.get("ratios", [0.3]), (int, float), "ratios"))
    )
    method_params = raw.get("method_params") or {}
    c.typed(method_params, dict, "method_params")
    for name, mp in method_params.items():
        c.typed(mp if mp is not None else {}, dict, f"method_params.{name}")
    retention_raw = raw.get("retention") or {}
    c.typed(retention_raw, dict, "retention")
    retention_methods = retention_raw.get("methods")
    retention = RetentionSpec(
        ratios=tuple(
            c.ratio(r, f"retention.ratios[{i}]")
            for i, r in enumerate(
                c.items(
                    retention_raw.get("ratios", [0.1, 0.3, 0.5, 0.7]),
                    (int, float),
                    "retention.ratios",
                )
            )
        ),
        methods=None
        if retention_methods is None
        else c.items(retention_methods, str, "retention.methods"),
    )
    scoring_raw = raw.get("scoring") or {}
    c.typed(scoring_raw, dict, "scoring")
    scoring = ScoringSpec(
        abstain=c.choice(scoring_raw.get("abstain", "published"), ABSTAIN_RULES, "scoring.abstain")
    )
    tracking_raw = raw.get("tracking") or {}
    c.typed(tracking_raw, dict, "tracking")
    return Params(
        corpora=corpora,
        datasets=datasets,
        probes=probes,
        seeds=c.items(raw.get("seeds", [42]), int, "seeds"),
        ratios=ratios,
        p3_ratio=c.ratio(raw.get("p3_ratio", 0.3), "p3_ratio"),
        n_per_cell=c.positive(raw.get("n_per_cell", 200), "n_per_cell"),
        methods=c.items(raw["methods"], str, "methods"),
        render=c.choice(raw.get("render", "published"), RENDERS, "render"),
        reader=_reader(c, raw.get("reader") or {}),
        method_params={name: dict(mp or {}) for name, mp in method_params.items()},
        retention=retention,
        scoring=scoring,
        tracking=TrackingSpec(
            uri=tracking_raw.get("uri"),
            experiment=c.typed(
                tracking_raw.get("experiment", "compressbench-tpbench"), str, "tracking.experiment"
            ),
        ),
        source=source,
    )


def load_params(path: str | Path = "params.yaml") -> Params:
    """Read and validate ``params.yaml``."""
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("parameters file not found", file=str(p)) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=str(p)) from exc
    return parse_params(raw, str(p))
