"""The plan as a table, for `lasagna benchmark plan`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna.sweep.plan import Plan


def render_plan(plan: Plan, done_keys: Iterable[str], console: Any) -> None:
    """Print the trials as a table (benchmark, track, system, repeat, seed, key, status),
    systems named by their labels as the run names them (lasagna.systems.labels), after
    what the labels leave out: each system's kind and model, and the judges of judged
    generation.

    A column whose value is the same for every trial (one benchmark, one track, no
    repeats) is said once above the table instead, so the table fits 100 columns.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from lasagna.common.tables import add_text_row

    done = set(done_keys)
    rows = {pb.index: len(pb.benchmark.rows) for pb in plan.benchmarks}
    bench = {t.benchmark_index: f"{t.benchmark_name} ({rows[t.benchmark_index]} rows)"
             for t in plan.trials}  # fmt: skip
    varies = {
        "benchmark": len(bench) > 1,
        "track": len({t.track for t in plan.trials}) > 1,
        "repeat": any(t.repeat for t in plan.trials),
    }
    console.print(plan.sweep.description or "sweep plan", highlight=False, markup=False)
    for name, value in (("benchmark", next(iter(bench.values()), "")),
                        ("track", plan.trials[0].track if plan.trials else "")):  # fmt: skip
        if not varies[name] and value:
            console.print(f"{name}: {value}", highlight=False, markup=False)
    for line in _judges_and_models(plan):
        console.print(line, highlight=False, markup=False)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    for col in ("benchmark", "track", "system", "repeat", "seed", "trial key", "status"):
        if varies.get(col, True):
            fold = col in ("benchmark", "system")
            right = col in ("repeat", "seed")
            table.add_column(col, overflow="fold" if fold else "ellipsis", no_wrap=not fold,
                             justify="right" if right else "left")  # fmt: skip
    for n, t in enumerate(plan.trials, 1):
        cells = {
            "benchmark": bench[t.benchmark_index],
            "track": t.track,
            "system": t.system_name,
            "repeat": str(t.repeat),
            "seed": str(t.seed),
            "trial key": t.key,
            "status": Text("done", style="green") if t.key in done else "pending",
        }
        add_text_row(table, str(n), *(v for k, v in cells.items() if varies.get(k, True)))
    console.print(table)
    n_done = sum(t.key in done for t in plan.trials)
    console.print(
        f"{len(plan.trials)} trial(s): {n_done} done, {len(plan.trials) - n_done} pending. "
        f"Output: {plan.output}"
    )


def _judges_and_models(plan: Plan) -> list[str]:
    """What the table's labels leave out: each system description (kind and model) with
    the labels it covers, and the judges scoring judged generation trials."""
    described: dict[str, list[str]] = {}
    for t in plan.trials:
        names = described.setdefault(t.system.display_name(), [])
        if t.system_name not in names:
            names.append(t.system_name)
    # said only where it adds to the labels (a model's name), not for a grid of one kind
    lines = [
        f"  {', '.join(n)}: {d}"
        for d, n in described.items()
        if not all(label == d or label.startswith(f"{d} ") for label in n)
    ]
    lines = ["systems:", *lines] if lines else []
    lines += _shared(plan)
    lines += _encoders(plan)
    judged = [t for t in plan.trials if t.judges]
    if judged:
        judges = ", ".join(_judge(j) for j in judged[0].judges)
        lines.append(f"judges (score each {judged[0].track} trial's answers): {judges}")
    return lines


def _shared(plan: Plan) -> list[str]:
    """The settings every system of a track holds off its default (the labels leave them
    out: `bm25 k1=0.5` of a grid at b=0.3)."""
    from lasagna.systems.labels import shared_line

    tracks = list(dict.fromkeys(t.track for t in plan.trials))
    lines = []
    for track in tracks:
        line = shared_line([t.system_config for t in plan.trials if t.track == track])
        if line:
            lines.append(line if len(tracks) == 1 else f"{track}: {line}")
    return lines


def _encoders(plan: Plan) -> list[str]:
    """How each dense encoder runs (`backend` / `precision`, `auto` resolved for this
    machine's hardware): a bf16 or OpenVINO index scores slightly differently from fp32."""
    from lasagna.models.precision import hardware_kind

    runs: dict[str, None] = {}
    for t in plan.trials:
        for d in t.system.dense_parts():
            model, where = d.model.removeprefix("packaged:"), hardware_kind(d.encode.num_gpus > 0)
            runs[f"{model} as {d.backend} {d.precision} on {where}"] = None
    return [f"encoders: {', '.join(runs)}"] if runs else []


def _judge(judge: Any) -> str:
    params = " ".join(f"{k}={v}" for k, v in judge.parameters.items())
    return judge.display_name() + (f" ({params})" if params else "")
