"""`lasagna eval [FILE.py ...]`: run the evaluate() calls in Python files (like `lmnr eval`).

Each file runs as `__main__` in this process, so its functions travel to Ray workers by value
(nothing needs to be importable there). `--group` overrides the group of every call. A file
whose own code fails (a SyntaxError, an import, an argument evaluate() refuses) or that runs
no evaluate() is a user error (exit 2, FILE:LINE: ...); an exception raised inside lasagna
exits 1 with its traceback. Trials that fail inside a run are recorded in the run, not
counted as a failed file.
"""

from __future__ import annotations

import runpy
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lasagna.errors import Problem, UserError

EVALS_DIR = "evals"
PATTERN = "eval_*.py"

_GROUP: list[str] = []  # the --group override of the file being run
_RUNS: list[list[str]] = []  # evaluation ids made by the file being run


def group_override() -> str | None:
    return _GROUP[-1] if _GROUP else None


def note_run(evaluation_id: str) -> None:
    if _RUNS:
        _RUNS[-1].append(evaluation_id)


@contextmanager
def _running(group: str | None) -> Iterator[list[str]]:
    made: list[str] = []
    _RUNS.append(made)
    if group:
        _GROUP.append(group)
    try:
        yield made
    finally:
        _RUNS.pop()
        if group:
            _GROUP.pop()


@dataclass
class FileOutcome:
    path: str
    evaluations: list[str] = field(default_factory=list)
    error: str | None = None  # as printed after "error: "
    user_error: bool = False  # the file's own doing (exit 2), not lasagna's (exit 1)


def find_files(paths: list[str]) -> list[Path]:
    """The files named, or every evals/eval_*.py when none is."""
    if paths:
        files = [Path(p) for p in paths]
        missing = [p for p in files if not p.is_file()]
        if missing:
            raise UserError(
                [Problem("no such file", file=str(p), fix="check the path") for p in missing]
            )
        return files
    files = sorted(Path(EVALS_DIR).glob(PATTERN))
    if not files:
        raise UserError(
            Problem(
                f"no {PATTERN} files under {EVALS_DIR}/",
                file=str(Path(EVALS_DIR).resolve()),
                fix="name a file (lasagna eval my_eval.py) or add evals/eval_<name>.py",
            )
        )
    return files


def run_file(path: Path, group: str | None = None) -> FileOutcome:
    outcome = FileOutcome(str(path))
    saved_path = list(sys.path)
    sys.path.insert(0, str(path.resolve().parent))  # its sibling imports work, as with python
    try:
        with _running(group) as made:
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    said = exc.code if isinstance(exc.code, str) else f"status {exc.code}"
                    _refused(outcome, UserError(Problem(f"it exited: {said}", file=str(path))))
            except Exception as exc:
                _failed(outcome, exc, path)
            outcome.evaluations = list(made)
    finally:
        sys.path[:] = saved_path
    if outcome.error is None and not outcome.evaluations:
        problem = Problem(
            "it ran no evaluate() call",
            file=str(path),
            fix="call lasagna.evaluate(...) when the file runs (as __main__)",
        )
        _refused(outcome, UserError(problem))
    return outcome


def _refused(outcome: FileOutcome, err: UserError) -> None:
    outcome.error, outcome.user_error = err.render(), True


def _failed(outcome: FileOutcome, exc: Exception, path: Path) -> None:
    """A mistake in the user's code or arguments as FILE:LINE: ...; else lasagna's
    traceback."""
    from lasagna.evaluation.file_errors import user_error

    err = user_error(exc, path)
    if err is not None:
        _refused(outcome, err)
    else:
        trace = "".join(traceback.format_exception(exc, limit=8))
        outcome.error = f"{path}: {trace}"
