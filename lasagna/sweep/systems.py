"""Moved to `lasagna.systems`; this name is kept so older imports keep working."""

from lasagna.systems import *  # noqa: F403
from lasagna.systems import __all__  # noqa: F401
