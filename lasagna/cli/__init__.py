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
INTERRUPTED = 130  # ^C: 128 + SIGINT, as shells report it


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
    from lasagna.common import interrupts

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv  # as given: what a `--resume` hint repeats
    handler: Handler = args.handler
    if not sys.stdout.isatty():
        os.environ.setdefault("COLUMNS", "100")  # pipes and files: what a terminal shows
    if not getattr(args, "address", None) and not os.environ.get("RAY_ADDRESS"):
        from lasagna.engine.ray_session import prefer_loopback

        prefer_loopback()  # before anything imports ray
    interrupts.install()  # a ^C dropped on its way (a finalizer) still ends the command
    try:
        return handler(args)
    except UserError as err:
        print(f"error: {err.render()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        interrupts.acknowledge()
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as err:  # a stalled trial where the command stops at the first failure
        from lasagna.engine.watchdog import TrialStalled

        if not isinstance(err, TrialStalled):
            raise
        print(f"error: {err.reason}; run the same command again when it can fit", file=sys.stderr)
        return 1
