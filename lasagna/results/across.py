"""`lasagna results leaderboard --across`: systems ranked over several benchmarks at once.

The table BEIR-style papers print: per track, a line per system and a column per
comparability group (a benchmark, its split, its corpus), each cell the group's leaderboard
mean (lasagna.results.leaderboard: the mean over the system's trials), and `mean`, the
average over the columns (a macro average: each benchmark counts once, whatever its size),
given only for a system that has every column. Systems are matched across groups by their
resolved config (the system id), so `bm25` on SciFact and `bm25` on HotpotQA are one line.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from lasagna.common.tables import add_text_row
from lasagna.metrics import catalog
from lasagna.results.leaderboard import Group, benchmark_runs, group_title, labels_by_system
from lasagna.results.leaderboard_data import num
from lasagna.results.show import plain_table
from lasagna.results.store import Run
from lasagna.results.table_fit import GAP, cells_width, column_chunks, table_width


@dataclass
class AcrossLine:
    system: str  # label, unique among the track's systems
    system_id: str
    values: list[float | None]  # one per column
    mean: float | None  # over the columns; None unless it has every one


@dataclass
class AcrossTable:
    track: str
    metric: str
    columns: list[str]  # short group titles
    keys: list[str]  # their comparability keys
    lines: list[AcrossLine] = field(default_factory=list)  # best mean first


def across(groups: list[Group], runs: list[Run]) -> list[AcrossTable]:
    """One table per (track, metric) of the leaderboard's `groups` (see the module
    docstring); a track with one group has nothing to put side by side and is left out."""
    configs = [t for r in benchmark_runs(runs) for t in r.trials]
    out = []
    for track, metric in dict.fromkeys((g.track, g.metric) for g in groups):
        mine = [g for g in groups if (g.track, g.metric) == (track, metric)]
        if len(mine) < 2:
            continue
        keys = {g.comparability_key for g in mine}
        labels = labels_by_system([t for t in configs if t.comparability_key in keys])
        table = AcrossTable(track, metric, _headers(mine), [g.comparability_key for g in mine])
        ids = list(dict.fromkeys(line.system_id for g in mine for line in g.lines))
        for sid in ids:
            values = [next((ln.mean for ln in g.lines if ln.system_id == sid), None) for g in mine]
            present = [v for v in values if v is not None and v == v]
            mean = sum(present) / len(present) if len(present) == len(values) else None
            table.lines.append(AcrossLine(labels.get(sid, sid[:8]), sid, values, mean))
        table.lines.sort(
            key=lambda ln: (
                ln.mean is None,
                catalog.sort_key(metric, ln.mean) if ln.mean is not None else 0.0,
                -sum(v is not None for v in ln.values),
                ln.system,
            )
        )
        out.append(table)
    return out


def _headers(groups: list[Group]) -> list[str]:
    """Each group's column header: its benchmark's name (without `local/` and the revision,
    with its split); where two would read the same, with what their titles do not share
    (`scifact test n=50`, `scifact test n=20`), else the full title."""
    short = []
    for g in groups:
        name = str(g.benchmark.get("name", "?")).removeprefix("local/").split("@")[0]
        split = g.benchmark.get("split")
        short.append(f"{name} {split}" if split else name)
    titles = [group_title(g.benchmark, g.track).split(" · ") for g in groups]
    out = []
    for s, title in zip(short, titles, strict=True):
        same = [t for x, t in zip(short, titles, strict=True) if x == s]
        # n=50 beside n=20, full corpus beside pooled gold; the revision only if alone
        differ = [p for p in title[1:] if not all(p in t for t in same)] or title[:1]
        out.append(s if len(same) == 1 else " ".join([s, *differ]))
    # still two alike (the same parts in another order): each group's full title
    return [h if out.count(h) == 1 else " · ".join(t) for h, t in zip(out, titles, strict=True)]


def render_across(tables: list[AcrossTable], console: Console | None = None) -> None:
    """The tables, the benchmark columns that do not fit beside `system` and `mean` in a
    table of their own below (and so on)."""
    console = console or Console()
    width = table_width(console)
    for t in tables:
        cells = [[catalog.show(t.metric, v) for v in ln.values] for ln in t.lines]
        means = [catalog.show(t.metric, ln.mean) for ln in t.lines]
        names = [ln.system for ln in t.lines]
        fixed = min(24, max(map(len, ["system", *names]))) + cells_width("mean", means) + 2 * GAP
        widths = [cells_width(c, [row[j] for row in cells]) for j, c in enumerate(t.columns)]
        chunks = column_chunks(widths, fixed, width)
        console.print()
        console.print(f"{t.track} · {t.metric} across {len(t.columns)} benchmarks", highlight=False)
        for cols in chunks:
            table = plain_table(None)
            table.add_column("system", overflow="fold", min_width=min(24, max(map(len, names))))
            table.add_column("mean", justify="right", no_wrap=True)
            for j in cols:
                table.add_column(Text(t.columns[j]), justify="right", no_wrap=True)
            best = [catalog.best_index(t.metric, [ln.mean for ln in t.lines])]
            best += [catalog.best_index(t.metric, [ln.values[j] for ln in t.lines]) for j in cols]
            for i, (ln, row, mean) in enumerate(zip(t.lines, cells, means, strict=True)):
                shown = [mean, *(row[j] for j in cols)]
                add_text_row(
                    table,
                    ln.system,
                    *(Text(c, "bold") if b == i else c for c, b in zip(shown, best, strict=True)),
                )
            console.print(table, width=width)
    console.print(
        "a cell: the system's leaderboard mean on that benchmark (over its trials); mean: "
        "their average, each benchmark counted once (- where a benchmark is missing); "
        "bold: the best of each column",
        highlight=False,
        width=width,
    )


def across_records(tables: list[AcrossTable]) -> list[dict[str, Any]]:
    """A record per table and system: track, metric, system, mean, then a field per
    benchmark column (`--format csv|json`)."""
    return [
        {
            "track": t.track,
            "metric": t.metric,
            "system": ln.system,
            "system_id": ln.system_id,
            "mean": num(ln.mean),
            **{c: num(v) for c, v in zip(t.columns, ln.values, strict=True)},
        }
        for t in tables
        for ln in t.lines
    ]


def write_across(tables: list[AcrossTable], fmt: str, out: TextIO) -> None:
    """JSON: an array of the records; CSV: one header of every field (a benchmark column of
    another table's track is empty)."""
    records = across_records(tables)
    if fmt == "json":
        json.dump(records, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
        return
    fields = list(dict.fromkeys(k for r in records for k in r))
    writer = csv.DictWriter(out, fieldnames=fields, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in records)
