"""One module per DVC stage; each reads the previous stage's files and writes its own atomically.

corpora -> transitions -> probes -> contexts -> answers -> scores -> metrics (see ``dvc.yaml``).
"""

from compressbench.pipeline.stages.answers import stage_answers
from compressbench.pipeline.stages.contexts import stage_contexts
from compressbench.pipeline.stages.corpora import stage_corpora, stage_transitions
from compressbench.pipeline.stages.metrics import stage_metrics
from compressbench.pipeline.stages.probes import stage_probes
from compressbench.pipeline.stages.retention import retention_setup, stage_retention
from compressbench.pipeline.stages.scores import stage_scores

__all__ = [
    "retention_setup",
    "stage_answers",
    "stage_contexts",
    "stage_corpora",
    "stage_metrics",
    "stage_probes",
    "stage_retention",
    "stage_scores",
    "stage_transitions",
]
