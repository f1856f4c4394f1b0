"""What `lasagna eval` says when a file it runs raises: a mistake in the user's own code (a
SyntaxError, a wrong keyword to evaluate(), a module it cannot import) or an argument
evaluate() refuses is a user error, printed as FILE:LINE: ... with no frame of lasagna's
or runpy's (exit 2); an exception raised inside lasagna is lasagna's, with its traceback."""

from __future__ import annotations

import inspect
import os
import sys
import sysconfig
import traceback
from dataclasses import replace
from pathlib import Path

from lasagna.errors import Problem, UserError

_LASAGNA = Path(__file__).resolve().parents[1]
_LIBRARIES = tuple(
    {
        Path(p).resolve()
        for p in (
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
        )
    }
)


def _kind(filename: str) -> str:
    """'lasagna', 'library' (the standard library, installed packages, frozen modules) or
    'user' (the eval file and whatever else the user wrote)."""
    if filename.startswith("<"):
        return "library"
    path = Path(filename).resolve()
    if path.is_relative_to(_LASAGNA):
        return "lasagna"
    return "library" if any(path.is_relative_to(root) for root in _LIBRARIES) else "user"


def _shown(filename: str, path: Path) -> str:
    """A file as the user knows it: the eval file as named, others relative to here."""
    if Path(filename).resolve() == path.resolve():
        return str(path)
    rel = os.path.relpath(filename)
    return filename if rel.startswith("..") else rel


def _located(err: UserError, where: str) -> UserError:
    """A refusal raised by lasagna (evaluate()'s arguments, a data file) located at the
    line of the user's file that called it."""
    first = err.problems[0]
    if len(err.problems) == 1 and not err.title and first.file is None and first.where is None:
        file, _, line = where.rpartition(":")
        return UserError(replace(first, file=file, where=line))
    return UserError(err.problems, title=f"{where}: {err.title or 'refused'}")


def _evaluate_fix(exc: BaseException) -> str | None:
    """evaluate()'s arguments, for a call that names one it does not have."""
    api = sys.modules.get("lasagna.evaluation.api")  # imported by a call (no import cycle)
    if api is None or not (isinstance(exc, TypeError) and str(exc).startswith("evaluate()")):
        return None
    names = ", ".join(inspect.signature(api.evaluate).parameters)
    return f"evaluate() takes {names} (docs/sdk.md)"


def user_error(exc: BaseException, path: Path) -> UserError | None:
    """`exc`, raised running the eval file `path`, as a UserError when it is the user's
    doing; None when it was raised inside lasagna (a bug to report, with its traceback)."""
    if isinstance(exc, SyntaxError) and exc.filename and _kind(exc.filename) == "user":
        message = f"{type(exc).__name__}: {exc.msg}"
        return UserError(Problem(message, file=_shown(exc.filename, path), where=str(exc.lineno)))
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [i for i, f in enumerate(frames) if Path(f.filename).resolve() == path.resolve()]
    if not mine:
        return None
    where = f"{path}:{frames[mine[-1]].lineno}"
    if isinstance(exc, UserError):
        return _located(exc, where)
    run = frames[mine[0] :]
    own = [f for f in run if _kind(f.filename) != "library"]
    if _kind(own[-1].filename) != "user":
        return None  # raised in lasagna, even if through a library: not the user's to fix
    deeper = [f for f in frames[mine[-1] + 1 :] if _kind(f.filename) == "user"]
    message = f"{type(exc).__name__}: {exc}"
    if deeper:
        lines = [f"{_shown(f.filename, path)}:{f.lineno}, in {f.name}" for f in deeper]
        message += "\n  raised at " + "\n  called from ".join(reversed(lines))
    file, _, line = where.rpartition(":")
    return UserError(Problem(message, file=file, where=line, fix=_evaluate_fix(exc)))
