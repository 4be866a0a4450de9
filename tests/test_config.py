"""params.yaml validation: the shipped file loads; bad values name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compressbench.config import load_params, parse_params
from compressbench.errors import InputError
from compressbench.pipeline.declare import check_cell
from compressbench.readers.mock import MockReader
from compressbench.readers.registry import register_reader, unregister_reader
from compressbench.tpbench.pipeline_spec import P3_RATIO, PROBES
from support.paths import REPO_ROOT


def _raw() -> dict:
    return yaml.safe_load((REPO_ROOT / "params.yaml").read_text())


def test_shipped_params_load() -> None:
    p = load_params(REPO_ROOT / "params.yaml")
    assert p.datasets == ("builtin",)
    assert p.corpus("builtin").source == "builtin"
    assert p.reader.max_new_tokens == {"P1": 96, "P2": 96, "P3": 128}
    assert PROBES.of(p) == ("P1", "P2", "P3")
    assert p.reader.max_input_tokens == 7168
    assert "full_context" in p.methods


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda r: r.update(ratios=[0.0]), "ratios[0]", "(0, 1]"),
        (lambda r: r.update(ratios=["x"]), "ratios[0]", "number"),
        (lambda r: r.update(datasets=["nope"]), "datasets[0]", "not defined"),
        (lambda r: r.update(probes=["p9"]), "probes[0]", "one of"),
        (lambda r: r["reader"].update(batch_size=0), "reader.batch_size", ">= 1"),
        (lambda r: r["reader"].update(backend="tgi"), "reader.backend", "one of"),
        (lambda r: r["reader"].update(colour="red"), "reader", "unknown key"),
        (lambda r: r["reader"]["max_new_tokens"].pop("P3"), "reader.max_new_tokens.P3", "missing"),
        (
            lambda r: r["reader"]["max_new_tokens"].update(p3=64),
            "reader.max_new_tokens.p3",
            "P3 given twice",
        ),
        (lambda r: r.update(probes=["P1", "p4"]), "probes[1]", "one of P1, P2, P3 (case ignored)"),
        (lambda r: r["corpora"]["sgd"].pop("path"), "corpora.sgd.path", "expected str"),
        (lambda r: r.pop("methods"), "methods", "missing"),
        (lambda r: r.update(render="fancy"), "render", "one of"),
        (lambda r: r.update(seeds=[True]), "seeds[0]", "expected"),
        (lambda r: r.update(ratio=[0.3]), "(top level)", "unknown key"),
        (lambda r: r.update(corpora={}), "corpora", "at least one corpus"),
        (lambda r: r.update(datasets=["builtin", "builtin"]), "datasets[1]", "listed twice"),
        (lambda r: r.update(p3_ratio=0.7), "p3_ratio", "one of ratios"),
        (lambda r: r.update(method_params=[1]), "method_params", "expected dict"),
        (lambda r: r["corpora"]["sgd"].update(loader="sgd2"), "corpora.sgd.loader", "one of"),
        (lambda r: r["corpora"]["builtin"].update(path="x"), "corpora.builtin", "unknown key"),
        (lambda r: r["corpora"]["sgd_upstream"].update(path="x"), "corpora.sgd_upstream", "path"),
        (lambda r: r["reader"].update(dtype="float8"), "reader.dtype", "bfloat16"),
        (
            lambda r: r["reader"].update(attn_implementation="fast"),
            "reader.attn_implementation",
            "sdpa",
        ),
        (lambda r: r["reader"].update(base_url=["x"]), "reader.base_url", "expected str"),
        (lambda r: r["reader"].update(max_retries=-1), "reader.max_retries", ">= 0"),
        (
            lambda r: r["reader"].update(options={"mode": "echo"}),
            "reader.options.mode",
            "not a parameter only backend llamacpp takes",
        ),
        (lambda r: r["reader"].update(options={"n_ctx": 64}), "reader.options.n_ctx", "only"),
        (lambda r: r["reader"].update(options=["x"]), "reader.options", "expected dict"),
        (lambda r: r["reader"]["max_new_tokens"].update(p4=8), "reader.max_new_tokens.p4", "p4"),
        (lambda r: r["tracking"].update(uri=5), "tracking.uri", "expected str"),
        (lambda r: r["tracking"].update(experiment=" "), "tracking.experiment", "empty"),
        (lambda r: r["tracking"].update(run="x"), "tracking", "allowed: experiment, uri"),
        (lambda r: r["scoring"].update(abstain=True), "scoring.abstain", "json_literal"),
        (lambda r: r["retention"].update(ratios=[0.5, 0.5]), "retention.ratios[1]", "twice"),
        (lambda r: r["retention"].update(methods="recency"), "retention.methods", "expected list"),
    ],
)
def test_bad_params_name_the_field(mutate, field: str, message: str) -> None:
    raw = _raw()
    mutate(raw)
    with pytest.raises(InputError) as err:
        parse_params(raw, "params.yaml")
    assert err.value.field == field
    assert err.value.file == "params.yaml"
    assert message in str(err.value)


def test_missing_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_params(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets: [unclosed\n")
    with pytest.raises(InputError, match="invalid YAML"):
        load_params(bad)


def test_probe_names_are_matched_ignoring_case() -> None:
    """A params file may write p1 or P1: every stage sees the one name, P1."""
    raw = yaml.safe_load((REPO_ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["probes"] = ["p3", "P1"]
    raw["reader"]["max_new_tokens"] = {"p1": 80, "P2": 90, "p3": 100}
    p = parse_params(raw)
    assert PROBES.of(p) == ("P3", "P1")
    assert p.reader.max_new_tokens == {"P1": 80, "P2": 90, "P3": 100}


def test_p3_ratio_need_not_be_run_without_p3() -> None:
    raw = _raw()
    raw.update(probes=["p1", "p2"], p3_ratio=0.7)
    assert P3_RATIO.of(parse_params(raw)) == 0.7


def test_reader_backends_come_from_the_registry() -> None:
    raw = _raw()
    raw["reader"]["backend"] = "config_test_reader"
    with pytest.raises(InputError, match="llamacpp, mock, openai, vllm; got 'config_test_reader'"):
        parse_params(raw)
    register_reader("config_test_reader", MockReader)  # a Reader class under a new name
    try:
        assert parse_params(raw).reader.backend == "config_test_reader"
    finally:
        unregister_reader("config_test_reader")


def test_reader_options_reach_the_backend() -> None:
    """``reader.options``: the backend's own parameters with no ``reader`` key (the mock's)."""
    from compressbench.pipeline.reader_factory import build_reader

    raw = _raw()
    raw["reader"] = {"backend": "mock", "model": "m", "options": {"mode": "echo"}}
    spec = parse_params(raw).reader
    assert spec.options == {"mode": "echo"}
    assert build_reader(spec).decoding()["mode"] == "echo"


def test_check_cell_names_the_parameter_and_allowed_values() -> None:
    p = load_params(REPO_ROOT / "params.yaml")
    check_cell(p, {"dataset": "builtin", "method": "recency", "ratio": 0.3})
    for kwargs, field, allowed in [
        ({"dataset": "sgd"}, "datasets", "allowed: builtin"),
        ({"method": "snapkv"}, "methods", "allowed: full_context, recency"),
        ({"ratio": 0.5}, "ratios", "allowed: 0.3"),
    ]:
        with pytest.raises(InputError, match=allowed) as err:
            check_cell(p, kwargs)
        assert err.value.field == field
