"""Score one stored reader output by its probe type (the pipeline's scores stage).

Each probe type's published parser + scorer (spec §2.1-§2.4) is a member of its
:class:`~compressbench.tpbench.probe_types.spec.ProbeType`; it returns the extracted
prediction, the abstain / format-error flags and the scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compressbench.tpbench.probe_types import get_probe_type
from compressbench.tpbench.probe_types.spec import Scored


def score_answer(row: Mapping[str, Any], *, corrected_abstain: bool = False) -> Scored:
    """Scores of an answers-stage row (``probe_type``, ``output``, ``error``, golds).

    ``corrected_abstain`` switches P2 from the published ``bool()`` reading of the abstain
    field (``"false"`` abstains) to the JSON-literal reading; P1/P3 already read it that way.
    """
    score = get_probe_type(row["probe_type"], pipeline=True).score_answer
    assert score is not None  # every pipeline probe type has one
    return score(row["output"], bool(row.get("error")), row, corrected_abstain)
