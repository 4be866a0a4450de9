"""MLflow tracking and provenance (git state, content hashes, software environment, manifests).

Modules: ``store`` (tracking URI, client, experiments), ``values`` (keys and values for
MLflow), ``runs`` (logging pipeline and cell runs), ``inputs`` (tables and dataset inputs),
``query`` (reading runs back), ``provenance`` (git, hashes, environment, manifests),
``data_version`` (dvc.lock and DVC dep hashes), ``owner`` (the process owning a run),
``orphans`` (marking runs of dead owners KILLED).
Importing this package is cheap: mlflow is imported only when a run is opened or read.
"""

from compressbench.tracking.inputs import DatasetFile
from compressbench.tracking.provenance import (
    MANIFEST_NAME,
    GitInfo,
    environment_record,
    find_repo_root,
    git_info,
    hash_paths,
    installed_distributions,
    path_digest,
    read_manifest,
    sha256_file,
    software_env,
    verify_manifest,
    write_manifest,
)
from compressbench.tracking.query import (
    CellRun,
    DatasetRef,
    latest_cells,
    logged_tables,
    read_cell_table,
    read_cells,
    read_pipeline_runs,
)
from compressbench.tracking.runs import (
    ENVIRONMENT_ARTIFACT,
    ENVIRONMENT_HASH_TAG,
    PipelineRun,
    log_cell,
    start_pipeline_run,
)
from compressbench.tracking.store import (
    DEFAULT_EXPERIMENT,
    TrackingError,
    default_tracking_uri,
    open_client,
    resolve_tracking_uri,
)
from compressbench.tracking.values import CELL_KEYS, cell_run_name, flatten_params, split_numeric

__all__ = [
    "CELL_KEYS",
    "DEFAULT_EXPERIMENT",
    "ENVIRONMENT_ARTIFACT",
    "ENVIRONMENT_HASH_TAG",
    "MANIFEST_NAME",
    "CellRun",
    "DatasetFile",
    "DatasetRef",
    "GitInfo",
    "PipelineRun",
    "TrackingError",
    "cell_run_name",
    "default_tracking_uri",
    "environment_record",
    "find_repo_root",
    "flatten_params",
    "git_info",
    "hash_paths",
    "installed_distributions",
    "latest_cells",
    "log_cell",
    "logged_tables",
    "open_client",
    "path_digest",
    "read_cell_table",
    "read_cells",
    "read_manifest",
    "read_pipeline_runs",
    "resolve_tracking_uri",
    "sha256_file",
    "software_env",
    "split_numeric",
    "start_pipeline_run",
    "verify_manifest",
    "write_manifest",
]
