"""What every command group's parser shares."""

from __future__ import annotations

import argparse


def command_group(groups, name: str, help_: str, description: str) -> argparse._SubParsersAction:
    """The parser of a command group (`lasagna NAME COMMAND ...`); returns its subparsers."""
    group = groups.add_parser(name, help=help_, description=description)
    return group.add_subparsers(dest="command", metavar="COMMAND", required=True)
