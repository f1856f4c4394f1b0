"""What a plan tells the user before it runs: requests that do less than they seem to.

Not errors (the run is still meaningful), but never silent: `n_samples: 500` on a file of
26 rows scores all 26, and the comparability key still records 500; `trials: 3` of systems
that sample nothing gives three equal scores (speed is what the repeats measure then).
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


def repeat_notes(plan: Plan, flag: bool = False) -> list[str]:
    """One line when the plan repeats systems none of which can score differently in a
    repeat (`SystemConfig.repeats_differ`); `flag`: the count came from `--trials`."""
    n = plan.sweep.trials
    if n < 2 or not plan.trials:
        return []
    if any(
        t.system.repeats_differ() or any(j.repeats_differ() for j in t.judges) for t in plan.trials
    ):
        return []
    what = f"--trials {n}" if flag else f"trials: {n}"
    return [
        f"{what}: nothing here samples (retrieval, greedy generation and judges answer "
        f"alike every time), so each system's {n} repeats score the same; they measure "
        "speed only (a generator with temperature > 0 draws anew per repeat)"
    ]
