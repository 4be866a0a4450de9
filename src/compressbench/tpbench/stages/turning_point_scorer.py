"""The turning_point_scorer stage: refit turning_point's mention scorer on SGD train.

The fitted weights live in ``models/turning_point/scorer.json`` (tracked by git, shipped with the
package as data, the default of every stage that runs turning_point); this stage is how they are
made, so DVC records their hash (``pipeline/
turning_point_scorer/dvc.lock``, committed) next to the SGD train folder and code that made
them. It is ``frozen``: the default offline ``dvc repro`` has no SGD train and must not run or
fail on it, so it only checks that the shipped file still has the recorded hash. Every other
stage reads the file through the base code fingerprint, so a refit reruns the stages.
"""

from __future__ import annotations

from pathlib import Path

from compressbench.compress.turning_point.scorer import MODEL_FILE
from compressbench.compress.turning_point.train import fit_sgd_train
from compressbench.config import Params
from compressbench.errors import InputError
from compressbench.pipeline.declare import Out, stage

SCORER = MODEL_FILE
# DVC interpolates params.yaml's `corpora.sgd.path` (`{{ }}` escapes the template's braces).
SGD_TRAIN = "${{corpora.sgd.path}}/train"


def sgd_train(params: Params) -> Path:
    """The SGD train folder ``corpora.sgd`` names (a local corpus), or :class:`InputError`."""
    spec = params.corpus("sgd")
    train = Path(spec.path or "") / "train"
    if spec.source != "local" or not spec.path or not train.is_dir():
        raise InputError(
            f"turning_point_scorer needs a local SGD corpus with a train split; {train} is not "
            "a folder",
            file=params.source,
            field="corpora.sgd.path",
        )
    return train


@stage(
    "turning_point_scorer",
    params=("corpora",),
    code=(),  # the train module lies in `compress` (every stage's code)
    deps=(SGD_TRAIN,),
    outs=(Out(SCORER, cache=False),),
    frozen=True,
)
def stage_turning_point_scorer(params: Params) -> Path:
    """Fit turning_point's mention scorer on the first 3000 SGD train dialogues (their state
    annotations are the labels) and write models/turning_point/scorer.json. Frozen: `dvc
    repro` skips it (no SGD train offline); refit with `compressbench stage
    turning_point_scorer`, then `dvc commit -f` this stage (see the note above)."""
    return fit_sgd_train(sgd_train(params).parent, SCORER)
