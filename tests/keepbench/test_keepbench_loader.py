"""KEEP-Bench loading: built-in sample, local JSON/JSONL/parquet, the derived release mapping,
``datasets`` folders, schema errors naming file/case/field, and the published counts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from compressbench.errors import InputError
from compressbench.keepbench.cases import KeepCase, case_to_dict
from compressbench.keepbench.loader import (
    builtin_cases,
    check_published_counts,
    evaluation_cases,
    load_cases,
)
from compressbench.keepbench.release_schema import RELEASE_V0, ReleaseSchema
from compressbench.keepbench.subsets import PUBLISHED_TOTAL, SUBSETS

PUBLISHED_COUNTS = {s.name: s.published_cases for s in SUBSETS}
PUBLISHED_SPLITS = {s.name: s.published_split for s in SUBSETS}


def _release_row(case: KeepCase) -> dict[str, Any]:
    """The case in the derived release layout (research notes §1.2)."""
    row: dict[str, Any] = {
        "id": case.case_id,
        "setting": case.setting,
        "domain": case.domain,
        "query": case.query,
        "context": list(case.paragraphs),
        "answers": list(case.answers),
        "num_hops": case.hops,
        "num_perspectives": case.perspectives,
    }
    if case.setting == "imbalanced":
        row["perspectives"] = [
            {
                "id": p.id,
                "text": p.text,
                "role": p.role,
                "supporting_paragraph_idx": p.paragraph,
                **({"jurisdiction": p.jurisdiction} if p.jurisdiction else {}),
            }
            for p in case.propositions
        ]
        return row
    row["propositions"] = [
        {
            "id": p.id,
            "text": p.text,
            "supporting_paragraph_idx": p.paragraph,
            "involves_ambiguous_entity": p.involves_ambiguous_entity,
        }
        for p in case.propositions
    ]
    if case.setting == "parallel":
        row["chains"] = [list(c) for c in case.chains]
        row["ambiguous_mentions"] = [
            {"mention": m.mention, "referents": list(m.referents)} for m in case.ambiguous_mentions
        ]
        row["referent_pairs"] = [list(p) for p in case.referent_pairs]
    else:
        assert case.condition is not None
        row["condition"] = {
            "key": case.condition.key,
            "proposition_id": case.condition.proposition_id,
        }
        row["conditioned_hop_id"] = case.condition.conditioned_hop_id
        row["disambiguation_proposition"] = case.condition.disambiguation
        row["disambiguating_paragraph_idx"] = case.condition.disambiguating_paragraph
    return row


def _same(a: KeepCase, b: KeepCase) -> bool:
    return replace(a, source="") == replace(b, source="")


@pytest.fixture(scope="module")
def sample() -> list[KeepCase]:
    return evaluation_cases(builtin_cases())


def test_builtin_is_the_default_source(sample: list[KeepCase]) -> None:
    cases = load_cases()
    assert len(cases) == 24 and len(sample) == 20
    assert [c.case_id for c in cases[:2]] == ["sample:parallel:01", "sample:parallel:02"]


def test_native_json_jsonl_and_parquet_round_trip(tmp_path: Path, sample: list[KeepCase]) -> None:
    rows = [case_to_dict(c) for c in sample]
    (tmp_path / "a.json").write_text(json.dumps({"cases": rows}))
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    pq.write_table(pa.Table.from_pylist(json.loads(json.dumps(rows))), tmp_path / "c.parquet")
    for name in ("a.json", "b.jsonl", "c.parquet"):
        loaded = load_cases(tmp_path / name)
        assert len(loaded) == len(sample)
        assert all(_same(x, y) for x, y in zip(loaded, sample, strict=True)), name


def test_release_layout_per_subset_files_maps_onto_the_model(
    tmp_path: Path, sample: list[KeepCase]
) -> None:
    by_subset: dict[str, list[dict[str, Any]]] = {}
    for case in sample:
        row = _release_row(case)
        del row["setting"], row["domain"]  # one file per subset: the file name says which
        by_subset.setdefault(case.subset, []).append(row)
    (tmp_path / "parallel.json").write_text(json.dumps(by_subset["parallel"]))
    (tmp_path / "conditional.jsonl").write_text(
        "\n".join(json.dumps(r) for r in by_subset["conditional"])
    )
    pq.write_table(
        pa.Table.from_pylist(by_subset["science"]), tmp_path / "imbalanced_science.parquet"
    )
    (tmp_path / "imbalanced_policy.json").write_text(json.dumps({"data": by_subset["policy"]}))
    loaded = {c.case_id: c for c in load_cases(tmp_path)}
    assert set(loaded) == {c.case_id for c in sample}
    for case in sample:
        assert _same(loaded[case.case_id], case), case.case_id
    assert loaded["sample:parallel:01"].source.endswith("parallel.json")


def test_datasets_folder_through_hf_prefix(tmp_path: Path, sample: list[KeepCase]) -> None:
    folder = tmp_path / "keep"
    folder.mkdir()
    rows = [_release_row(c) for c in sample]
    (folder / "all.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    loaded = {c.case_id: c for c in load_cases(f"hf:{folder}")}
    assert len(loaded) == len(sample)
    for case in sample:
        assert _same(loaded[case.case_id], case), case.case_id


def test_replaceable_schema_table(tmp_path: Path, sample: list[KeepCase]) -> None:
    renamed = ReleaseSchema(version="test-v1", case_id="uid", context="chunks", query="question")
    rows = []
    for case in sample[:3]:
        row = _release_row(case)
        row["uid"], row["chunks"], row["question"] = (
            row.pop("id"),
            row.pop("context"),
            row.pop("query"),
        )
        rows.append(row)
    (tmp_path / "x.json").write_text(json.dumps(rows))
    loaded = load_cases(tmp_path / "x.json", schema=renamed)
    assert all(_same(a, b) for a, b in zip(loaded, sample[:3], strict=True))
    with pytest.raises(InputError, match=r"field 'id': missing required field \(schema release-v0"):
        load_cases(tmp_path / "x.json", schema=RELEASE_V0.version)


@pytest.mark.parametrize(
    ("mutate", "record", "field", "message"),
    [
        (lambda r: r.pop("query"), "sample:parallel:01", "query", "missing required field"),
        (lambda r: r.pop("id"), "line 1", "id", "missing required field"),
        (lambda r: r.pop("setting"), "sample:parallel:01", "setting", "missing required field"),
        (
            lambda r: r["propositions"][1].update(text=None),
            "sample:parallel:01",
            "propositions[1].text",
            "missing required field",
        ),
        (
            lambda r: r.update(referent_pairs=[["c1h1", "zz"]]),
            "sample:parallel:01",
            "referent_pairs[0]",
            "chain 1 then",
        ),
    ],
)
def test_release_row_errors_name_file_case_and_field(
    tmp_path: Path, sample: list[KeepCase], mutate: Any, record: str, field: str, message: str
) -> None:
    row = _release_row(sample[0])
    mutate(row)
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(InputError, match=message) as err:
        load_cases(path)
    assert (err.value.file, err.value.record, err.value.field) == (str(path), record, field)


def test_bad_sources(tmp_path: Path, sample: list[KeepCase]) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        load_cases(tmp_path / "missing.json")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(InputError, match=r"unsupported file type '\.csv'"):
        load_cases(tmp_path / "x.csv")
    (tmp_path / "bad.jsonl").write_text('{"case_id": 1, "paragraphs": []}\n{not json\n')
    with pytest.raises(InputError, match="record line 1, field 'case_id': expected str"):
        load_cases(tmp_path / "bad.jsonl")
    (tmp_path / "bad2.jsonl").write_text("\n{not json\n")
    with pytest.raises(InputError, match="record line 2: invalid JSON"):
        load_cases(tmp_path / "bad2.jsonl")
    (tmp_path / "obj.json").write_text('{"rows": []}')
    with pytest.raises(InputError, match="object with 'cases'"):
        load_cases(tmp_path / "obj.json")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="unreadable parquet"):
        load_cases(tmp_path / "junk.parquet")
    dup = [case_to_dict(sample[0]), case_to_dict(sample[0])]
    (tmp_path / "dup.json").write_text(json.dumps(dup))
    with pytest.raises(InputError, match="record sample:parallel:01, field 'case_id': duplicate"):
        load_cases(tmp_path / "dup.json")
    with pytest.raises(InputError, match="unknown schema 'v9'; allowed: auto, native"):
        load_cases(tmp_path / "dup.json", schema="v9")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"no \.json/\.jsonl/\.parquet files"):
        load_cases(empty)


# ---- published counts (900 / 1,364 / 1,010 / 828) -------------------------------------------


def test_published_counts_are_the_papers() -> None:
    assert PUBLISHED_COUNTS == {
        "parallel": 900,
        "conditional": 1364,
        "science": 1010,
        "policy": 828,
    }
    assert sum(PUBLISHED_COUNTS.values()) == PUBLISHED_TOTAL == 4102
    for subset, split in PUBLISHED_SPLITS.items():
        assert sum(split.values()) == PUBLISHED_COUNTS[subset]


def _synthetic_release(sample: list[KeepCase]) -> list[dict[str, Any]]:
    """A full-size release (4,102 rows with the published splits) built from templates."""
    rows = []
    for subset, split in PUBLISHED_SPLITS.items():
        for size, n in split.items():
            template = next(
                c
                for c in sample
                if c.subset == subset
                and (c.perspectives if subset in ("science", "policy") else c.hops)
                in (size, 3 if size == 4 else size)
            )
            for i in range(n):
                rows.append(_resized(_release_row(template), subset, size, f"{subset}-{size}-{i}"))
    return rows


def _resized(row: dict[str, Any], subset: str, size: int, case_id: str) -> dict[str, Any]:
    row["id"] = case_id
    if subset in ("science", "policy"):
        persp = row["perspectives"]
        while len(persp) < size:
            persp.append({**persp[-1], "id": f"extra{len(persp)}"})
        row["perspectives"], row["num_perspectives"] = persp[:size], size
        return row
    if row["num_hops"] == size:
        return row
    props = row["propositions"]
    if subset == "parallel":  # extend both chains with one more hop each
        for n, chain in enumerate(row["chains"], start=1):
            new = f"c{n}h{size}"
            chain.append(new)
            props.append(
                {"id": new, "text": f"Extra hop of chain {n}.", "supporting_paragraph_idx": None}
            )
    else:
        props.append({"id": f"h{size}", "text": "Extra hop.", "supporting_paragraph_idx": None})
    row["num_hops"] = size
    return row


def test_full_release_counts_are_asserted(tmp_path: Path, sample: list[KeepCase]) -> None:
    rows = _synthetic_release(sample)
    assert len(rows) == 4102
    path = tmp_path / "keep.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    cases = load_cases(path, expect_full=True)
    assert len(cases) == 4102
    # one case short in policy
    path.write_text("\n".join(json.dumps(r) for r in rows[:-1]))
    with pytest.raises(InputError, match="policy: 827 cases, the release has 828"):
        load_cases(path, expect_full=True)
    assert len(load_cases(path)) == 4101  # a local path asserts nothing unless asked
    # right totals, wrong hop split
    conditional = [c for c in cases if c.subset == "conditional"]
    moved = [
        *cases[:900],
        *[replace(c, hops=2) if c.hops == 3 and c is conditional[700] else c for c in cases[900:]],
    ]
    with pytest.raises(InputError, match=r"field 'num_hops': conditional: split \{2: 605, 3: 492"):
        check_published_counts(moved, source="keep.jsonl")
    # the sample is not the release
    with pytest.raises(InputError, match="parallel: 5 cases, the release has 900"):
        check_published_counts(sample)
