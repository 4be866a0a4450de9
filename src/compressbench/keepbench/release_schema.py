"""Field mapping from the released KEEP-Bench records onto :class:`~.cases.KeepCase`.

The release (``uclanlp/KEEP-Bench``, JSON, cc-by-nc-4.0) was not reachable when this was
written, so its record layout is **derived** from the paper (research notes §1.2) and must be
checked against the real files. All field names live in one versioned :class:`ReleaseSchema`
table; when the real layout differs, add a new entry to :data:`RELEASE_SCHEMAS` (or pass one to
the loader) instead of touching code. Rows come out in this project's own form
(``cases.case_to_dict``) and are then checked by ``cases.case_from_dict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compressbench.errors import InputError
from compressbench.keepbench.cases import (
    CONDITION,
    CONDITIONAL,
    EVIDENCE,
    IMBALANCED,
    PARALLEL,
)
from compressbench.keepbench.subsets import SUBSETS


@dataclass(frozen=True)
class ReleaseSchema:
    """Release field names (dotted = nested) for each piece of the case model."""

    version: str
    case_id: str = "id"
    setting: str = "setting"
    domain: str = "domain"
    query: str = "query"
    context: str = "context"  # list of paragraphs / ~400-token chunks
    answers: str = "answers"
    propositions: str = "propositions"  # [{id, text, ...}] = E_q(c) (parallel, conditional)
    prop_id: str = "id"
    prop_text: str = "text"
    prop_paragraph: str = "supporting_paragraph_idx"
    prop_ambiguous: str = "involves_ambiguous_entity"
    hops: str = "num_hops"
    perspectives_count: str = "num_perspectives"
    chains: str = "chains"
    ambiguous_mentions: str = "ambiguous_mentions"  # [{mention, referents}]
    referent_pairs: str = "referent_pairs"
    condition_key: str = "condition.key"
    condition_prop: str = "condition.proposition_id"
    conditioned_hop: str = "conditioned_hop_id"
    disambiguation: str = "disambiguation_proposition"
    disambiguating_paragraph: str = "disambiguating_paragraph_idx"
    perspectives: str = "perspectives"  # imbalanced: [{id, text, role, jurisdiction?}]
    persp_role: str = "role"
    persp_jurisdiction: str = "jurisdiction"
    musique_domain: str = "musique"  # domain given to parallel/conditional rows without one


RELEASE_V0 = ReleaseSchema(version="release-v0-derived")
RELEASE_SCHEMAS: dict[str, ReleaseSchema] = {RELEASE_V0.version: RELEASE_V0}

# File stems of a one-file-per-subset release -> (setting, domain) defaults for their rows.
FILE_SUBSETS: dict[str, tuple[str, str]] = {
    stem: (s.setting, s.domain) for s in SUBSETS for stem in s.file_stems
}


_MISSING = object()


def _get(row: Mapping[str, Any], path: str, default: Any = _MISSING) -> Any:
    value: Any = row
    for part in path.split("."):
        if not isinstance(value, Mapping) or value.get(part) is None:
            if default is _MISSING:
                raise KeyError(path)
            return default
        value = value[part]
    return value


def release_row_to_native(
    row: Mapping[str, Any],
    schema: ReleaseSchema = RELEASE_V0,
    *,
    file: str | None = None,
    record: str | None = None,
    defaults: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Map one release row to :func:`cases.case_to_dict` form (not yet checked)."""
    where = record

    def need(path: str) -> Any:
        try:
            return _get(row, path)
        except KeyError:
            raise InputError(
                f"missing required field (schema {schema.version})",
                file=file,
                record=where,
                field=path,
            ) from None

    case_id = str(need(schema.case_id))
    where = case_id
    setting = _get(row, schema.setting, None) or (defaults[0] if defaults else None)
    if setting is None:
        setting = need(schema.setting)
    domain = _get(row, schema.domain, None) or (defaults[1] if defaults else None)
    if domain is None:
        domain = (
            schema.musique_domain if setting in (PARALLEL, CONDITIONAL) else need(schema.domain)
        )
    native: dict[str, Any] = {
        "case_id": case_id,
        "setting": setting,
        "domain": domain,
        "query": need(schema.query),
        "paragraphs": need(schema.context),
        "answers": _get(row, schema.answers, []),
        "hops": _get(row, schema.hops, None),
        "perspectives": _get(row, schema.perspectives_count, None),
        "source": file or "",
    }
    if setting == IMBALANCED:
        native["propositions"] = _perspectives(need(schema.perspectives), schema)
        if native["perspectives"] is None:
            native["perspectives"] = len(native["propositions"])
        return native
    chains = _get(row, schema.chains, [])
    cond_id = _get(row, schema.condition_prop, None)
    native["propositions"] = _hop_propositions(need(schema.propositions), schema, chains, cond_id)
    native["chains"] = chains
    native["ambiguous_mentions"] = _get(row, schema.ambiguous_mentions, [])
    native["referent_pairs"] = _get(row, schema.referent_pairs, [])
    if setting == CONDITIONAL:
        native["condition"] = {
            "key": need(schema.condition_key),
            "proposition_id": need(schema.condition_prop),
            "conditioned_hop_id": need(schema.conditioned_hop),
            "disambiguation": _get(row, schema.disambiguation, ""),
            "disambiguating_paragraph": _get(row, schema.disambiguating_paragraph, None),
        }
    return native


def _hop_propositions(
    props: Any, schema: ReleaseSchema, chains: Any, cond_id: Any
) -> list[dict[str, Any]]:
    """Parallel/conditional propositions: group from chain membership, role from p_cond."""
    if not isinstance(props, list):
        return props  # case_from_dict reports the wrong type with the field named
    chain_of: dict[Any, str] = {}
    if isinstance(chains, list):
        for n, chain in enumerate(chains, start=1):
            for pid in chain if isinstance(chain, list) else []:
                chain_of[pid] = f"chain{n}"
    out = []
    for p in props:
        if not isinstance(p, Mapping):
            out.append(p)
            continue
        pid = p.get(schema.prop_id)
        out.append(
            {
                "id": pid,
                "text": p.get(schema.prop_text),
                "role": CONDITION if cond_id is not None and pid == cond_id else EVIDENCE,
                "group": chain_of.get(pid, "chain"),
                "paragraph": p.get(schema.prop_paragraph),
                "involves_ambiguous_entity": bool(p.get(schema.prop_ambiguous, False)),
            }
        )
    return out


def _perspectives(persp: Any, schema: ReleaseSchema) -> list[Any]:
    """Imbalanced propositions: one per perspective, group = perspective id."""
    if not isinstance(persp, list):
        return persp
    return [
        {
            "id": p.get(schema.prop_id),
            "text": p.get(schema.prop_text),
            "role": p.get(schema.persp_role),
            "group": p.get(schema.prop_id),
            "paragraph": p.get(schema.prop_paragraph),
            "jurisdiction": p.get(schema.persp_jurisdiction) or "",
        }
        if isinstance(p, Mapping)
        else p
        for p in persp
    ]
