"""What a plan tells the user before it runs: selections that did less than they asked.

Not errors (the run is still meaningful), but never silent: `n_samples: 500` on a file of
26 rows scores all 26, and the comparability key still records 500.
"""

from __future__ import annotations

from lasagna.sweep.plan import Plan


def selection_notes(plan: Plan, single_file: bool = False) -> list[str]:
    """One line per benchmark whose sample asked for more rows than its filters kept."""
    notes = []
    for pb in plan.benchmarks:
        asked = pb.entry.n_samples
        kept = len(pb.benchmark.rows)
        if asked is None or asked <= kept:
            continue
        what = "--n-samples" if single_file else f"benchmarks[{pb.index}].n_samples"
        pool = (
            f"the {kept} rows"
            if kept == pb.rows_before_selection
            else (f"the {kept} rows the filters keep (of {pb.rows_before_selection})")
        )
        notes.append(f"{what} {asked} is more than {pool} of {pb.name}: all {kept} are scored")
    return notes
