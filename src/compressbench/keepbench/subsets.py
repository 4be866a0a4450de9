"""KEEP-Bench's four evaluation subsets (paper Table 3), one :class:`Subset` object each,
registered once in :data:`SUBSETS` (Table 3's column order).

A subset is what a case's ``subset`` names (:attr:`~compressbench.keepbench.cases.KeepCase.subset`:
the setting, or an imbalanced case's domain). Its object holds its published size and
hop/perspective split (Table 2 / App. B; the loader checks a full release against them), the
release files that hold it, and the metrics it feeds: every subset feeds All-Rec (per subset and
the case-weighted overall), parallel also Para-Rec and conditional Cond-Rec. The loader, the
metrics, FLOPs/EPR and the report iterate :data:`SUBSETS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compressbench.keepbench.cases import CONDITIONAL, IMBALANCED, PARALLEL


@dataclass(frozen=True)
class Recall:
    """A subset's own recall besides All-Rec: its key in case scores and metrics files, and
    the paper's column name."""

    key: str
    label: str


@dataclass(frozen=True)
class Subset:
    name: str  # a case's ``subset``
    setting: str  # its cases' setting (:data:`~compressbench.keepbench.cases.SETTINGS`)
    domain: str  # its cases' domain
    short: str  # Table 3's column prefix ("Par. Rate")
    published_cases: int  # evaluation cases in the release (Table 2)
    published_split: Mapping[int, int]  # hops (imbalanced: perspectives) -> cases (App. B)
    file_stems: tuple[str, ...]  # release file / config names holding it
    recall: Recall | None = None  # Para-Rec / Cond-Rec; None: All-Rec only

    @property
    def split_field(self) -> str:
        """The release field :attr:`published_split` counts."""
        return "num_perspectives" if self.setting == IMBALANCED else "num_hops"

    @property
    def table_columns(self) -> tuple[str, ...]:
        """Its Table 3 columns: Rate, its own recall (if any), All-Rec."""
        own = () if self.recall is None else (self.recall.label,)
        return (f"{self.short} Rate", *own, f"{self.short} All-Rec")

    @property
    def table_keys(self) -> tuple[str, ...]:
        """The metrics keys of :attr:`table_columns`, in the same order."""
        own = () if self.recall is None else (self.recall.key,)
        return ("rate", *own, "all_rec")


PARA_REC = Recall("para_rec", "Para-Rec")
COND_REC = Recall("cond_rec", "Cond-Rec")

SUBSETS: tuple[Subset, ...] = (
    Subset(
        PARALLEL, PARALLEL, "musique", "Par.", 900, {2: 400, 3: 300, 4: 200}, (PARALLEL,), PARA_REC
    ),
    Subset(
        CONDITIONAL,
        CONDITIONAL,
        "musique",
        "Cond.",
        1364,
        {2: 604, 3: 493, 4: 267},
        (CONDITIONAL,),
        COND_REC,
    ),
    Subset(
        "science",
        IMBALANCED,
        "science",
        "Sci.",
        1010,
        {4: 856, 3: 154},
        ("imbalanced_science", "science"),
    ),
    Subset("policy", IMBALANCED, "policy", "Pol.", 828, {4: 828}, ("imbalanced_policy", "policy")),
)
SUBSET_NAMES: tuple[str, ...] = tuple(s.name for s in SUBSETS)
PUBLISHED_TOTAL = sum(s.published_cases for s in SUBSETS)  # 4,102 evaluation cases


def get_subset(name: str) -> Subset:
    """The subset called ``name``; KeyError naming the subsets otherwise."""
    for subset in SUBSETS:
        if subset.name == name:
            return subset
    raise KeyError(f"unknown KEEP-Bench subset {name!r}; subsets: {', '.join(SUBSET_NAMES)}")
