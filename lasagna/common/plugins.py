"""Plugins: what fills lasagna's registries (tracks, judge benchmarks, metrics), found lazily.

A package adds kinds of evaluation through Python entry points in the groups `GROUPS`. Each
entry point names a registry module (the inspect_ai pattern); importing it registers its
components with the registries' own `register` calls, and heavy pieces are imported only
when they run. lasagna's own registry modules (`BUILTIN`) are loaded the same way, first,
as pytest loads its default plugins, so a lower layer's registry (the metric catalog, the
result columns, the data's capabilities) learns the in-tree tracks without importing them.

Nothing is loaded at import or for `--help`: a registry calls `lookup` when a name it is
asked for is missing (the in-tree modules first; the entry points only if still missing),
or `load` when it must list everything. Loading is once per process.

A plugin that fails (its import raises, or a registry refuses what it registers) is kept
out whole: what it had registered is undone, and one line on stderr names the package and
the problem (`lasagna plugins` lists every plugin and its state). It never stops a command.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

GROUPS = ("lasagna.tracks", "lasagna.judges", "lasagna.metrics")
BUILTIN = ("lasagna.tracks",)  # lasagna's own registry modules (each imports the others it needs)

T = TypeVar("T")


class PluginError(ValueError):
    """A registry refuses a component (a clash, a missing field): the message says which."""


@dataclass
class Plugin:
    """One entry point: where it comes from, what it registered, or why it did not load."""

    name: str  # the entry point's name
    group: str  # lasagna.tracks | lasagna.judges | lasagna.metrics
    module: str  # the registry module it names
    package: str  # the distribution that declares it
    version: str
    registered: list[str] = field(default_factory=list)  # "track extractive", "metric x", ...
    problem: str | None = None  # why it was not loaded; None: loaded

    @property
    def source(self) -> str:
        return f"{self.package} {self.version}".strip()

    def line(self) -> str:
        """The one line a broken plugin costs a command."""
        return (
            f"warning: plugin '{self.name}' ({self.group}) of package {self.source} was not "
            f"loaded: {self.problem}; fix: update the package or `pip uninstall {self.package}`"
            " (`lasagna plugins` lists every plugin)"
        )


@dataclass
class _Loading:
    registered: list[str] = field(default_factory=list)
    undo: list[Callable[[], None]] = field(default_factory=list)


_state: dict[str, bool] = {"builtin": False, "entry_points": False, "busy": False}
_plugins: list[Plugin] = []
_current: list[_Loading] = []


def registered(what: str, undo: Callable[[], None], listed: bool = True) -> None:
    """A registry's note of what it just registered ("judge answer-length") and how to take
    it back; kept only while a plugin loads (its record, unless not `listed`: what a
    registry declares below on its behalf, and its undo on failure)."""
    if _current:
        if listed:
            _current[-1].registered.append(what)
        _current[-1].undo.append(undo)


def load_builtin() -> None:
    """Import lasagna's own registry modules (once)."""
    if _state["builtin"] or _state["busy"]:
        return
    _state["builtin"] = _state["busy"] = True
    try:
        for name in BUILTIN:
            importlib.import_module(name)
    finally:
        _state["busy"] = False


def load(quiet: bool = False) -> list[Plugin]:
    """Every plugin, loaded once (the in-tree registry modules first); a broken one costs one
    line on stderr (none when `quiet`) and nothing else."""
    load_builtin()
    if _state["entry_points"] or _state["busy"]:
        return list(_plugins)
    _state["entry_points"] = _state["busy"] = True
    try:
        modules: dict[str, tuple[list[str], str | None]] = {}
        for plugin in _entry_points():
            if plugin.module not in modules:  # one module may serve several groups
                modules[plugin.module] = _import(plugin.module)
            plugin.registered, plugin.problem = modules[plugin.module]
            _plugins.append(plugin)
            if plugin.problem and not quiet:
                print(plugin.line(), file=sys.stderr)
    finally:
        _state["busy"] = False
    return list(_plugins)


def plugins() -> list[Plugin]:
    """Every plugin found, loaded or not, for `lasagna plugins` (no warnings: it lists them)."""
    return load(quiet=True)


def lookup(find: Callable[[], T | None]) -> T | None:
    """`find()`, loading the in-tree registry modules and then the plugins until it finds
    something: a name the built-ins know never scans the entry points."""
    found = find()
    if found is None and not _state["builtin"]:
        load_builtin()
        found = find()
    if found is None and not _state["entry_points"]:
        load()
        found = find()
    return found


def _entry_points() -> list[Plugin]:
    from importlib.metadata import entry_points

    found = entry_points()
    out = []
    for group in GROUPS:
        for ep in sorted(found.select(group=group), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            package = dist.metadata["Name"] if dist is not None else "?"
            version = dist.version if dist is not None else ""
            out.append(Plugin(ep.name, group, ep.value.split(":")[0], package, version))
    return out


def _import(module: str) -> tuple[list[str], str | None]:
    """(what the module registered, None) or ([], the problem): a failed module's
    registrations are undone, so a plugin is in whole or not at all."""
    loading = _Loading()
    _current.append(loading)
    try:
        importlib.import_module(module)
        return loading.registered, None
    except Exception as err:  # a plugin's bug must not stop an unrelated command
        for undo in reversed(loading.undo):
            undo()
        sys.modules.pop(module, None)
        return [], _describe(err)
    finally:
        _current.pop()


def _describe(err: Exception) -> str:
    if isinstance(err, PluginError):
        return str(err)
    text = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
