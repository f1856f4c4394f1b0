"""The `lasagna` command. Thin: parses arguments and calls into the packages.

One module per command group (benchmark, results, tools, plugins; calibrate and synthesize
under benchmark), each with its handlers and a `register(subparsers)` that adds its parsers.

Each handler imports what it needs lazily so `lasagna --help` stays instant.
User errors (`UserError`) print without a traceback and exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from lasagna.cli.plan_args import parse_filters, plan_from_args  # noqa: F401 (public: tests, scripts)
from lasagna.errors import UserError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    from lasagna.cli import benchmark, plugins, results, tools

    parser = argparse.ArgumentParser(
        prog="lasagna",
        description="Distributed batch evaluator for RAG and LLM systems, on Ray.",
    )
    parser.add_argument("--version", action="version", version=_version())
    groups = parser.add_subparsers(dest="group", metavar="COMMAND", required=True)

    benchmark.register(groups)
    results.register(groups)
    tools.register(groups)
    plugins.register(groups)
    return parser


def _version() -> str:
    from lasagna.common.version import lasagna_version

    return f"lasagna {lasagna_version()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed: for --resume hints
    handler: Handler = args.handler
    if not sys.stdout.isatty():
        os.environ.setdefault("COLUMNS", "100")  # pipes and files: what a terminal shows
    if not getattr(args, "address", None) and not os.environ.get("RAY_ADDRESS"):
        from lasagna.engine.ray_session import prefer_loopback

        prefer_loopback()  # before anything imports ray
    try:
        return handler(args)
    except UserError as err:
        print(f"error: {err.render()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
