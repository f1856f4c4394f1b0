"""The lasagna version string, as results record it and `--version` prints it."""

from __future__ import annotations


def lasagna_version() -> str:
    from lasagna import __version__

    return __version__
