"""The SGD CPU study configurations, applied through ``compressbench use-config`` to the shipped
parameters, state everything the study's tables in docs/results.md were built with."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compressbench.cli import main
from compressbench.config import Params, load_params
from compressbench.tpbench.pipeline_spec import PROBES, RETENTION
from support.paths import REPO_ROOT

STUDIES = REPO_ROOT / "configs" / "studies"
# docs/results.md, the study (n = 100): the reader-free retention stage ran at r = 0.3 for the
# seven selectors that need no model pass (no SmolLM2 pass over every SGD test dialogue)
RETENTION_METHODS = (
    "full_context",
    "recency",
    "first_n",
    "random_seed42",
    "uniform_stride",
    "first_user_recent",
    "turning_point",
)


def _apply(tmp_path: Path, *configs: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    params = tmp_path / "params.yaml"
    shutil.copy(REPO_ROOT / "params.yaml", params)
    for name in configs:
        assert main(["use-config", str(STUDIES / name), "--params", str(params)]) == 0
    return params


def test_the_study_states_its_retention_setting(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "sgd_cpu_qwen15.yaml"))
    assert params.datasets == ("sgd",) and params.n_per_cell == 100
    assert len(params.methods) == 9 and "attention_h2o" in params.methods
    assert RETENTION.of(params).ratios == (0.3,)
    assert RETENTION.of(params).methods == RETENTION_METHODS


def test_the_first_pass_and_the_structured_variant_keep_it(tmp_path: Path) -> None:
    for extra in ("sgd_cpu_first_pass.yaml", "sgd_cpu_qwen15_structured.yaml"):
        params = load_params(_apply(tmp_path / extra, "sgd_cpu_qwen15.yaml", extra))
        assert RETENTION.of(params).ratios == (0.3,)
        assert RETENTION.of(params).methods == RETENTION_METHODS


def test_the_turning_point_studies_state_their_samples_and_variants(tmp_path: Path) -> None:
    # issue #31: the variants are method names, so each is its own cell and report row
    pooled = load_params(_apply(tmp_path / "pooled", "tp31_pooled.yaml"))
    dev = load_params(_apply(tmp_path / "dev", "tp31_dev.yaml"))
    variants = (
        "full_context",
        "turning_point",
        "turning_point_framed",
        "turning_point_query",
        "turning_point_filled",
        "turning_point_sentences",
    )
    # the variants read on dev after the pooled ones (turning_point_stated then went to the
    # pooled samples: tp31_stated.yaml; turning_point_counted: tp31_counted.yaml)
    assert dev.methods[len(variants) :] == (
        "turning_point_confirmed",
        "turning_point_cued",
        "turning_point_replied",
        "turning_point_numbered",
        "turning_point_stated",
        "turning_point_counted",
        "turning_point_named",
    )
    for params in (pooled, dev):
        assert params.methods[: len(variants)] == variants and params.ratios == (0.3,)
        assert PROBES.of(params) == ("P2",) and params.n_per_cell == 100
        assert params.reader.model == "qwen2.5-coder-1.5b-instruct"
    assert pooled.methods == variants
    assert pooled.datasets == ("sgd", "multiwoz") and pooled.seeds == (42, 43)
    assert dev.datasets == ("sgd_dev",) and dev.seeds == (42,)  # tuning: never SGD test


def test_the_line_changes_are_tuned_on_two_dev_samples(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_dev_lines.yaml"))
    assert params.methods == (
        "full_context",
        "turning_point_filled",
        "turning_point_counted",
        "turning_point_named",
        "turning_point_headed",
    )
    assert params.datasets == ("sgd_dev",) and params.seeds == (42, 43)  # never SGD test
    assert params.corpus("sgd_dev").splits == ("dev",)
    assert PROBES.of(params) == ("P2",) and params.ratios == (0.3,) and params.n_per_cell == 100


def test_the_date_rule_is_tuned_on_four_dev_samples(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_dev_dates.yaml"))
    assert params.methods == ("full_context", "turning_point_counted", "turning_point_dated")
    assert params.datasets == ("sgd_dev",) and params.seeds == (42, 43, 44, 45)  # never test
    assert params.corpus("sgd_dev").splits == ("dev",)
    assert PROBES.of(params) == ("P2",) and params.ratios == (0.3,) and params.n_per_cell == 100


def test_the_schema_line_is_tuned_on_the_dev_samples_with_the_dev_schema(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_dev_schema.yaml"))
    assert params.methods == (
        "full_context",
        "turning_point_counted",
        "turning_point_schema_counted",
    )
    assert params.datasets == ("sgd_dev",) and params.seeds == (42, 43, 44, 45)  # never test
    assert params.corpus("sgd_dev").splits == ("dev",)
    schema = params.method_params["turning_point_schema_counted"]["schema"]
    assert schema == "../shared/corpora/sgd/dev/schema.json.gz"  # dev's own services


@pytest.mark.parametrize(
    ("config", "variant", "seeds"),
    [
        ("tp31_dev_schema_dated.yaml", "turning_point_schema_dated", range(42, 46)),  # dates
        ("tp31_dev_schema_unpaired.yaml", "turning_point_schema_unpaired", range(42, 46)),
        ("tp31_dev_schema_ranged.yaml", "turning_point_schema_ranged", range(42, 50)),
        ("tp31_dev_schema_spanned.yaml", "turning_point_schema_spanned", range(42, 50)),
    ],
)
def test_a_schema_variant_is_tuned_beside_schema_counted(
    tmp_path: Path, config: str, variant: str, seeds: range
) -> None:
    params = load_params(_apply(tmp_path, config))
    assert "turning_point_schema_counted" in params.methods and params.methods[-1] == variant
    assert params.datasets == ("sgd_dev",) and params.seeds == tuple(seeds)  # never test
    # one schema setting for both, so the rows differ by the variant's one setting alone
    assert params.method_params[variant] == _schema_counted_setting(params)
    assert _schema_counted_setting(params) == _schema_counted_setting(
        load_params(_apply(tmp_path / "schema", "tp31_dev_schema.yaml"))
    )


def test_the_dated_decision_reads_four_more_dev_samples(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_dev_schema_dated_more.yaml"))
    assert params.methods[-2:] == ("turning_point_schema_counted", "turning_point_schema_dated")
    assert params.datasets == ("sgd_dev",) and params.seeds == (46, 47, 48, 49)  # never test
    assert params.method_params["turning_point_schema_dated"] == _schema_counted_setting(params)


def test_the_turning_point_p1_check_reads_the_study_sample(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_p1.yaml"))
    assert PROBES.of(params) == ("P1",) and params.datasets == ("sgd",)
    assert params.seeds == (42,) and params.n_per_cell == 100  # the study's P1 sample
    variants = ("turning_point_framed", "turning_point_query", "turning_point_filled")
    assert {*variants, "turning_point_stated", "turning_point_counted"} <= set(params.methods)
    assert {"turning_point_schema_counted", "turning_point_schema_ranged"} <= set(params.methods)
    # one setting: P1 reads the text the pooled P2 run read
    assert _schema_counted_setting(params) == _pooled_schema_setting(tmp_path)
    assert params.method_params["turning_point_schema_ranged"] == _schema_counted_setting(params)


def _schema_counted_setting(params: Params) -> object:
    return params.method_params["turning_point_schema_counted"]


def _pooled_schema_setting(tmp_path: Path) -> object:
    """schema_counted's setting in the pooled P2 run (tp31_schema_counted.yaml)."""
    return _schema_counted_setting(
        load_params(_apply(tmp_path / "pooled", "tp31_schema_counted.yaml"))
    )


def test_the_turning_point_p3_check_is_the_structured_study_with_the_variants(
    tmp_path: Path,
) -> None:
    params = load_params(
        _apply(
            tmp_path,
            "sgd_cpu_qwen15.yaml",
            "sgd_cpu_qwen15_structured.yaml",
            "tp31_p3_structured.yaml",
        )
    )
    assert PROBES.of(params) == ("P3",) and params.reader.structured
    assert params.methods[:2] == ("full_context", "turning_point") and len(params.methods) == 5


def test_the_pooled_p3_check_is_structured_over_the_issue_samples(tmp_path: Path) -> None:
    params = load_params(
        _apply(
            tmp_path,
            "sgd_cpu_qwen15.yaml",
            "sgd_cpu_qwen15_structured.yaml",
            "tp31_p3_pooled.yaml",
        )
    )
    assert PROBES.of(params) == ("P3",) and params.reader.structured
    assert set(params.datasets) == {"sgd", "multiwoz"} and params.seeds == (42, 43)
    assert params.methods == (
        "full_context",
        "turning_point",
        "turning_point_filled",
        "turning_point_stated",
        "turning_point_counted",
        "turning_point_schema_counted",
        "turning_point_schema_ranged",
    )
    assert _schema_counted_setting(params) == _pooled_schema_setting(tmp_path)
    assert params.method_params["turning_point_schema_ranged"] == _schema_counted_setting(params)


def test_the_schema_variant_names_the_pooled_corpora_schemas(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_schema.yaml"))
    assert params.methods == ("full_context", "turning_point", "turning_point_schema")
    assert PROBES.of(params) == ("P2",) and params.seeds == (42, 43) and params.ratios == (0.3,)
    schema = params.method_params["turning_point_schema"]["schema"].split(",")
    # each dataset's own corpus folder, as params.yaml's corpora name it
    sgd, multiwoz = params.corpus("sgd").path, params.corpus("multiwoz").path
    assert schema == [f"{sgd}/test/schema.json.gz", f"{multiwoz}/schema.json.gz"]
    assert "turning_point" not in params.method_params  # the default's rows stay the default's


def test_the_schema_line_is_read_on_the_pooled_samples_with_their_schemas(
    tmp_path: Path,
) -> None:
    params = load_params(_apply(tmp_path, "tp31_schema_counted.yaml"))
    assert params.methods == (
        "full_context",
        "turning_point_counted",
        "turning_point_schema_counted",
    )
    assert PROBES.of(params) == ("P2",) and params.seeds == (42, 43) and params.ratios == (0.3,)
    schema = params.method_params["turning_point_schema_counted"]["schema"].split(",")
    sgd, multiwoz = params.corpus("sgd").path, params.corpus("multiwoz").path
    assert schema == [f"{sgd}/test/schema.json.gz", f"{multiwoz}/schema.json.gz"]
    assert "turning_point_counted" not in params.method_params  # counted's rows stay counted's


def test_the_ranged_line_is_read_on_the_pooled_samples_as_schema_counted(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_schema_ranged.yaml"))
    assert params.methods == (
        "full_context",
        "turning_point_schema_counted",
        "turning_point_schema_ranged",
    )
    assert PROBES.of(params) == ("P2",) and params.seeds == (42, 43) and params.ratios == (0.3,)
    # the pooled run's schema files for both: the rows differ by the line rule alone
    assert _schema_counted_setting(params) == _pooled_schema_setting(tmp_path)
    assert params.method_params["turning_point_schema_ranged"] == _schema_counted_setting(params)


def test_the_unlabelled_variant_is_read_beside_the_default_and_filled(tmp_path: Path) -> None:
    params = load_params(_apply(tmp_path, "tp31_unlabelled.yaml"))
    assert params.methods == (
        "full_context",
        "turning_point",
        "turning_point_filled",
        "turning_point_unlabelled",
    )
    assert PROBES.of(params) == ("P2",) and params.seeds == (42, 43) and params.ratios == (0.3,)
    assert set(params.datasets) == {"sgd", "multiwoz"}
    assert not any(m.startswith("turning_point") for m in params.method_params)  # the presets


@pytest.mark.parametrize(
    ("config", "lines"),
    [
        ("tp31_stated.yaml", ("turning_point_stated",)),
        ("tp31_counted.yaml", ("turning_point_stated", "turning_point_counted")),
    ],
)
def test_the_state_line_variants_are_read_on_the_pooled_samples(
    tmp_path: Path, config: str, lines: tuple[str, ...]
) -> None:
    params = load_params(_apply(tmp_path, config))
    assert params.methods == ("full_context", "turning_point", "turning_point_filled", *lines)
    assert PROBES.of(params) == ("P2",) and params.seeds == (42, 43) and params.ratios == (0.3,)
    assert set(params.datasets) == {"sgd", "multiwoz"}
    assert not any(m.startswith("turning_point") for m in params.method_params)  # the presets
