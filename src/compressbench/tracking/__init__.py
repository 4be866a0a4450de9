"""MLflow tracking and provenance (git state, content hashes, software environment, manifests).

Importing this package is cheap: mlflow is imported only when a run is opened or read.
"""

from compressbench.tracking.mlflow_log import (
    CELL_KEYS,
    DEFAULT_EXPERIMENT,
    CellRun,
    PipelineRun,
    TrackingError,
    cell_run_name,
    default_tracking_uri,
    flatten_params,
    log_cell,
    open_client,
    read_cells,
    read_pipeline_runs,
    resolve_tracking_uri,
    start_pipeline_run,
)
from compressbench.tracking.provenance import (
    MANIFEST_NAME,
    GitInfo,
    find_repo_root,
    git_info,
    hash_paths,
    path_digest,
    read_manifest,
    sha256_file,
    software_env,
    verify_manifest,
    write_manifest,
)

__all__ = [
    "CELL_KEYS",
    "DEFAULT_EXPERIMENT",
    "MANIFEST_NAME",
    "CellRun",
    "GitInfo",
    "PipelineRun",
    "TrackingError",
    "cell_run_name",
    "default_tracking_uri",
    "find_repo_root",
    "flatten_params",
    "git_info",
    "hash_paths",
    "log_cell",
    "open_client",
    "path_digest",
    "read_cells",
    "read_manifest",
    "read_pipeline_runs",
    "resolve_tracking_uri",
    "sha256_file",
    "software_env",
    "start_pipeline_run",
    "verify_manifest",
    "write_manifest",
]
