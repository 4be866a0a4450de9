"""A process that holds MLflow runs open, for the orphaned-run tests (kill it with -9).

``python run_holder.py URI EXPERIMENT ROOT READY_FILE`` opens a pipeline run of the metrics stage
(the project's ``start_pipeline_run``), logs one cell run, then logs a second cell whose answers
table never finishes reading (like an upload that hangs): that child run is open (RUNNING) when
``READY_FILE`` appears, holding ``<parent run id> <open child run name>``, and the process
blocks until it is killed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compressbench.tracking import log_cell, start_pipeline_run

CELL = {"dataset": "builtin", "probe": "P2", "seed": 42, "ratio": 0.3, "reader": "holder"}


class HangingRows(Sequence[dict[str, Any]]):
    """Table rows whose first read signals READY_FILE and then blocks for good."""

    def __init__(self, ready: Path, text: str) -> None:
        self.ready, self.text = ready, text

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: Any) -> Any:
        tmp = self.ready.with_suffix(".tmp")
        tmp.write_text(self.text, encoding="utf-8")
        tmp.rename(self.ready)
        while True:
            time.sleep(60)


def main(uri: str, experiment: str, root: str, ready: str) -> None:
    opts: dict[str, Any] = {"tracking_uri": uri, "experiment": experiment, "repo_root": root}
    with start_pipeline_run("tpbench", {"holder": True}, stage="metrics", **opts) as parent:
        log_cell(parent, {**CELL, "method": "done"}, metrics={"p2_strict": 1.0})
        name = "builtin/P2/seed=42/ratio=0.3/hanging"
        rows = HangingRows(Path(ready), f"{parent.run_id} {name}")
        log_cell(parent, {**CELL, "method": "hanging"}, run_name=name, table=rows)


if __name__ == "__main__":
    main(*sys.argv[1:5])
