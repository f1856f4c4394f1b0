"""The judgments a trial was scored against, as a TREC qrels file, so `trec_eval` can score
an exported run and check lasagna's numbers.

A run stores ranked lists, not the judgments: they are rebuilt from the trial's data source
(the same loader and the same selection: filters, then the seeded sample) and used only if
the data's revision (sha256) is still the one the trial ran on. Pooled-gold judgments come
out exactly as the trial saw them, with the same derived document ids.
"""

from __future__ import annotations

from lasagna.errors import Problem, UserError
from lasagna.results.model import TrialMeta

Qrels = dict[str, dict[str, int]]


def trial_qrels(meta: TrialMeta) -> Qrels:
    """The judgments of the rows `meta` was scored on; UserError when the data is gone or
    has changed since (the revision no longer matches)."""
    from lasagna.data import load_benchmark, select_rows

    b = meta.benchmark
    source = b.get("source")
    if not source:
        raise UserError(Problem(f"trial {meta.key} records no data source"))
    try:
        full = load_benchmark(source, split=b.get("split"), corpus=b.get("corpus"))
    except UserError as err:
        raise UserError(
            Problem(
                f"the data of trial {meta.key} cannot be read any more: {err.problems[0].message}",
                file=source,
                fix="restore the file the run was made on to write its qrels",
            )
        ) from err
    if full.revision != b.get("revision"):
        raise UserError(
            Problem(
                f"the data changed since trial {meta.key} ran (revision {full.revision[:12]}, "
                f"the trial used {str(b.get('revision'))[:12]})",
                file=source,
                fix="restore the file the run was made on to write its qrels",
            )
        )
    selected = select_rows(
        full,
        filters=b.get("filters") or None,
        n_samples=b.get("n_samples"),
        seed=b.get("sample_seed") or 0,
    )
    return {row.id: dict(selected.qrels.get(row.id, {})) for row in selected.rows}


def qrels_text(qrels: Qrels) -> bytes:
    """`qid 0 docid grade` lines (the TREC qrels format), queries and documents sorted."""
    lines = []
    for qid in sorted(qrels):
        for doc in sorted(qrels[qid]):
            for token, what in ((qid, "question id"), (doc, "document id")):
                if not token or any(c.isspace() for c in token):
                    raise UserError(
                        Problem(
                            f"{what} {token!r} is empty or contains whitespace, which TREC "
                            "files cannot hold",
                            fix="use ids without spaces in the data",
                        )
                    )
            lines.append(f"{qid} 0 {doc} {int(qrels[qid][doc])}\n")
    return "".join(lines).encode()
