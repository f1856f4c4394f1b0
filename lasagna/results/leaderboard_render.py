"""The leaderboard as terminal tables: one table per comparability group, its title, its
number format and the captions of its tests (the groups themselves: lasagna.results.leaderboard)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table

from lasagna.common.tables import add_text_row
from lasagna.errors import Problem, UserError
from lasagna.judges.degenerate import about_metric, labelled, mark
from lasagna.metrics import catalog
from lasagna.metrics.corrections import describe
from lasagna.results.leaderboard import Group, LeaderboardLine, group_title
from lasagna.results.runs import Run, evaluation_info, is_evaluation
from lasagna.results.show import nothing_yet
from lasagna.results.table_fit import (
    GAP,
    NAME_LEAST,
    add_name_column,
    cells_width,
    fitting,
    name_room,
    table_width,
)


def fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def render_leaderboard(
    groups: list[Group],
    console: Console | None = None,
    notes: list[str] | None = None,
    where: str | None = None,
    empty: str | None = None,
) -> None:
    """One rich table per comparability group, then the notes (groups left out); `where`:
    the results root read; `empty`: what to say when there is no group (else that the root
    holds no results yet)."""
    console = console or Console()
    if not groups:
        said = empty or nothing_yet("results", where)
        console.print(said, soft_wrap=True, highlight=False)
        return
    _print_groups(groups, console)
    for note in notes or []:
        console.print(f"note: {note}")


def _ranks_by_runs(g: Group) -> dict[str, str]:
    """{the runs cell: "#1, #2"}: which lines' trials come from which runs."""
    ranks: dict[str, list[str]] = {}
    for i, line in enumerate(g.lines, 1):
        ranks.setdefault(_runs(line), []).append(f"#{i}")
    return {runs: ", ".join(r) for runs, r in ranks.items()}


def vs_best(line: LeaderboardLine) -> str:
    """The `p vs #1` cell: `≈ 0.4120` where not significantly different from the best."""
    if line.p_vs_best is None:
        return "-"
    p = f"{line.p_vs_best:.4f}" if line.p_vs_best >= 1e-4 else f"{line.p_vs_best:.1e}"
    return f"≈ {p}" if line.tie_with_best else p


def ties_caption(group: Group) -> str:
    m = sum(line.p_vs_best is not None for line in group.lines)
    return (
        "≈: not significantly different from #1 at 0.05 (paired randomization test on "
        f"per-question scores, {describe(group.correction, m)})"
    )


def interval_caption(group: Group) -> str | None:
    """What the `95% CI` column is over (None: no line has an interval)."""
    with_ci = [(i, line) for i, line in enumerate(group.lines, 1) if line.low is not None]
    if not with_ci:
        return None
    questions = (
        "percentile bootstrap over questions (1,000 resamples, seed 0; each question's score "
        "averaged over its trials)"
    )
    trials = "t-interval over trials (no per-question scores read)"
    over_trials = [f"#{i}" for i, line in with_ci if line.interval == "trials"]
    if not over_trials:
        return f"95% CI: {questions}"
    if len(over_trials) == len(with_ci):
        return f"95% CI: {trials}"
    return f"95% CI: {questions}; of {', '.join(over_trials)}: {trials}"


def _runs(line: LeaderboardLine) -> str:
    return line.runs[0] + (f" +{len(line.runs) - 1}" if len(line.runs) > 1 else "")


def line_cells(g: Group, line: LeaderboardLine) -> dict[str, str]:
    """One line's cells by column (the `also` metrics by name): the table shows them and
    `_fit` sizes the columns by them."""
    ci = f"[{fmt(line.low)}, {fmt(line.high)}]" if line.low is not None else "-"
    cells = {
        "metric": fmt(line.mean) + mark(about_metric(line.warnings, g.metric, g.track)),
        "ci": ci,
        "p": vs_best(line),
        "trials": str(line.n_trials),
        "runs": _runs(line),
    }
    for m in g.also:
        cells[m] = catalog.show(m, line.also.get(m)) + mark(about_metric(line.warnings, m, g.track))
    return cells


@dataclass
class _Fit:
    also: list[str]  # the `also` metrics shown
    runs: bool  # whether the runs column is
    room: int  # the name column's least width
    hidden: list[str]  # the fixed columns a very narrow terminal leaves out


def _fit(g: Group, rows: list[dict[str, str]], width: int) -> _Fit:
    """What is shown: what does not fit beside the names goes, the runs first (said under
    the table), then the last metrics, and on a terminal too narrow even for the rest,
    `trials`, then `p vs #1`; columns are as wide as their cells."""

    def col(header: str, key: str) -> int:
        return cells_width(header, [row[key] for row in rows])

    fixed = [cells_width("#", [str(len(g.lines))]), col(g.metric, "metric"), col("95% CI", "ci")]
    droppable = {"p vs #1": col("p vs #1", "p")} if g.tested else {}
    droppable["trials"] = col("trials", "trials")
    hidden: list[str] = []
    for name in ("trials", "p vs #1"):  # the least read first
        shown = fixed + list(droppable.values())
        if name not in droppable or width - sum(w + GAP for w in shown) - GAP + 1 >= NAME_LEAST:
            continue
        del droppable[name]
        hidden.append(name)
    always = fixed + list(droppable.values())
    optional = [col(m, m) for m in g.also] + [col("runs", "runs")]
    names = [line.system for line in g.lines]
    keep = fitting(always, optional, names, width)
    room = name_room([*always, *optional[:keep]], names, width)
    return _Fit(list(g.also[: min(keep, len(g.also))]), keep > len(g.also), room, hidden)


def _print_groups(groups: list[Group], console: Console) -> None:
    for g in groups:
        width = table_width(console)
        rows = [line_cells(g, line) for line in g.lines]
        fit = _fit(g, rows, width)
        also, with_runs, tested = fit.also, fit.runs, g.tested and "p vs #1" not in fit.hidden
        trials = "trials" not in fit.hidden
        # title and captions as lines of their own: a narrow table would wrap them
        console.print(group_title(g.benchmark, g.track), highlight=False, width=width)
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("#", justify="right", no_wrap=True)
        add_name_column(table, "system", [line.system for line in g.lines], fit.room)
        table.add_column(g.metric, justify="right", no_wrap=True)
        table.add_column("95% CI", justify="right", no_wrap=True)
        if tested:
            table.add_column("p vs #1", justify="right", no_wrap=True)
        for m in also:
            table.add_column(m, justify="right", no_wrap=True)
        if trials:
            table.add_column("trials", justify="right", no_wrap=True)
        if with_runs:
            table.add_column("runs", overflow="fold")
        for i, (line, row) in enumerate(zip(g.lines, rows, strict=True), 1):
            add_text_row(
                table,
                str(i),
                line.system,
                row["metric"],
                row["ci"],
                *([row["p"]] if tested else []),
                *(row[m] for m in also),
                *([row["trials"]] if trials else []),
                *([row["runs"]] if with_runs else []),
            )
        console.print(table, width=width)
        if g.shared:
            console.print(g.shared, highlight=False, markup=False, width=width)
        if not with_runs:
            for runs, ranks in _ranks_by_runs(g).items():
                console.print(f"runs of {ranks}: {runs}", highlight=False, width=width)
        left_out = g.also[len(also) :] + fit.hidden
        if left_out:
            shown = ", ".join(left_out)
            console.print(f"not shown: {shown} (a wider terminal shows them)", width=width)
        console.print(f"key {g.comparability_key}", highlight=False, width=width)
        caption = interval_caption(g)
        if caption:
            console.print(caption, highlight=False, width=width)
        if tested:
            console.print(ties_caption(g), highlight=False, width=width)
        for line in g.lines:
            for w in line.warnings:
                console.print(f"warning: {labelled(line.system, w)}", highlight=False, width=width)
        console.print()


def evaluations_hint(runs: list[Run], where: str, beside: bool = False) -> str | None:
    """What `results leaderboard` says of the evaluate() runs of a results root (None when it
    holds none): where their results are read instead; `beside`: benchmark runs are ranked
    above it, and the evaluations were left out of them."""
    evaluations = [r for r in runs if is_evaluation(r)]
    if not evaluations:
        return None
    reading = _reading(evaluations)
    if beside:
        return (
            f"{len(evaluations)} evaluate() run(s) in {where} are left out (the leaderboard "
            f"ranks benchmark runs): read them with {reading} and compare two with "
            "`lasagna results compare RUN_A RUN_B`"
        )
    return (
        f"the leaderboard ranks benchmark runs; the {len(evaluations)} evaluate() run(s) in "
        f"{where} are read with {reading} and compared with `lasagna results compare RUN_A "
        "RUN_B`"
    )


def _reading(evaluations: list[Run]) -> str:
    """The commands that read evaluate() runs: by group, and one by one those with none."""
    info = [evaluation_info(r) for r in evaluations]
    named = list(dict.fromkeys(str(g) for i in info if (g := i.get("group_name"))))
    bare = sum(not i.get("group_name") for i in info)
    if not named:
        return "`lasagna results show RUN`"
    by_group = f"`lasagna results progression {named[0]}` (group(s): {', '.join(named)})"
    return by_group + (f", `lasagna results show RUN` ({bare} with no group)" if bare else "")


def evaluation_group_refusal(runs: list[Run], wanted: str) -> UserError | None:
    """`--group NAME` of the leaderboard naming a group of evaluate() runs (None when it
    names none): those are read with `results progression`, not ranked."""
    mine = [r for r in runs if is_evaluation(r) and evaluation_info(r).get("group_name") == wanted]
    if not mine:
        return None
    return UserError(
        Problem(
            f"{wanted!r} is a group of {len(mine)} evaluate() run(s); the leaderboard ranks "
            "benchmark runs",
            field="--group",
            fix=f"lasagna results progression {wanted} (its evaluations over time), and "
            "lasagna results compare RUN_A RUN_B (two of them side by side)",
        )
    )
