"""The data file a trial ran on, opened again from its recorded source: only while its
content hash still equals the trial's revision (a changed file is another data set).

The report's drill-down reads references and judgments through it, and `--by` reads the
metadata of trials written before rows kept their own (lasagna.results.slices)."""

from __future__ import annotations

from typing import Any


def open_data_file(meta: dict[str, Any]) -> tuple[Any, str | None]:
    """(the Benchmark, None), or (None, why not) for a trial's benchmark block `meta`."""
    from lasagna.data import load_benchmark
    from lasagna.errors import UserError

    source, revision = meta.get("source"), meta.get("revision")
    if not source:
        return None, "the trial recorded no data file"
    try:
        bench = load_benchmark(str(source), split=meta.get("split"), corpus=meta.get("corpus"))
    except (UserError, OSError) as err:
        return None, f"{source}: not readable ({str(err).splitlines()[0]})"
    if revision and bench.revision != revision:
        return None, (
            f"{source} changed since the run (revision {bench.revision[:12]}, run "
            f"{str(revision)[:12]})"
        )
    return bench, None
