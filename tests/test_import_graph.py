"""The import graph of lasagna/: no cycles between modules, and dependencies point down the
layers (nothing low imports something high). Every import counts: at the top, inside
functions, and under `if TYPE_CHECKING:` (a type lives in the lowest layer that needs it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "lasagna"

# Lower rank = lower layer. A package may import its own layer or any lower one:
# cli -> evaluation / synth -> engine -> sweep -> tracks -> stages -> retrieval / results ->
# systems -> judges -> models -> data / metrics / cache -> common.
RANK = {
    "common": 0,
    "errors": 0,
    "cache": 0,
    "metrics": 1,
    "data": 1,
    "models": 2,
    "systems": 4,
    "retrieval": 5,
    "judges": 3,
    "results": 5,
    "stages": 6,
    "tracks": 7,
    "sweep": 8,
    "engine": 9,
    "evaluation": 10,
    "synth": 10,
    "cli": 11,
    "knowledge_evaluation_sdk": 11,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, modules: dict[str, Path], here: str) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:  # `from pkg import mod` imports the module pkg.mod
                sub = f"{node.module}.{a.name}"
                found.add(sub if sub in modules else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m in modules and m != here}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: _imports(ast.parse(path.read_text(encoding="utf-8")), modules, name)
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


def test_no_import_cycles() -> None:
    graph = _graph()
    # a package's __init__ re-exporting its own submodules is not a cycle Python trips on
    graph = {
        m: {
            d
            for d in deps
            if not (d.startswith(m + ".") and (ROOT.parent / Path(*m.split("."))).is_dir())
        }
        for m, deps in graph.items()
    }
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_dependencies_point_down_the_layers() -> None:
    upward = []
    for module, deps in _graph().items():
        top = module.split(".")[1] if "." in module else ""
        for dep in deps:
            target = dep.split(".")[1] if "." in dep else ""
            if top in RANK and target in RANK and RANK[target] > RANK[top]:
                upward.append(f"{module} imports {dep}")
    assert not upward, "\n".join(sorted(upward))


def test_the_graph_sees_known_edges() -> None:
    graph = _graph()  # a parser that found nothing would pass the tests above
    assert "lasagna.tracks" in graph["lasagna.sweep.plan"]
    assert "lasagna.models.vllm_backend" in graph["lasagna.models.registry"]
    assert "lasagna.models.spec" in graph["lasagna.models.base"]  # TYPE_CHECKING counts


def test_no_two_packages_import_each_other() -> None:
    """Packages of one layer (retrieval and results, say) may not lean on each other."""
    pairs: set[tuple[str, str]] = set()
    for module, deps in _graph().items():
        top = module.split(".")[1] if "." in module else ""
        for dep in deps:
            target = dep.split(".")[1] if "." in dep else ""
            if top and target and top != target:
                pairs.add((top, target))
    both = sorted({tuple(sorted(p)) for p in pairs if (p[1], p[0]) in pairs})
    assert not both, both
