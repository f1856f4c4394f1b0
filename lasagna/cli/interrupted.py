"""What `benchmark run` says after ^C: how much is kept and the command that goes on."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lasagna.sweep.plan import Plan


def resume_command(argv: Sequence[str]) -> str:
    """The command as the user gave it (sweep, output, every option), with `--resume`."""
    args = list(argv)
    if "--resume" not in args:
        args.append("--resume")
    return shlex.join(["lasagna", *args])


def interrupted_message(plan: Plan, argv: Sequence[str]) -> str:
    """`interrupted: 2 of 5 trial(s) are checkpointed in OUT; ...` with the `--resume`
    command (its trials are restored, only the rest run)."""
    from lasagna.results.checkpoints import has_checkpoint
    from lasagna.results.fs import Store

    keys = list(dict.fromkeys(t.key for t in plan.trials))
    try:
        kept = sum(has_checkpoint(plan.output, k) for k in keys)
    except Exception:  # an unreadable store: say what to run all the same
        return f"interrupted; to go on: {resume_command(argv)}"
    where = Store(plan.output).shown(Store(plan.output).path())
    encodings = "".join(f", and {e}" for e in kept_encodings(plan))
    return (
        f"interrupted: {kept} of {len(keys)} trial(s) are checkpointed in {where}{encodings}; "
        f"to go on (they are restored, the rest run): {resume_command(argv)}"
    )


def kept_encodings(plan: Plan) -> list[str]:
    """`2816 of 5183 passages encoded for dense:all-MiniLM-L6-v2` for each corpus encoding
    the run had begun (lasagna.retrieval.checkpoint): the next run takes it up."""
    from lasagna.cache.index import embeddings_dir
    from lasagna.retrieval.checkpoint import saved_rows

    revisions = {b.index: b.benchmark.index_revision for b in plan.benchmarks}
    said: dict[object, str] = {}
    for trial in plan.trials:
        for cfg in trial.system.dense_parts():  # every system says its own (RAG: its retriever's)
            entry = embeddings_dir(revisions[trial.benchmark_index], cfg)
            saved = None if entry in said else saved_rows(entry)
            if saved is not None:
                said[entry] = f"{saved[0]} of {saved[1]} passages encoded for {cfg.describe()}"
    return list(said.values())
