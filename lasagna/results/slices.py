"""Scores by slice: a run's questions grouped by a metadata key (`--by type`).

Every trial stores its rows' metadata as JSON text (the `metadata` column, written by the
engine: `metadata_column`), so a run can be read back by any key of it without the data
file: HotpotQA's `type` (bridge / comparison) or `level`, SQuAD's `title`, your own
`category`. A slice is the questions whose value of KEY is one value; a list value puts
the question in each of its items' slices, a missing key in the `(none)` slice. A dotted
key reads nested objects (`source.site`), as filters do (lasagna.data.select); `KEY:N`
cuts the key's numbers into N bins (lasagna.data.slicing).

A system's score on a slice is the mean of its per-question scores over the slice's
questions (each question's score is its mean over the trials: lasagna.results.pairwise),
so over all questions it is the trial's metric.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from lasagna.data.select import metadata_value
from lasagna.data.slicing import SliceKey, sliceable, slices
from lasagna.errors import Problem, UserError

if TYPE_CHECKING:
    from lasagna.results.model import TrialMeta
    from lasagna.results.pairwise import SystemScores
    from lasagna.results.runs import Run

METADATA = "metadata"  # the rows' column: each row's metadata as JSON text
ALL = "all"  # the whole group, shown beside its slices


def metadata_column(ids: Iterable[Any], rows: Iterable[Any]) -> list[str]:
    """The `metadata` column of a trial's rows (one JSON text per id, `{}` when it has
    none), from the data's rows (lasagna.data Row objects, or judge cases as dicts)."""
    by_id: dict[str, Any] = {}
    for row in rows:
        if isinstance(row, dict):
            by_id[str(row.get("id"))] = row.get("metadata")
        else:
            by_id[str(row.id)] = getattr(row, "metadata", None)
    return [json.dumps(by_id.get(str(i)) or {}, sort_keys=True, default=str) for i in ids]


def trial_metadata(run: Run, t: TrialMeta) -> list[tuple[str, dict[str, Any]]]:
    """(question id, metadata) of each row of a trial: its `metadata` column, or, for a
    trial written before rows kept it, its data file's (while the file is unchanged)."""
    rows = run.rows(t.key)
    ids = [str(i) for i in rows["id"].to_pylist()]
    if METADATA in rows.column_names:
        texts = rows[METADATA].to_pylist()
        return [(i, json.loads(text or "{}")) for i, text in zip(ids, texts, strict=True)]
    by_id, why = _data_file_metadata(json.dumps(dict(t.benchmark), sort_keys=True, default=str))
    if by_id is None:
        raise UserError(
            Problem(
                f"the rows of trial {t.key[:8]} ({t.system}) were written before lasagna kept "
                f"each row's metadata, and its data file cannot stand in: {why}",
                file=str(run.location),
                field="--by",
                fix="put the data file back where the run read it, or run the sweep again "
                "(without --resume, which restores these rows)",
            )
        )
    return [(i, by_id.get(i) or {}) for i in ids]


@lru_cache(maxsize=8)
def _data_file_metadata(block: str) -> tuple[dict[str, Any] | None, str | None]:
    """question id -> metadata of a trial's data file (`block`: its benchmark block as JSON;
    opened once per file and revision)."""
    from lasagna.results.data_file import open_data_file

    bench, why = open_data_file(json.loads(block))
    if bench is None:
        return None, why
    return {str(r.id): r.metadata for r in bench.rows}, None


def question_values(run: Run, trials: list[TrialMeta], key: str) -> dict[str, Any]:
    """question id -> its value of the metadata `key`, from the rows of `trials` (one
    group; None: the question has no such key)."""
    out: dict[str, Any] = {}
    for t in trials:
        for qid, metadata in trial_metadata(run, t):
            if qid not in out:
                out[qid] = metadata_value(metadata, key)
    return out


def group_slices(run: Run, trials: list[TrialMeta], by: str) -> dict[str, set[str]] | None:
    """slice -> question ids of one group's trials, in showing order (lasagna.data.slicing:
    `by` is KEY, or KEY:N for N bins of its numbers); None when no question has the key."""
    key = SliceKey.parse(by)
    values = question_values(run, trials, key.key)
    if all(v is None or v == [] for v in values.values()):
        return None
    return slices(values, key)


# `compare --by`: the first slices tested (largest first; bins in number order), the rest
# named in a note
COMPARED = 20


def compared(slices: dict[str, set[str]], title: str, notes: list[str]) -> dict[str, set[str]]:
    """The first COMPARED slices; the rest named once in `notes` (not once per metric)."""
    rest = list(slices)[COMPARED:]
    note = f"group {title}: {len(rest)} more slice(s) not compared: {', '.join(rest[:8])}"
    if rest and note + (" ..." if len(rest) > 8 else "") not in notes:
        notes.append(note + (" ..." if len(rest) > 8 else ""))
    return dict(list(slices.items())[:COMPARED])


def unknown_key(by: str, run: Run) -> UserError:
    """The error for a key no question of the run has, naming the keys the rows do have."""
    return UserError(
        Problem(
            f"no question of run {run.run_id} has metadata key {SliceKey.parse(by).key!r}",
            field="--by",
            fix=_keys_fix(run),
        )
    )


def _keys_fix(run: Run) -> str:
    """The keys to use: the plain ones first; many keys holding objects (BEIR SciFact's
    evidence, keyed by document id) counted, with one that works, not listed."""
    keys: dict[str, None] = {}
    nested: dict[str, Any] = {}  # key -> its first value
    for t in run.trials:
        try:
            for _, metadata in trial_metadata(run, t):
                for k, v in metadata.items():
                    if sliceable(v):
                        keys.setdefault(k)
                    else:
                        nested.setdefault(k, v)
        except UserError:
            continue
        if len(keys) > 20:
            break
    nested = {k: v for k, v in nested.items() if k not in keys}
    if not keys and not nested:
        return "its rows have no metadata: add a metadata object to each row of the data"
    if len(nested) <= 20:
        return "use one of: " + ", ".join(list(keys)[:20] + list(nested)[: 20 - min(len(keys), 20)])
    k, v = next(iter(nested.items()))
    many = f"one of the {len(nested):,} keys holding objects, e.g. --by {_example(k, v)}"
    return f"use one of: {', '.join(list(keys)[:20])}, or {many}" if keys else f"use {many}"


def _example(key: str, value: Any) -> str:
    """A --by that slices by a key holding an object: KEY.FIELD of a field with a plain
    value; else the key itself (each distinct value its own slice)."""
    if isinstance(value, dict):
        for field, inner in value.items():
            if sliceable(inner) and "." not in str(field):
                return f"{key}.{field}"
    return key


def restricted(scores: SystemScores, ids: set[str]) -> SystemScores:
    """A system's scores on the questions `ids` only (its mean: theirs)."""
    from dataclasses import replace

    if scores.questions is None:
        return replace(scores, mean=float("nan"), questions=None)
    kept = {i: v for i, v in scores.questions.items() if i in ids}
    mean = sum(kept.values()) / len(kept) if kept else float("nan")
    return replace(scores, mean=mean, questions=kept)
