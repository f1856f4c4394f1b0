"""Where profiles are (configs/profiles/<name>.yaml) and which names exist: no sweep schema
here, so the schema can refuse an unknown profile on its line (lasagna.sweep.profiles loads
and applies one)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import lasagna
from lasagna.errors import Problem

CONFIGS_ENV = "LASAGNA_CONFIGS"


def config_dirs() -> list[Path]:
    """Where configs/ may be: $LASAGNA_CONFIGS, the source tree next to the package, then the
    package's own copy (`lasagna/configs`, a link in the repository, files in a wheel)."""
    dirs = []
    if os.environ.get(CONFIGS_ENV):
        dirs.append(Path(os.environ[CONFIGS_ENV]).expanduser())
    pkg = Path(lasagna.__file__).resolve().parent
    dirs += [pkg.parent / "configs", pkg / "configs"]
    return dirs


def profile_files() -> dict[str, Path]:
    """Every profile found, by name; an earlier config dir wins."""
    found: dict[str, Path] = {}
    for d in config_dirs():
        for f in sorted((d / "profiles").glob("*.yaml")):
            found.setdefault(f.stem, f)
    return found


def list_profiles() -> list[str]:
    return sorted(profile_files())


def unknown_profile(name: str) -> Problem | None:
    """The problem of a profile name that names no profile file; None when one exists."""
    files = profile_files()
    if name in files:
        return None
    close = difflib.get_close_matches(name, list(files), n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    searched = ", ".join(str(d / "profiles") for d in config_dirs())
    return Problem(
        f"unknown profile '{name}' (profiles: {', '.join(sorted(files)) or 'none found'})",
        field="profile",
        fix=f"{hint}use one of them, or add {name}.yaml to a profiles folder "
        f"(searched {searched}; set ${CONFIGS_ENV} to add one)",
    )
