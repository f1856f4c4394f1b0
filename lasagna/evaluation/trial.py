"""The row of an evaluation being scored (`current_datapoint()`), for evaluators; the rows
themselves run in the sdk track's stage (lasagna.stages.sdk_rows)."""

from lasagna.stages.sdk_rows import (  # noqa: F401 (the public names, and the tests' own)
    _CURRENT,
    RowSpec,
    current_datapoint,
    run_row,
    run_row_async,
)

TrialSpec = RowSpec  # the spec's word for a row: a datapoint x trial index
run_trial, run_trial_async = run_row, run_row_async

__all__ = ["RowSpec", "TrialSpec", "current_datapoint", "run_row", "run_row_async"]
