"""Export retrieval trials as standard TREC run files (`qid Q0 docid rank score tag`), with
the qrels they were scored against, so any trec_eval user can check our numbers.

Ranks are 1-based in stored order; scores are written with full (round-trip) precision so
trec_eval's own re-sort by score sees the same ties we did. Which trials:
- `trial=` (a trial key, key prefix, or system display name) picks one;
- otherwise a run with one retrieval trial exports it;
- otherwise (several trials) the target must be a folder: one file per trial,
  `<benchmark>__<system>.trec` (characters other than letters, digits and `.@+-` become `_`),
  and one `<benchmark>.qrels` per benchmark. A name ending in `.trec` is a file, never
  silently a folder: several trials there are refused with the fix.
A single file `X.trec` gets its qrels beside it as `X.qrels`; a stream gets none.
"""

from __future__ import annotations

import io
import os
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO, TextIO

from lasagna.errors import Problem, UserError
from lasagna.metrics.catalog import exports_of
from lasagna.results.layout import parquet_source
from lasagna.results.model import TrialMeta, matching_trials
from lasagna.results.store import DEFAULT_OUTPUT, Output, Run, open_run
from lasagna.results.trec_format import (  # noqa: F401 (sanitize_tag re-exported)
    RANKED_COLUMNS,
    safe_file_part,
    sanitize_tag,
    trec_file_names,
    trec_lines,
)

FILE_SUFFIXES = (".trec", ".txt", ".run")


def retrieval_trials(run: Run) -> list[TrialMeta]:
    """The trials whose rows are rankings: their track exports "trec" (the retrieval track,
    and any track that declares it: lasagna.metrics.catalog.exports_of)."""
    return [t for t in run.trials if "trec" in exports_of(t.track)]


def select_trials(run: Run, trial: str | None) -> list[TrialMeta]:
    """The retrieval trials to export (all, or the one `trial` names)."""
    trials = retrieval_trials(run)
    if not trials:
        raise UserError(
            Problem(
                "this run has no retrieval trial to export",
                file=run.path,
                fix="export a run of the retrieval track",
            )
        )
    if trial is None:
        return trials
    hits = matching_trials(trials, trial)
    if len(hits) != 1:
        listing = "; ".join(f"{t.key} ({t.system})" for t in trials)
        what = "matches no" if not hits else f"matches {len(hits)}"
        raise UserError(
            Problem(
                f"--trial {trial!r} {what} retrieval trial of run {run.run_id}",
                field="--trial",
                fix=f"give one trial key: {listing}",
            )
        )
    return hits


def check_rows(run: Run, trials: list[TrialMeta]) -> None:
    """Refuse (UserError, every damaged trial named) before anything is written: each
    trial's rows file must be readable Parquet with the ranked-list columns. Reads only
    the files' footers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    problems = []
    for t in trials:
        path = run.rows_path(t.key)
        shown = run.store.shown(path)
        fix = f"the run folder {run.store.shown(run.path)} is damaged; re-run it"
        try:
            with parquet_source(run.store, path) as (source, _threads):
                names = pq.ParquetFile(source).schema_arrow.names
        except (OSError, pa.ArrowException) as err:
            why = "is missing" if isinstance(err, FileNotFoundError) else f"cannot be read: {err}"
            problems.append(Problem(f"the rows file of trial {t.key} {why}", file=shown, fix=fix))
            continue
        if missing := [c for c in RANKED_COLUMNS if c not in names]:
            problems.append(
                Problem(
                    f"the rows file of trial {t.key} has no column(s) {missing}",
                    file=shown,
                    fix=fix,
                )
            )
    if problems:
        raise UserError(problems, title="nothing was exported")


def _write_temp(path: Path, blocks: Iterable[bytes]) -> Path:
    """`blocks` in a hidden file beside `path`, synced; the caller renames it to `path`."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.writelines(blocks)
            fh.flush()
            os.fsync(fh.fileno())
        return tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_atomic(path: Path, blocks: Iterable[bytes]) -> None:
    _write_all([(path, blocks)])


def _write_all(files: list[tuple[Path, Iterable[bytes]]]) -> None:
    """Every file or none: each is written to a temporary file first, and they are renamed
    into place only once all are written (a damaged trial met late leaves nothing)."""
    done: list[tuple[Path, Path]] = []
    path = files[0][0] if files else Path()
    try:
        for path, blocks in files:
            done.append((_write_temp(path, blocks), path))
        for tmp, path in done:
            os.replace(tmp, path)
    except OSError as err:
        for tmp, _path in done:
            tmp.unlink(missing_ok=True)
        raise UserError(
            Problem(
                f"cannot write the TREC file: {err.strerror or err}",
                file=str(path),
                fix="choose a writable path",
            )
        ) from err
    except BaseException:
        for tmp, _path in done:
            tmp.unlink(missing_ok=True)
        raise


def _write_qrels(
    trials: list[TrialMeta], path_for: Callable[[TrialMeta], Path], say: Callable[[str], None]
) -> list[str]:
    """One qrels file per distinct target path; a trial whose data is gone is said, not fatal."""
    from lasagna.results.qrels import qrels_text, trial_qrels

    written: list[str] = []
    for t in trials:
        path = path_for(t)
        if str(path) in written:
            continue
        try:
            text = qrels_text(trial_qrels(t))
        except UserError as err:
            say(f"qrels of {t.system} not written: {err.problems[0].render()}")
            continue
        _write_atomic(path, [text])
        written.append(str(path))
        judgments = text.count(b"\n")
        say(f"wrote {path}: qrels of {t.benchmark.get('name')} ({judgments} judgments)")
    return written


def export_trec(
    run: Run | str,
    target: str | os.PathLike[str] | TextIO | BinaryIO,
    tag: str | None = None,
    trial: str | None = None,
    output_dir: Output = DEFAULT_OUTPUT,
    qrels: bool = True,
    say: Callable[[str], None] | None = None,
) -> list[str]:
    """Write TREC run lines to a file, a folder (one file per trial) or a stream, and (for a
    file or folder, `qrels=True`) the qrels beside them. `say` hears one line per file.

    Returns the files written ("<stream>" for a stream), run files first.
    """
    say = say or (lambda _line: None)
    run = run if isinstance(run, Run) else open_run(run, output_dir)
    trials = select_trials(run, trial)
    check_rows(run, trials)
    listing = "; ".join(f"{t.key} ({t.system})" for t in trials)
    if hasattr(target, "write"):
        if len(trials) != 1:
            raise UserError(
                Problem(
                    f"run {run.run_id} has {len(trials)} retrieval trials",
                    field="--trial",
                    fix=f"pick one with --trial, or write them all with --out FOLDER: {listing}",
                )
            )
        t = trials[0]
        binary = isinstance(target, io.RawIOBase | io.BufferedIOBase)
        for block in trec_lines(run, t, sanitize_tag(tag or t.system)):
            target.write(block if binary else block.decode("utf-8"))  # type: ignore[arg-type]
        return ["<stream>"]
    path = Path(os.path.normpath(target))  # type: ignore[arg-type]
    if len(trials) == 1 and not path.is_dir():
        t = trials[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, trec_lines(run, t, sanitize_tag(tag or t.system)))
        say(f"wrote {path}: TREC run of {t.system} on {t.benchmark.get('name')}")
        extra = _write_qrels(trials, lambda _t: path.with_suffix(".qrels"), say) if qrels else []
        return [str(path), *extra]
    if path.suffix.lower() in FILE_SUFFIXES and not path.is_dir():
        names = ", ".join(trec_file_names(trials))
        raise UserError(
            Problem(
                f"run {run.run_id} has {len(trials)} retrieval trials, and {path.name} names "
                "one file",
                field="--out",
                fix=f"give a folder (e.g. --out {path.with_suffix('')}/) to get {names} and "
                f"their qrels, or pick one trial with --trial: {listing}",
            )
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(
            Problem(
                f"cannot create the folder: {err.strerror or err}",
                file=str(path),
                fix="several trials are written one file each into a folder; give a "
                "writable folder or pick one trial with --trial",
            )
        ) from err
    say(f"writing {len(trials)} TREC run file(s) and their qrels into {path}/")
    outs = [path / file_name for file_name in trec_file_names(trials)]
    tags = [sanitize_tag(tag or t.system) for t in trials]
    _write_all([(o, trec_lines(run, t, n)) for t, o, n in zip(trials, outs, tags, strict=True)])
    written = [str(out) for out in outs]
    for t, out in zip(trials, outs, strict=True):
        say(f"wrote {out}: TREC run of {t.system} on {t.benchmark.get('name')}")
    if qrels:
        qrels_names: dict[str, str] = {}  # one file per (benchmark, selection)
        for t in trials:
            qrels_names.setdefault(
                _selection_of(t), safe_file_part(str(t.benchmark.get("name", "data")))
            )
        bases = list(qrels_names.values())
        for sel, base in list(qrels_names.items()):
            qrels_names[sel] = f"{base}__{sel[:8]}" if bases.count(base) > 1 else base
        written += _write_qrels(
            trials, lambda t: path / f"{qrels_names[_selection_of(t)]}.qrels", say
        )
    return written


def _selection_of(t: TrialMeta) -> str:
    """Which judgments a trial used: its data revision, split and row selection."""
    from lasagna.common.digest import json_sha256

    b = t.benchmark
    fields = {k: b.get(k) for k in ("revision", "split", "n_samples", "filters", "sample_seed")}
    return json_sha256(fields)
