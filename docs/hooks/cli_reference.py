"""MkDocs hook: pages generated from the code at build time, so they cannot fall behind it.

- `<!-- cli-reference -->`: one section per command of `lasagna.cli.build_parser()` (every
  sub-command, at any depth: usage, description, a table of its arguments);
- `<!-- metric-catalog -->`: one table per track from `lasagna.metrics.catalog`;
- `<!-- layers -->`: the package layers, top first, from the ranks that
  tests/test_import_graph.py enforces.
Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI_MARKER = "<!-- cli-reference -->"
METRIC_MARKER = "<!-- metric-catalog -->"
LAYER_MARKER = "<!-- layers -->"


def _import_path() -> None:
    """Document this tree's lasagna, whatever is installed."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def commands(
    parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ("lasagna",)
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """(command path, its parser, its one-line help) for the root and every sub-command."""
    if parser is None:
        _import_path()
        from lasagna.cli import build_parser

        parser = build_parser()
    yield path, parser, parser.description or ""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                for entry in commands(sub, (*path, name)):
                    if entry[0] == (*path, name):
                        entry = (entry[0], entry[1], helps.get(name, ""))
                    yield entry


def anchor(path: tuple[str, ...]) -> str:
    """The heading id MkDocs gives `## lasagna results sql`: lasagna-results-sql."""
    return "-".join(path).lower()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = ""
    if action.nargs != 0:
        choices = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
        metavar = action.metavar or choices or action.dest.upper()
        if isinstance(metavar, tuple):
            metavar = " ".join(metavar)
        metavar = f" {metavar}"
    return ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = ""
    if action.help:
        formatter = parser._get_formatter()
        text = formatter._expand_help(action)  # %(default)s and friends, as --help prints
    return _cell(text)


def render_cli() -> str:
    """Markdown: one `##` section per command, in the order `--help` lists them."""
    os.environ.setdefault("COLUMNS", "100")
    out: list[str] = []
    for path, parser, summary in commands():
        out.append(f"## {' '.join(path)}\n")
        if summary and summary != parser.description:
            out.append(f"*{_cell(summary)}*\n")
        if parser.description:
            out.append(f"{_cell(parser.description)}\n")
        out.append(f"```text\n{parser.format_usage().strip()}\n```\n")
        rows = []
        subs = []
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if isinstance(action, argparse._SubParsersAction):
                for name in action.choices:
                    sub = (*path, name)
                    subs.append(f"[`{' '.join(sub)}`](#{anchor(sub)})")
                continue
            rows.append(f"| {_flags(action)} | {_help(parser, action)} |")
        if subs:
            out.append("Commands: " + ", ".join(subs) + ".\n")
        if rows:
            out.append("| argument | meaning |\n|---|---|\n" + "\n".join(rows) + "\n")
    return "\n".join(out)


def render_metrics() -> str:
    """Markdown: the metric catalog, one table per track."""
    _import_path()
    from lasagna.metrics import catalog
    from lasagna.tracks import track_names

    out: list[str] = []
    for track in track_names():
        metrics = catalog.metrics_of(track, "detail")
        if not metrics:
            continue
        out.append(f"## {track}\n")
        out.append("| metric | better | shown | description |\n|---|---|---|---|")
        for m in metrics:
            shown = m.level + (", primary" if m.primary else "")
            out.append(f"| `{m.name}` | {m.direction} | {shown} | {_cell(m.description)} |")
        out.append("")
    return "\n".join(out)


def layer_ranks() -> dict[str, int]:
    """The import-graph test's ranks: package -> layer (higher imports lower)."""
    import importlib.util

    path = ROOT / "tests" / "test_import_graph.py"
    spec = importlib.util.spec_from_file_location("_lasagna_import_graph", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.RANK)


def render_layers() -> str:
    """Markdown: a table of the layers, the top (imports everything below) first."""
    by_rank: dict[int, list[str]] = {}
    for package, rank in layer_ranks().items():
        by_rank.setdefault(rank, []).append(package)
    rows = [
        f"| {rank} | {', '.join(f'`{p}`' for p in sorted(packages))} |"
        for rank, packages in sorted(by_rank.items(), reverse=True)
    ]
    return "| layer | packages |\n|---|---|\n" + "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, render_cli())
    if METRIC_MARKER in markdown:
        markdown = markdown.replace(METRIC_MARKER, render_metrics())
    if LAYER_MARKER in markdown:
        markdown = markdown.replace(LAYER_MARKER, render_layers())
    return markdown
