"""The lasagna version string, as results record it and `--version` prints it.

Defined here (not in lasagna/__init__.py, which re-exports it) so that reading it imports
nothing above lasagna.common.
"""

from __future__ import annotations

VERSION = "0.1.0"  # keep equal to pyproject.toml's version


def lasagna_version() -> str:
    return VERSION
