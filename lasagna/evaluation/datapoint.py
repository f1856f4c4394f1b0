"""Datapoints and datasets, and the one function that gives every datapoint its task id.

Task ids follow this order: an explicit `task_id` (or `taskId`), then the row id of a
dataset file, then the position in the source data as a string ("0", "1", ...). Positions
and row ids are fixed when the data is loaded, so `take`, `select` and `shuffle` keep them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lasagna.errors import Problem, UserError

DICT_KEYS = {"data", "target", "metadata", "task_id", "taskId"}


@dataclass(frozen=True)
class Datapoint:
    """What the executor receives (`data`), what evaluators compare against (`target`), and
    `metadata` kept on the trial's row for filtering and SQL later."""

    data: Any
    target: Any = None
    metadata: dict[str, Any] | None = None
    task_id: str | None = None
    # set by a Dataset: the row id of a data file, or the position in the source data
    source_id: str | None = field(default=None, repr=False, compare=False)


def _from_dict(item: dict[str, Any], where: str) -> Datapoint:
    unknown = sorted(set(item) - DICT_KEYS)
    if unknown:
        raise UserError(
            Problem(
                f"unknown key(s) {', '.join(map(repr, unknown))}",
                where=where,
                field=unknown[0],
                fix="a datapoint dict (or a DataFrame's columns) has data, target, metadata "
                "and task_id (or taskId); put the rest in data, e.g. "
                '{"data": {"question": ...}, "target": ...}',
            )
        )
    if "data" not in item:
        raise UserError(
            Problem(
                "a datapoint needs 'data'",
                where=where,
                field="data",
                fix='write {"data": ..., "target": ...}',
            )
        )
    task_id = item.get("task_id", item.get("taskId"))
    return Datapoint(item["data"], item.get("target"), item.get("metadata"), task_id)


def _frame_rows(items: Any) -> Any:
    """A pandas DataFrame's rows as dicts (its columns: data, target, metadata, task_id),
    so it is not iterated as its column names; anything else as it is. A missing cell
    (NaN, pandas' NA) is a key the row leaves out, as a dict without it."""
    if hasattr(items, "to_dict") and hasattr(items, "columns") and hasattr(items, "iloc"):
        rows = items.to_dict(orient="records")
        return [{k: v for k, v in row.items() if not _missing(v)} for row in rows]
    return items


def _missing(value: Any) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def _check(point: Datapoint, where: str) -> Datapoint:
    if point.metadata is not None and not isinstance(point.metadata, dict):
        raise UserError(
            Problem(
                f"metadata must be a dict, not {type(point.metadata).__name__}",
                where=where,
                field="metadata",
                fix="pass metadata={'key': value} or leave it out",
            )
        )
    tid = point.task_id
    if tid is not None and (isinstance(tid, bool) or not isinstance(tid, str | int) or tid == ""):
        raise UserError(
            Problem(
                f"task_id must be a non-empty string (or an int), not {tid!r}",
                where=where,
                field="task_id",
                fix="give a string such as 'france', or leave it out to number by position",
            )
        )
    return point


@dataclass(frozen=True)
class Dataset:
    """An ordered set of datapoints; subsets keep every datapoint's original task id."""

    points: tuple[Datapoint, ...]
    source: str | None = None  # the file it was read from

    @classmethod
    def of(cls, items: Iterable[Datapoint | dict[str, Any]] | Dataset) -> Dataset:
        """Datapoints or dicts (or a pandas DataFrame, a dict per row); each gets its
        position as its source id."""
        if isinstance(items, Dataset):
            return items
        items = _frame_rows(items)
        if isinstance(items, str | bytes | dict) or not isinstance(items, Iterable):
            raise UserError(
                Problem(
                    f"data must be a list of Datapoints or dicts, not {type(items).__name__}",
                    field="data",
                    fix="pass data=[Datapoint(...), ...] or Dataset.from_file(path)",
                )
            )
        points = []
        for i, item in enumerate(items):
            where = f"data[{i}]"
            if isinstance(item, Datapoint):
                point = item
            elif isinstance(item, dict):
                point = _from_dict(item, where)
            else:
                raise UserError(
                    Problem(
                        f"a datapoint is a Datapoint or a dict, not {type(item).__name__}",
                        where=where,
                        fix="wrap it: Datapoint(data=...)",
                    )
                )
            point = _check(point, where)
            if point.source_id is None:
                point = replace(point, source_id=str(i))
            points.append(point)
        return cls(tuple(points))

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None) -> Dataset:
        """A JSONL, CSV, JSON or Parquet file through lasagna's loaders (validated, errors by line):
        `question` -> data, `answers` -> target (the answer, or the list when there are
        several), `id` -> task id (lasagna's row id: the file's id, else row<line>),
        `metadata` -> metadata."""
        from lasagna.data import load_benchmark

        if Path(path).is_dir():
            raise UserError(
                Problem(
                    "Dataset.from_file reads one file, not a folder",
                    file=str(path),
                    fix="pass a .jsonl, .csv, .json or .parquet file",
                )
            )
        benchmark = load_benchmark(path, name=name)
        points = []
        for row in benchmark.rows:
            data: Any = row.question
            if data is None and row.turns is not None:
                data = [{"role": t.role, "content": t.content} for t in row.turns]
            answers = list(row.answers)
            target = None if not answers else answers[0] if len(answers) == 1 else answers
            points.append(Datapoint(data, target, dict(row.metadata), None, row.id))
        return cls(tuple(points), str(path))

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[Datapoint]:
        return iter(self.points)

    def __getitem__(self, index: int) -> Datapoint:
        return self.points[index]

    def take(self, n: int) -> Dataset:
        """The first `n` datapoints."""
        return replace(self, points=self.points[: max(0, n)])

    def select(self, indices: Sequence[int]) -> Dataset:
        """The datapoints at these positions of this dataset, in this order."""
        try:
            return replace(self, points=tuple(self.points[i] for i in indices))
        except (IndexError, TypeError) as err:
            raise UserError(
                Problem(
                    f"select({list(indices)!r}): {err}",
                    field="indices",
                    fix=f"use integer positions 0..{len(self) - 1}",
                )
            ) from err

    def shuffle(self, seed: int = 0) -> Dataset:
        """A seeded permutation (the same seed gives the same order)."""
        order = list(self.points)
        random.Random(seed).shuffle(order)
        return replace(self, points=tuple(order))


def task_ids(dataset: Dataset) -> list[str]:
    """Every datapoint's task id (explicit, else row id / position); refuse duplicates."""
    ids: list[str] = []
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    for i, point in enumerate(dataset.points):
        tid = str(point.task_id) if point.task_id is not None else point.source_id or str(i)
        if tid in seen:
            problems.append(
                Problem(
                    f"task id {tid!r} is used again (first by datapoint {seen[tid]})",
                    file=dataset.source,
                    where=f"data[{i}]",
                    field="task_id",
                    fix="give every datapoint its own task_id (trials=N repeats a datapoint)",
                )
            )
        else:
            seen[tid] = i
        ids.append(tid)
    if problems:
        raise UserError(problems, title=f"{len(problems)} duplicate task id(s); nothing ran")
    return ids
