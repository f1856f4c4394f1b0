"""A sweep's benchmarks: each file loaded once, then filtered and sampled per entry."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lasagna.data.model import Benchmark
from lasagna.errors import Problem, UserError
from lasagna.sweep.schema import BenchmarkEntry, Sweep


@dataclass(frozen=True)
class PlannedBenchmark:
    """A benchmark of the sweep after filters and sampling."""

    index: int
    entry: BenchmarkEntry
    path: Path
    benchmark: Benchmark  # the selected rows; corpus and qrels as loaded
    rows_before_selection: int
    corpus_path: Path | None = None  # a corpus named beside the question file

    @property
    def name(self) -> str:
        return self.benchmark.name


def load_benchmarks(sweep: Sweep, base_dir: Path) -> list[PlannedBenchmark]:
    """Load each distinct (path, name, split) once; select rows per entry."""
    from lasagna.data import load_benchmark, select_rows

    problems: list[Problem] = []
    loaded: dict[tuple[Path, str | None, str | None, Path | None], Benchmark] = {}
    planned: list[PlannedBenchmark] = []
    for i, entry in enumerate(sweep.benchmarks):
        path = entry.resolve_path(base_dir)
        where = f"benchmarks[{i}]"

        def own(*args: Any, i: int = i, **kw: Any) -> Problem:
            return _on_its_line(sweep, i, Problem(*args, **kw))

        if not path.exists():
            problems.append(
                own(
                    f"no such file or folder: {path}",
                    where=where,
                    field="path" if entry.path else "name",
                    fix="relative paths are read from the sweep file's folder "
                    f"({base_dir}); correct the path or use an absolute one",
                )
            )
            continue
        corpus = entry.resolve_corpus(base_dir)
        if corpus is not None and not corpus.exists():
            problems.append(
                own(
                    f"no such corpus file or folder: {corpus}",
                    where=where,
                    field="corpus",
                    fix="relative paths are read from the sweep file's folder "
                    f"({base_dir}); correct the path or use an absolute one",
                )
            )
            continue
        reg_name = entry.name  # a built-in registers under its name, a path under name:
        cache_key = (path.resolve(), reg_name, entry.split, corpus.resolve() if corpus else None)
        try:
            if cache_key not in loaded:
                loaded[cache_key] = load_benchmark(
                    path, name=reg_name, split=entry.split, corpus=corpus
                )
            full = loaded[cache_key]
            selected = select_rows(
                full, filters=dict(entry.filters), n_samples=entry.n_samples, seed=sweep.seed
            )
        except UserError as err:
            problems += [_on_its_line(sweep, i, p, str(path)) for p in err.problems]
            continue
        planned.append(PlannedBenchmark(i, entry, path, selected, len(full.rows), corpus))
    problems += _same_entries(sweep, planned)
    if problems:
        raise UserError(problems, title=f"{len(problems)} problem(s) with the sweep's benchmarks")
    return planned


ENTRY_KEYS = ("path", "name", "corpus", "split", "n_samples", "filters")


def _on_its_line(sweep: Sweep, i: int, problem: Problem, data: str | None = None) -> Problem:
    """A problem of benchmark entry `i` on the sweep file's line of the key it is about
    (the data file it was found in, if another, named in the message)."""
    source = sweep.source
    if source is None or problem.field not in ENTRY_KEYS or (data and problem.file != data):
        return problem
    file, where = source.locate(("benchmarks", i, problem.field), expanded=False)
    message = f"{problem.message} (in {data})" if data else problem.message
    field = f"benchmarks[{i}].{problem.field}"
    return replace(problem, message=message, file=file, where=where, field=field)


def _same_entries(sweep: Sweep, planned: list[PlannedBenchmark]) -> list[Problem]:
    """Two entries of the same data and selection: every trial of the second would be one of
    the first (the same key), run twice and refused when the run is written."""
    first: dict[str, int] = {}
    problems = []
    for pb in planned:
        same = json.dumps([pb.benchmark.revision, selection_of(pb, sweep.seed)], default=str)
        if same not in first:
            first[same] = pb.index
            continue
        file, where = None, None
        if sweep.source is not None:
            file, where = sweep.source.locate(("benchmarks", pb.index), expanded=False)
        problems.append(
            Problem(
                f"benchmarks[{first[same]}] and benchmarks[{pb.index}] are the same data "
                f"({pb.benchmark.revision[:12]}) with the same rows selected: each trial "
                "would run twice",
                file=file,
                where=where,
                field=f"benchmarks[{pb.index}]",
                fix="remove one, or select other rows (n_samples, filters, split)",
            )
        )
    return problems


def selection_of(pb: PlannedBenchmark, sweep_seed: int) -> dict[str, Any]:
    """Which rows a trial saw. The sample seed is the sweep's, shared by all systems and
    repeats, so every system of a sweep is scored on the same questions."""
    entry = pb.entry
    return {
        "split": pb.benchmark.split,
        "n_samples": entry.n_samples,
        "filters": dict(entry.filters),
        "sample_seed": sweep_seed if entry.n_samples is not None else None,
    }
