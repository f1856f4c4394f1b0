"""The sweep YAML: what to run on which data, as strict pydantic models.

A sweep names benchmarks (a built-in `name:` or a `path:` read relative to the sweep
file's folder), the systems to compare (lists or grids, see `grid.py`), repeats (`trials`),
a seed, an output folder or URI and stage resources. Unknown keys are errors with a line
and a "did you mean"; every problem of a file is reported at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, create_model, field_validator, model_validator

import lasagna
from lasagna.common.uri import resolve_location
from lasagna.sweep.fields import grid_fields, system_fields
from lasagna.sweep.grid import expand_systems
from lasagna.sweep.yamlsrc import read_yaml
from lasagna.systems import Strict
from lasagna.systems.base import resources_model

# Built-in benchmarks, by the name a sweep gives with `name:` and no `path:`.
BUILTINS: dict[str, Path] = {
    "sample": Path(lasagna.__file__).parent / "sample" / "sample.jsonl",
}

Scalar = str | int | float | bool | None


def builtin_path(name: str) -> Path:
    """The file of a built-in benchmark; ValueError listing the known ones otherwise."""
    if name not in BUILTINS:
        known = ", ".join(sorted(BUILTINS))
        raise ValueError(
            f"'{name}' is not a built-in benchmark (built-ins: {known}); "
            f"to use a file of your own, write path: instead of name:"
        )
    return BUILTINS[name]


class BenchmarkEntry(Strict):
    """One benchmark of a sweep: a built-in `name:`, or a `path:` with an optional name."""

    name: str | None = None  # built-in name, or the display/registration name of a path
    path: str | None = None  # file or BEIR folder, relative to the sweep file; ~, $VARS expand
    split: str | None = None
    n_samples: int | None = Field(default=None, ge=1)
    filters: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)
    # a corpus the questions are searched in (corpus.jsonl or .parquet, BEIR folder or
    # documents folder), relative to the sweep file like path:
    corpus: str | None = None

    @model_validator(mode="after")
    def _name_or_path(self) -> BenchmarkEntry:
        if self.path is None:
            if self.name is None:
                raise ValueError("a benchmark needs name: (a built-in) or path: (your file)")
            builtin_path(self.name)
        return self

    def resolve_corpus(self, base_dir: Path) -> Path | None:
        """Where the named corpus is (read from `base_dir`), or None."""
        if self.corpus is None:
            return None
        p = Path(os.path.expandvars(self.corpus)).expanduser()
        return p if p.is_absolute() else base_dir / p

    @property
    def is_builtin(self) -> bool:
        return self.path is None

    def resolve_path(self, base_dir: Path) -> Path:
        """Where the data is: the built-in's file, or `path` read from `base_dir`."""
        if self.path is None:
            return builtin_path(self.name or "")
        p = Path(os.path.expandvars(self.path)).expanduser()
        return p if p.is_absolute() else base_dir / p

    @property
    def display_name(self) -> str:
        return self.name or Path(self.path or "").name


class _SystemsBase(Strict):
    @model_validator(mode="before")
    @classmethod
    def _expand_grids(cls, data: Any) -> Any:
        """Grids are expanded here too, so a Sweep built in Python accepts them."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for field in grid_fields():
            if field in data:
                data[field], _, issues = expand_systems(data[field], field)
                if issues:
                    raise ValueError("; ".join(f"{i.message} ({i.fix})" for i in issues))
        return data


# The systems fields come from the track registry (lasagna.sweep.fields: plugins' tracks
# included), the `resources:` keys from the stage keys registered with them.
_FIELDS = system_fields()  # loads the plugins first
Resources = resources_model()
Systems = create_model(
    "Systems",
    __base__=_SystemsBase,
    __module__=__name__,
    __doc__="The keys a sweep and a profile share: what to compare, how often, where.",
    description=(str | None, None),
    **_FIELDS,  # retrievers, generators, judges, ... (one per track)
    trials=(int, Field(default=1, ge=1)),  # repeats, each with its own derived seed
    seed=(int, 0),
    resources=(Resources, Resources()),
)


FIX_MARK = "\nFix: "  # a validator's message and its fix, split again by sweep.validate


class Profile(Systems):  # type: ignore[misc,valid-type]
    """configs/profiles/<name>.yaml: a partial sweep users start from."""


class Sweep(Systems):  # type: ignore[misc,valid-type]
    """A whole experiment: benchmarks x systems x trials."""

    profile: str | None = None  # a profile whose keys are defaults for this sweep
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)
    output: str = "results"  # a local folder (relative to the sweep file) or a URI
    # the model-call cache: true = <output>/.model-calls, false = off, or a folder or URI
    cache: bool | str = True
    # the file and lines it was read from (lasagna.sweep.yamlsrc.SweepSource; None: built
    # in Python): later checks name the line of the system or key they refuse
    _source: Any = PrivateAttr(default=None)

    @property
    def source(self) -> Any:
        return self._source

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str | None) -> str | None:
        """An unknown profile is one more problem of the file, on its line."""
        from lasagna.sweep.profile_files import unknown_profile

        if value is not None and (problem := unknown_profile(value)) is not None:
            raise ValueError(f"{problem.message}{FIX_MARK}{problem.fix}")
        return value


def load_sweep(path: str | Path) -> tuple[Sweep, Path]:
    """Read and validate a sweep file; return it (profile not yet applied) and its folder.

    Relative `path:` entries and a relative `output:` are read from the returned folder.
    Apply the profile with `lasagna.sweep.profiles.resolve` (`build_plan` does).
    """
    from lasagna.sweep.validate import validate_document

    path = Path(path)
    data, lines = read_yaml(path)
    sweep = validate_document(Sweep, data, str(path), lines)
    return sweep, path.resolve().parent


def resolve_output(output: str, base_dir: Path) -> str:
    """The output location: a remote URI as written, a local folder (or `file://` URL) as an
    absolute path read from `base_dir`."""
    return resolve_location(output, base_dir)
