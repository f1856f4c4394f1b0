"""The TREC run format: whitespace-free tags and file names, and the run lines of one
trial (`qid Q0 docid rank score tag`) built with Arrow, scores at round-trip precision."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from lasagna.errors import Problem, UserError
from lasagna.results.model import TrialMeta

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.results.runs import Run

RANKED_COLUMNS = ("id", "doc_ids", "scores")  # what a retrieval trial's rows hold
_BAD_TAG = re.compile(r"[^A-Za-z0-9_.+:=@-]+")
_BAD_FILE = re.compile(r"[^A-Za-z0-9.@+-]+")


def sanitize_tag(name: str) -> str:
    """A run tag without whitespace (TREC fields are whitespace-separated)."""
    return _BAD_TAG.sub("_", name).strip("_") or "lasagna"


def safe_file_part(name: str) -> str:
    """A name any file system takes: `local/sample@8e7c` -> `local_sample@8e7c`."""
    return _BAD_FILE.sub("_", name).strip("_.") or "lasagna"


def trec_file_names(trials: list[TrialMeta]) -> list[str]:
    """`<benchmark>__<system>.trec` per trial; repeats and clashes get `__rep<n>`, then the key."""
    base = [
        f"{safe_file_part(str(t.benchmark.get('name', 'data')))}__{safe_file_part(t.system)}"
        for t in trials
    ]
    names = []
    for t, b in zip(trials, base, strict=True):
        if base.count(b) > 1:
            b += f"__rep{t.repeat}"
        names.append(b)
    return [
        f"{n}__{t.file_name[:12]}.trec" if names.count(n) > 1 else f"{n}.trec"
        for t, n in zip(trials, names, strict=True)
    ]


def trec_lines(run: Run, trial: TrialMeta, tag: str, chunk: int = 20_000) -> Iterator[bytes]:
    """The TREC run lines of one trial in stored order, as UTF-8 blocks of `chunk` questions.

    Vectorized with Arrow (10M lines in seconds); scores use Arrow's shortest round-trip
    float text, so trec_eval parses back exactly the stored doubles.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from lasagna.metrics.catalog import exports_of

    rows = run.rows(trial.key)
    where = run.rows_path(trial.key)
    missing = [c for c in RANKED_COLUMNS if c not in rows.column_names]
    if missing:
        ranked = "trec" in exports_of(trial.track)  # its file lost what its track writes
        raise UserError(
            Problem(
                f"trial {trial.key} has no column(s) {missing}",
                file=where,
                fix="the run folder is damaged; re-run it"
                if ranked
                else "only retrieval trials with ranked lists can be exported",
            )
        )
    for start in range(0, rows.num_rows, chunk):
        part = rows.slice(start, chunk)
        ids = part["id"].combine_chunks().cast(pa.string())
        docs = part["doc_ids"].combine_chunks()
        scores = part["scores"].combine_chunks()
        n_docs = pc.fill_null(pc.list_value_length(docs), 0)
        same = pc.equal(n_docs, pc.fill_null(pc.list_value_length(scores), 0))
        if not pc.all(same).as_py():
            bad = pc.index(same, False).as_py()
            raise UserError(
                Problem(
                    "the numbers of doc ids and scores differ",
                    where=f"id {ids[bad].as_py()}",
                    file=where,
                    fix="the run is damaged; re-run it",
                )
            )
        _check_tokens(ids, "question id", where)
        flat_docs = pc.list_flatten(docs).cast(pa.string())
        _check_tokens(flat_docs, "document id", where)
        if len(flat_docs) == 0:
            continue
        parents = pc.list_parent_indices(docs)
        offsets = pc.take(docs.offsets, parents).cast(pa.int64())
        first = docs.offsets[0].as_py()  # non-zero when `docs` is a slice
        position = pa.array(range(first, first + len(flat_docs)), pa.int64())
        ranks = pc.add(pc.subtract(position, offsets), 1)
        lines = pc.binary_join_element_wise(
            pc.take(ids, parents),
            "Q0",
            flat_docs,
            ranks.cast(pa.string()),
            pc.list_flatten(scores).cast(pa.float64()).cast(pa.string()),
            tag + "\n",
            " ",
        )
        # no nulls and every line ends in "\n": the string data buffer IS the file text
        _validity, offsets_buf, data = lines.buffers()
        bounds = np.frombuffer(offsets_buf, dtype=np.int32)
        lo, hi = int(bounds[lines.offset]), int(bounds[lines.offset + len(lines)])
        yield data[lo:hi].to_pybytes()


def _check_tokens(values: pa.Array, what: str, where: str) -> None:
    import pyarrow.compute as pc

    bad = pc.or_(pc.is_null(values), pc.match_substring_regex(values, r"^$|\s"))
    if pc.any(bad).as_py():
        value = values[pc.index(bad, True).as_py()].as_py()
        raise UserError(
            Problem(
                f"{what} {value!r} is empty or contains whitespace, which TREC files cannot hold",
                file=where,
                fix="use ids without spaces in the data",
            )
        )
