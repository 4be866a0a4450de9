"""params.yaml validation: the shipped file loads; bad values name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compressbench.config import load_params, parse_params
from compressbench.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def _raw() -> dict:
    return yaml.safe_load((REPO / "params.yaml").read_text())


def test_shipped_params_load() -> None:
    p = load_params(REPO / "params.yaml")
    assert p.datasets == ("builtin",)
    assert p.corpus("builtin").source == "builtin"
    assert p.reader.max_new_tokens == {"p1": 96, "p2": 96, "p3": 128}
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
        (lambda r: r["reader"]["max_new_tokens"].pop("p3"), "reader.max_new_tokens.p3", "missing"),
        (lambda r: r["corpora"]["sgd"].pop("path"), "corpora.sgd.path", "expected str"),
        (lambda r: r.pop("methods"), "methods", "missing"),
        (lambda r: r.update(render="fancy"), "render", "one of"),
        (lambda r: r.update(seeds=[True]), "seeds[0]", "expected"),
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
