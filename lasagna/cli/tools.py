"""`lasagna report`, `lasagna view`, `lasagna eval` and `lasagna models`: the commands beside
the benchmark and results groups."""

from __future__ import annotations

import argparse
import sys

from lasagna.cli.parsers import command_group
from lasagna.common.tables import add_text_row


def cmd_report(args: argparse.Namespace) -> int:
    from lasagna.data.slicing import SliceKey
    from lasagna.results.report import write_report

    for by in args.by or []:
        SliceKey.parse(by)  # refuses KEY:N of a wrong N before any run is read
    summary = write_report(
        args.out,
        args.runs or None,
        output_dir=args.output,
        group=args.group,
        compare=tuple(args.compare) if args.compare else None,
        by=args.by,
    )
    for note in summary.notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"wrote {summary.path} ({summary.bytes / 1e6:.1f} MB: {summary.runs} run(s), "
        f"{summary.groups} group(s)); open it in a browser, it needs no network"
    )
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from lasagna.results.view.serve import serve

    serve(args.output, args.host, args.port, allow_remote=args.allow_remote)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from lasagna.evaluation.files import find_files, run_file

    codes = [0]
    for path in find_files(args.files):
        print(f"== {path}", file=sys.stderr)
        outcome = run_file(path, args.group)
        if outcome.error:
            codes.append(2 if outcome.user_error else 1)
            print(f"error: {outcome.error.rstrip()}", file=sys.stderr)
    return 1 if 1 in codes else max(codes)  # lasagna's own failure outranks the user's


def cmd_models_prepare(args: argparse.Namespace) -> int:
    from lasagna.cache.roots import check_writable_cache
    from lasagna.models.packaged import prepare_packaged_generator

    check_writable_cache()  # the converted folder goes there
    print(prepare_packaged_generator())
    return 0


def cmd_models_list(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.models.available import api_models, cached_models, packaged_models
    from lasagna.results.show import plain_table

    console = Console()
    folder, cached = cached_models()
    sections = [
        ("packaged (installed with lasagna)", packaged_models()),
        (f"Hugging Face cache ({folder})", cached),
        ("API models (only with a key)", api_models()),
    ]
    for title, models in sections:
        console.print(title, highlight=False)
        if not models:
            console.print(
                "  none (lasagna never downloads a model: copy a cache here, or name a folder)",
                highlight=False,
            )
            continue
        table = plain_table(None)
        for head in ("model", "kind", "here"):
            table.add_column(head, overflow="fold")
        for m in models:
            add_text_row(table, m.name, m.kind, m.state)
        console.print(table)
    return 0


def register(groups) -> None:
    rep = groups.add_parser(
        "report",
        help="write one self-contained HTML page: leaderboards, progression, compare, questions",
        description="Write ONE HTML file (plotly, styles and data inline; no network, no "
        "server) with, per comparability group: the leaderboard with 95% intervals, the "
        "progression of every metric over run time, two runs side by side with paired "
        "tests, failed trials and rows, and a filterable per-question drill-down.",
    )
    rep.add_argument(
        "runs", nargs="*", metavar="RUN", help="run ids, prefixes or folders (default: every run)"
    )
    rep.add_argument("--group", help="only this group: comparability key (or start) or benchmark")
    rep.add_argument(
        "--compare",
        nargs=2,
        metavar=("RUN_A", "RUN_B"),
        help="the runs put side by side (default: each group's newest two)",
    )
    rep.add_argument(
        "--by",
        action="append",
        metavar="KEY",
        help="each group's newest run by slice of this metadata key, as `lasagna results "
        "show RUN --by KEY` (KEY:N: N bins of its numbers; repeatable)",
    )
    rep.add_argument(
        "--output", default="results", help="results root holding the runs (default: ./results)"
    )
    rep.add_argument("--out", default="report.html", help="the HTML file to write")
    rep.set_defaults(handler=cmd_report)

    view = groups.add_parser(
        "view",
        help="serve the results root in a browser, live: running sweeps, leaderboards, traces",
        description="Serve the runs under --output (a folder or an object-storage URI) over "
        "HTTP, read-only: the report's views, kept current while sweeps write there (running "
        "sweeps and evaluations with their progress; a finished run joins the leaderboards), "
        "SDK traces, one question across runs, and deep links (/run/ID, /group/KEY, "
        "/compare?a=..&b=.., /trace/ID). No authentication: it listens on loopback unless "
        "--allow-remote.",
    )
    view.add_argument(
        "--output", default="results", help="results root to serve (default: ./results)"
    )
    view.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    view.add_argument(
        "--port", type=int, default=8765, help="port (default: 8765; 0: any free one)"
    )
    view.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host that is not loopback (anyone reaching it can read every run)",
    )
    view.set_defaults(handler=cmd_view)

    ev = groups.add_parser(
        "eval",
        help="run the evaluate() calls in Python files (default: evals/eval_*.py)",
        description="Run each FILE.py (every evals/eval_*.py when none is given) and the "
        "evaluate() calls in it; their runs land in the results root they name (default "
        "./results). Exits 2 when a file's own code fails (a SyntaxError, an import, an "
        "argument evaluate() refuses) or it runs no evaluate(); 1 when lasagna fails.",
    )
    ev.add_argument("files", nargs="*", metavar="FILE.py", help="files to run")
    ev.add_argument("--group", help="put every evaluation of these files in group G")
    ev.set_defaults(handler=cmd_eval)

    msub = command_group(
        groups, "models", "list and prepare models", "The models lasagna runs, all local."
    )
    ml = msub.add_parser(
        "list",
        help="the models a sweep can name here without a download, and how each runs",
        description="List the packaged models, the models in the local Hugging Face cache "
        "and the API models whose key is set, with how each local one runs on this machine.",
    )
    ml.set_defaults(handler=cmd_models_list)
    mp = msub.add_parser(
        "prepare",
        help="convert the packaged SmolLM2 GGUF into a cached "
        "Hugging Face folder vLLM loads (idempotent)",
        description="Convert the packaged SmolLM2 GGUF once into a cached "
        "Hugging Face folder keyed by the file's hash.",
    )
    mp.set_defaults(handler=cmd_models_prepare)
