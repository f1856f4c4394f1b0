"""`--format markdown`: results as GitHub-flavoured Markdown, for a pull request, an issue
or a README: the leaderboard (a table per group, its key and captions under it), the
`leaderboard --across` tables and the `show RUN --by KEY` tables, each as the terminal
shows it (the same cells, from lasagna.results.leaderboard_render, across, slice_table),
whole: no column is left out for the width of a terminal. The best of each column (across)
or line (by slice), and the first line of a leaderboard, are bold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lasagna.metrics import catalog

if TYPE_CHECKING:
    from lasagna.results.across import AcrossTable
    from lasagna.results.leaderboard import Group
    from lasagna.results.slice_table import SliceGroup


def table(headers: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A Markdown table: the first `left` columns aligned left (names), the rest right
    (numbers); a `|` in a cell is escaped and a line break is a space."""
    aligns = [":---" if i < left else "---:" for i in range(len(headers))]
    lines = [headers, aligns, *rows]
    return "\n".join("| " + " | ".join(_cell(c) for c in line) + " |" for line in lines)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _section(title: str, body: str, notes: list[str]) -> str:
    """A bold title, the table, and its notes as a list under it."""
    return f"**{title}**\n\n{body}" + ("\n\n" + "\n".join(f"- {n}" for n in notes) if notes else "")


def _bold(text: str, yes: bool) -> str:
    return f"**{text}**" if yes and text not in ("", "-") else text


def leaderboard_markdown(groups: list[Group]) -> str:
    """A section per comparability group: its title, the table (rank, system, the metric,
    95% CI, p vs #1 where tested, the other main metrics, trials, runs), its key and the
    captions of its interval and tests."""
    from lasagna.results.leaderboard import group_title
    from lasagna.results.leaderboard_render import interval_caption, line_cells, ties_caption

    out = []
    for g in groups:
        headers = ["#", "system", g.metric, "95% CI"] + (["p vs #1"] if g.tested else [])
        headers += [*g.also, "trials", "runs"]
        rows = []
        for i, line in enumerate(g.lines, 1):
            cells = line_cells(g, line)
            rows.append(
                [
                    str(i),
                    line.system,
                    _bold(cells["metric"], i == 1),
                    cells["ci"],
                    *([cells["p"]] if g.tested else []),
                    *(cells[m] for m in g.also),
                    cells["trials"],
                    ", ".join(line.runs),
                ]
            )
        notes = [f"key `{g.comparability_key}`"]
        notes += [c for c in (interval_caption(g), ties_caption(g) if g.tested else None) if c]
        notes += [f"warning: {line.system}: {w}" for line in g.lines for w in line.warnings]
        out.append(_section(group_title(g.benchmark, g.track), table(headers, rows, 2), notes))
    return "\n\n".join(out) + "\n"


def across_markdown(tables: list[AcrossTable]) -> str:
    """A table per track: a line per system, `mean` then a column per benchmark; the best
    of each column in bold."""
    out = []
    for t in tables:
        means = [ln.mean for ln in t.lines]
        best = [catalog.best_index(t.metric, means)]
        best += [
            catalog.best_index(t.metric, [ln.values[j] for ln in t.lines])
            for j in range(len(t.columns))
        ]
        rows = [
            [ln.system]
            + [
                _bold(catalog.show(t.metric, v), b == i)
                for v, b in zip([ln.mean, *ln.values], best, strict=True)
            ]
            for i, ln in enumerate(t.lines)
        ]
        title = f"{t.track} · {t.metric} across {len(t.columns)} benchmarks"
        out.append(_section(title, table(["system", "mean", *t.columns], rows), []))
    caption = (
        "a cell: the system's leaderboard mean on that benchmark (over its trials); mean: "
        "their average, each benchmark counted once (- where one is missing); bold: the best "
        "of each column"
    )
    return "\n\n".join(out) + f"\n\n{caption}\n"


def slices_markdown(groups: list[SliceGroup]) -> str:
    """A table per group and metric: a line per slice (`all` first), `n`, a column per
    system (best first on all the questions); the best of each line in bold."""
    out = []
    for g in groups:
        rows = []
        for ln in g.lines:
            best = catalog.best_index(g.metric, ln.means)
            cells = [_bold(catalog.show(g.metric, m), k == best) for k, m in enumerate(ln.means)]
            rows.append([ln.value, str(ln.questions), *cells])
        notes = [f"{g.left_out} more slice(s) not shown"] if g.left_out else []
        notes += [f"warning: {w}" for w in g.warnings]
        out.append(_section(g.title, table([g.by, "n", *g.systems], rows), notes))
    return "\n\n".join(out) + "\n"
