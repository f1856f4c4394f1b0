"""Rows that failed (lasagna.engine.row_failures): a trial whose every row failed is a failed
trial naming the rows' errors (not checkpointed, so --resume runs it again), and the run
summary says why some rows of a finished trial failed."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest
from rich.console import Console

from lasagna.engine.driver import RunOutcome
from lasagna.engine.failures import failure_reason
from lasagna.engine.row_failures import (
    EveryRowFailed,
    failed_rows_note,
    raise_if_every_row_failed,
    row_errors,
)
from lasagna.engine.summary import render_summary
from lasagna.results.model import TrialResult
from lasagna.tracks import get_track

DOWN = "APIConnectionError: Connection error."


def _rows(*errors: str | None) -> pa.Table:
    ids = [f"q{i}" for i in range(len(errors))]
    return pa.table({"id": ids, "error": pa.array(list(errors), pa.string())})


def test_a_trial_whose_every_row_failed_fails_with_the_rows_errors():
    with pytest.raises(EveryRowFailed) as info:
        raise_if_every_row_failed(row_errors(_rows(DOWN, "ValueError: too long", DOWN)))
    said = str(info.value)
    assert said == f"all 3 rows failed: {DOWN} (2); ValueError: too long (1)"
    assert failure_reason(info.value) == said  # the manifest's and the console's reason
    raise_if_every_row_failed(row_errors(_rows(DOWN, None)))  # one row answered: it stands
    raise_if_every_row_failed(row_errors(_rows()))  # no rows: nothing failed
    assert row_errors(pa.table({"id": ["q"]})) is None  # a track without an error column
    many = [f"E{i}: x" for i in range(5)]
    assert str(_raised(_rows(*many))).endswith("E2: x (1); 2 other error(s)")


def _raised(table: pa.Table) -> EveryRowFailed:
    with pytest.raises(EveryRowFailed) as info:
        raise_if_every_row_failed(row_errors(table))
    return info.value


def test_evaluate_keeps_its_failed_rows_and_benchmark_tracks_do_not():
    assert not get_track("sdk").fails_when_every_row_fails  # evaluate() lists them itself
    assert all(get_track(t).fails_when_every_row_fails for t in ("retrieval", "generation"))


def test_the_run_summary_says_why_rows_failed():
    assert failed_rows_note("rag", row_errors(_rows(None, None))) is None
    rows = _rows(None, "ValueError: prompt too long", None)
    trial = TrialResult(
        key="k",
        comparability_key="g",
        track="generation",
        system="closed_book",
        config={"kind": "closed_book"},
        benchmark={"name": "local/qa@aaaaaaaaaaaa"},
        metrics={"f1": 0.5},
        counts={"rows": 3, "failed": 1},
        extra={"row_errors": row_errors(rows)},  # kept with the trial
        rows=pa.table({"id": ["q0", "q1", "q2"]}),  # not read back: no error column here
    )
    out = io.StringIO()
    render_summary(RunOutcome("r1", "/x/r1", [trial], []), Console(file=out, width=200))
    said = "warning: closed_book: 1 of 3 rows failed: ValueError: prompt too long (1)"
    assert said in out.getvalue(), out.getvalue()
