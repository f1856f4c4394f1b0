"""`lasagna plugins`: the tracks, judge benchmarks and metrics that packages add through
entry points, where each comes from, and why one did not load."""

from __future__ import annotations

import argparse


def cmd_plugins(args: argparse.Namespace) -> int:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from lasagna.common.plugins import plugins
    from lasagna.common.tables import add_text_row
    from lasagna.judges.registry import benchmarks
    from lasagna.tracks import tracks

    found = plugins()
    console = Console()
    builtin_judges = [b for b, m in benchmarks().items() if m.__name__.startswith("lasagna.")]
    builtin_tracks = [t.name for t in tracks() if type(t).__module__.startswith("lasagna.")]
    console.print(
        f"built in: tracks {', '.join(builtin_tracks)}; {len(builtin_judges)} judge benchmarks",
        soft_wrap=True,
    )
    if not found:
        console.print(
            "no plugins: a package adds tracks, judges or metrics with an entry point in "
            "the group lasagna.tracks, lasagna.judges or lasagna.metrics",
            soft_wrap=True,
        )
        return 0
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for head in ("plugin", "group", "package", "module", "registers"):
        table.add_column(head, overflow="fold")
    for p in found:
        what = ", ".join(p.registered) or "nothing"
        state = Text(f"not loaded: {p.problem}", style="red") if p.problem else what
        add_text_row(table, p.name, p.group, p.source, p.module, state)
    console.print(table)
    broken = [p for p in found if p.problem]
    if broken:
        console.print(f"[red]{len(broken)} plugin(s) not loaded[/]: fix or uninstall the package")
    return 1 if broken else 0


def register(groups) -> None:
    p = groups.add_parser(
        "plugins",
        help="list the tracks, judges and metrics that installed packages add",
        description="List the entry points of the groups lasagna.tracks, lasagna.judges and "
        "lasagna.metrics: the package of each, what it registered, or why it was not loaded "
        "(exit 1 when one was not).",
    )
    p.set_defaults(handler=cmd_plugins)
