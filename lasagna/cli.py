"""The `lasagna` command. Thin: parses arguments and calls into the packages.

Each handler imports what it needs lazily so `lasagna --help` stays instant.
User errors (`UserError`) print without a traceback and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from lasagna.errors import UserError

Handler = Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------- benchmark validate-data
def cmd_validate_data(args: argparse.Namespace) -> int:
    from lasagna.data import load_benchmark
    from lasagna.data.report import print_report

    benchmark = load_benchmark(args.path, name=args.name, split=args.split)
    print_report(benchmark)
    return 0


# ---------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lasagna",
        description="Distributed batch evaluator for RAG and LLM systems, on Ray.",
    )
    parser.add_argument("--version", action="version", version=_version())
    groups = parser.add_subparsers(dest="group", metavar="COMMAND", required=True)

    bench = groups.add_parser(
        "benchmark", help="validate data, plan and run benchmarks and sweeps",
        description="Validate data, plan and run benchmarks and sweeps.",
    )
    bsub = bench.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = bsub.add_parser(
        "validate-data", help="check a data file or BEIR folder and show what it supports",
        description="Load and validate a JSONL, CSV or JSON file or a BEIR folder; print its "
        "registered name, revision, counts and the tracks it supports.",
    )
    p.add_argument("path", help="a .jsonl, .csv or .json file, or a BEIR folder")
    p.add_argument("--name", help="register under NAME@<hash> instead of local/<stem>@<hash>")
    p.add_argument("--split", help="BEIR qrels split (qrels/<split>.tsv); default: test")
    p.set_defaults(handler=cmd_validate_data)

    return parser


def _version() -> str:
    from lasagna import __version__

    return f"lasagna {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except UserError as err:
        print(f"error: {err.render()}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
