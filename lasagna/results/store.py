"""The result store: trial checkpoints (for --resume) and versioned, never-overwritten runs,
on a local folder or an object store (any fsspec URI: s3://, gs://, ...).

Layout under the output folder or URI:

    <output>/.trials/<key>/trial.json + v@<writer>/rows.parquet   a finished trial's
                                                   checkpoint (pointer + version folder)
    <output>/<run_id>/manifest.json                the run (its commit marker)
    <output>/<run_id>/trials/<key>.parquet         per-question rows of each trial

Names starting with '.' are never runs. Nothing is ever seen half-written: a run is
committed by a rename (local) or by its manifest written last (object stores,
`run_writer`); a checkpoint by replacing its pointer in one atomic step (`checkpoints`).
This module is the one import for all of it; each part lives in its own module.
"""

from lasagna.results.checkpoints import load_trial, remove_stale_temps, save_trial
from lasagna.results.layout import (
    CHECKPOINTS,
    DEFAULT_OUTPUT,
    MANIFEST,
    ROWS_FILE,
    TRIAL_JSON,
    Output,
)
from lasagna.results.run_writer import RESERVED, new_run_id, write_run
from lasagna.results.runs import (
    Run,
    RunSummary,
    list_runs,
    load_runs,
    open_run,
    run_holding,
)

__all__ = [
    "CHECKPOINTS",
    "DEFAULT_OUTPUT",
    "MANIFEST",
    "RESERVED",
    "ROWS_FILE",
    "TRIAL_JSON",
    "Output",
    "Run",
    "RunSummary",
    "list_runs",
    "load_runs",
    "load_trial",
    "new_run_id",
    "open_run",
    "remove_stale_temps",
    "run_holding",
    "save_trial",
    "write_run",
]
