"""`lasagna results compare` as tables: two runs (one table per shared comparability group,
per system and metric A, B, B - A, the paired questions and the two p-values) or the
systems of one run (one table per group and metric, a line per pair)."""

from __future__ import annotations

import math

from rich.console import Console

from lasagna.common.tables import add_text_row
from lasagna.judges.degenerate import flagged
from lasagna.metrics import catalog
from lasagna.metrics.corrections import describe
from lasagna.results.compare import Comparison
from lasagna.results.leaderboard import group_title
from lasagna.results.leaderboard_render import fmt
from lasagna.results.question_diffs import render_differences
from lasagna.results.show import plain_table
from lasagna.results.table_fit import GAP, cells_width, table_width
from lasagna.results.within import WithinRun


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def render_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """One table per shared comparability group (titled with its data and key): per system
    and metric, A, B, B - A, paired questions and p-values."""
    console = console or Console()
    width, by, hidden = table_width(console), comparison.by, set()
    console.print(f"[bold]{comparison.run_a}[/] (A) vs [bold]{comparison.run_b}[/] (B)")
    groups = comparison.groups or {
        comparison.lines[0].comparability_key: (comparison.benchmark, comparison.track)
    }
    for ckey, (benchmark, track) in groups.items():
        lines = [x for x in comparison.lines if x.comparability_key == ckey]
        if not lines:
            continue
        # title and caption as lines of their own: a narrow table would wrap them
        console.print(group_title(benchmark, track), highlight=False)
        table = plain_table(None)
        table.show_edge = False  # two more columns for the names
        labels = [[_system(x) for x in lines]] + ([[x.slice or "" for x in lines]] if by else [])
        cells = {  # the caption says the correction: short headers leave the names room
            "metric": [x.metric for x in lines],
            "A": [fmt(x.mean_a) for x in lines],
            "B": [fmt(x.mean_b) for x in lines],
            "B - A": ["-" if math.isnan(x.diff) else f"{x.diff:+.4f}" for x in lines],
            "n": [str(x.n) if x.n else "-" for x in lines],
            "p (t)": [_p(x.p_ttest_adj) for x in lines],
            "p (perm)": [_p(x.p_permutation_adj) for x in lines],
        }
        shown, least = _fit_names(labels, cells, width, ("p (t)",))
        for col, w in zip(["system", *([by] if by else [])], least, strict=True):
            table.add_column(col, overflow="fold", min_width=w)
        for col in shown:
            left = col == "metric"
            table.add_column(col, justify="left" if left else "right", no_wrap=True)
        for i in range(len(lines)):
            add_text_row(table, *(names[i] for names in labels), *(cells[c][i] for c in shown))
        hidden.update(c for c in cells if c not in shown)
        console.print(table, width=width)
        console.print(f"key {ckey}", highlight=False, width=width)
        for line in lines:
            if line.differences is not None:
                where = f" ({comparison.by}={line.slice})" if comparison.by else ""
                a, b = f"{line.system_a} in A", f"{line.system_b} in B"
                render_differences(console, a, b, line.metric + where, line.differences)
    console.print(
        "p: paired t-test / paired randomization test (up to 10,000 sign flips, seed 0; "
        f"exact for n <= 13), {describe(comparison.correction)} (each group and metric"
        + (", every slice's tests together)" if comparison.by else ")")
        + "; n: the questions both runs scored",
        highlight=False,
        width=width,
    )
    if hidden:
        console.print(f"not shown: {', '.join(sorted(hidden))} (a wider terminal shows it)")
    for note in comparison.notes:
        console.print(f"note: {note}")


def _system(line) -> str:
    same = line.system_a == line.system_b
    return line.system_a if same else f"{line.system_a} vs {line.system_b}"


def _effect(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:+.2f}"


LABEL_WORD_MAX = 30  # a label's word longer than this may still fold inside itself


def _longest_word(labels: list[str]) -> int:
    """The width that lets labels fold at spaces only (`bm25 stemmer=none` over two lines,
    never `stemmer=non` / `e`), up to `LABEL_WORD_MAX`."""
    words = [len(w) for label in labels for w in label.split()]
    return min(max(words, default=1), LABEL_WORD_MAX)


LABEL_MIN = 16  # columns each name keeps before the optional columns are left out
OPTIONAL = ("p (t)", "d")  # left out first on a narrow terminal: p (perm) decides the star


def _fit_names(
    labels: list[list[str]], cells: dict[str, list[str]], width: int, optional: tuple[str, ...]
) -> tuple[list[str], list[int]]:
    """(the cell columns shown, each name column's least width): the `optional` cells go
    while the names would get less than min(LABEL_MIN, longest) each; the names share what
    is left, folding at spaces where they can. Cell columns never fold (a metric's name
    read as `passage_recal` / `l@10` is no name)."""
    widths = {h: cells_width(h, c) for h, c in cells.items()}
    need = sum(min(LABEL_MIN, max(map(len, names))) + GAP for names in labels)
    shown = list(cells)
    for drop in optional:
        if width - sum(widths[h] + GAP for h in shown) >= need:
            break
        shown.remove(drop)
    room = (width - sum(widths[h] + GAP for h in shown)) // len(labels) - GAP
    least = [max(_longest_word(names), min(max(map(len, names)), max(room, 1))) for names in labels]
    return shown, least


MANY_PAIRS = 15  # above six systems: more pairs than a reader compares; --baseline is said


def render_within(within: WithinRun, console: Console | None = None) -> None:
    """One table per group and metric: each pair A vs B of the run's systems (best first),
    their means, B - A, d_z, paired n and the adjusted p-values; * marks a significant pair.
    On a narrow terminal p (t), then d, are left out (said under the table)."""
    console = console or Console()
    width = table_width(console)
    console.print(f"[bold]run {within.run_id}[/]: its systems compared pairwise", highlight=False)
    for g in within.groups:
        m = sum(p.p_permutation is not None for p in g.pairs)
        how = describe(within.correction, m if g.family is None else g.family)
        if g.family is not None and within.correction != "none":
            how += " (the pairs of every slice)"
        # title and caption as lines of their own: a narrow table would wrap them
        console.print(f"{g.title} · {g.metric}", highlight=False, width=width)
        table = plain_table(None)
        table.show_edge = False  # two more columns for the labels
        labels = ([p.a for p in g.pairs], [p.b for p in g.pairs])
        cells = {  # the caption says the correction: short headers leave the labels room
            "mean A": [catalog.show(g.metric, p.mean_a) for p in g.pairs],
            "mean B": [catalog.show(g.metric, p.mean_b) for p in g.pairs],
            "B - A": ["-" if math.isnan(p.diff) else f"{p.diff:+.4f}" for p in g.pairs],
            "d": [_effect(p.effect) for p in g.pairs],
            "n": [str(p.n) if p.n else "-" for p in g.pairs],
            "p (t)": [_p(p.p_ttest_adj) for p in g.pairs],
            "p (perm)": [
                _p(p.p_permutation_adj) + (" *" if p.significant else "  ") for p in g.pairs
            ],
        }
        shown, least = _fit_names(list(labels), cells, width, OPTIONAL)
        for col, w in zip(("A", "B"), least, strict=True):
            table.add_column(col, overflow="fold", min_width=w)
        for col in shown:
            table.add_column(col, justify="right", no_wrap=True)
        for i, p in enumerate(g.pairs):
            add_text_row(
                table,
                p.a,
                p.b,
                *(cells[col][i] for col in shown),
                style="bold" if p.significant else None,
            )
        console.print(table, width=width)
        console.print(f"key {g.comparability_key} · p {how}", highlight=False, width=width)
        if left := [c for c in cells if c not in shown]:
            console.print(
                f"not shown: {', '.join(left)} (a wider terminal shows them)", width=width
            )
        for p, d in zip(g.pairs, g.differences, strict=False):
            if d is not None:
                render_differences(console, p.a, p.b, g.metric, d)
        # a system whose judge did not judge: a difference of its scores says nothing
        for line in flagged(((s.label, t) for s in g.systems for t in s.trials), [g.metric]):
            console.print(f"warning: {line}", width=width, highlight=False)
        if g.baseline is None and len(g.pairs) > MANY_PAIRS:
            n = len(g.systems) - 1
            console.print(
                f"note: {len(g.pairs)} pairs; --baseline '{g.systems[0].label}' compares each "
                f"system with the best alone ({n} comparisons, a milder correction), "
                "--systems A B ... picks some",
                width=width,
                highlight=False,
            )
    if within.groups:  # nothing compared (one system a group): the notes alone say why
        console.print(
            "A is the better of the two (or the baseline); d: Cohen's d_z of the per-question "
            "differences; p: paired t-test / paired randomization test (up to 10,000 sign "
            "flips, seed 0; exact for n <= 13); * significant at 0.05 after the correction",
            highlight=False,
        )
    for note in within.notes:
        console.print(f"note: {note}", highlight=False)
