"""The documentation matches the code: every CLI command and public Python name has a
reference entry, every command in a code block marked `{ .runnable }` parses (the cheap ones
on the packaged sample run), the layers page covers every package, and no page or `--help`
text speaks of how the project is developed instead of what the product does.
`mkdocs build --strict` (broken links, missing pages) runs in scripts/test.sh."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from lasagna.cli import build_parser, main

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README = REPO / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
USER_FILES = [
    README,
    REPO / "CHANGELOG.md",
    REPO / "configs" / "README.md",
    REPO / "cluster" / "README.md",
    *PAGES,
]
# Words about how the project is developed, not what it does (matched case-insensitively).
PROCESS_WORDS = re.compile(
    r"\bsessions? \d"
    r"|\b(this|that|earlier|previous|last|next|later|each|every) sessions?\b"
    r"|\bissue \d+|\btask (#\s?)?\d+"
    r"|\bengineers?\b|\bhelpers?\b|\bthe team\b|\bworkplace\b|\bCEO\b"
    r"|\b(heavy|shared|the) lock\b|\bunder the lock\b|\bflock\b"
    r"|\bwork(ing)? periods?\b|\blent\b|\blab notes?\b"
    r"|\bDESIGN\.md\b|\bthe spec\b|\bspec's\b",
    re.IGNORECASE,
)


def _hook():
    path = DOCS / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("docs_cli_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("lasagna",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


# ------------------------------------------------------------------ reference entries
def test_every_cli_command_and_option_has_a_reference_entry() -> None:
    assert "<!-- cli-reference -->" in (DOCS / "reference" / "cli.md").read_text()
    rendered = _hook().render_cli()
    headings = set(re.findall(r"^## (lasagna.*)$", rendered, re.MULTILINE))
    missing = []
    for path, parser in _parsers(build_parser()):
        if " ".join(path) not in headings:
            missing.append(" ".join(path))
            continue
        section = rendered.split(f"## {' '.join(path)}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help") and f"`{flag}" not in section:
                    missing.append(f"{' '.join(path)} {flag}")
    assert not missing, f"not in the CLI reference: {missing}"


def _public_names() -> list[tuple[str, object]]:
    import lasagna
    import lasagna.evaluation
    import lasagna.knowledge_evaluation_sdk.synthesize as synth

    out = []
    for module in (lasagna, lasagna.evaluation, synth):
        for name in module.__all__:
            if not name.startswith("_"):
                out.append((f"{module.__name__}.{name}", getattr(module, name)))
    return out


def test_every_public_python_name_has_a_reference_entry() -> None:
    page = (DOCS / "reference" / "python.md").read_text()
    entries = set(re.findall(r"^::: ([\w.]+)\s*$", page, re.MULTILINE))
    missing = [
        f"{public} (defined as {obj.__module__}.{obj.__qualname__})"
        for public, obj in _public_names()
        if f"{obj.__module__}.{obj.__qualname__}" not in entries
    ]
    assert not missing, f"add a '::: <definition>' line to docs/reference/python.md: {missing}"
    for entry in entries:  # and every entry names something that exists
        module, _, name = entry.rpartition(".")
        assert hasattr(importlib.import_module(module), name), entry


def test_every_layer_of_the_import_graph_is_described() -> None:
    page = (DOCS / "architecture.md").read_text()
    assert "<!-- layers -->" in page
    described = set(re.findall(r"^- `(\w+)`", page, re.MULTILINE))
    described |= {
        m
        for line in re.findall(r"^- (`\w+`(?:, `\w+`)*):", page, re.MULTILINE)
        for m in re.findall(r"`(\w+)`", line)
    }
    missing = sorted(set(_hook().layer_ranks()) - described)
    assert not missing, f"docs/architecture.md describes no package {missing}"


# ------------------------------------------------------------------ runnable commands
def _runnable_commands() -> list[tuple[str, str]]:
    """(page, command line) for each line of every ```... { .runnable } block."""
    out = []
    for page in [README, *PAGES]:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^```[^\n]*\.runnable[^\n]*\n(.*?)^```", text, re.S | re.M):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    out.append((str(page.relative_to(REPO)), line.strip()))
    return out


@cache
def _script_help(script: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(REPO / script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, f"{script} --help failed: {proc.stderr[-2000:]}"
    return proc.stdout


def _check_lasagna(argv: list[str]) -> str | None:
    parser = build_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parser.parse_args(argv)
    except SystemExit as exit_:
        if exit_.code:
            return err.getvalue().strip().splitlines()[-1]
    return None


def _check(argv: list[str]) -> str | None:
    if argv[0] == "lasagna":
        return _check_lasagna(argv[1:])
    if argv[:3] == ["ray", "job", "submit"] and "--" in argv:
        return _check(argv[argv.index("--") + 1 :])
    if argv[0] == "python" and len(argv) > 1 and argv[1].startswith("scripts/"):
        if not (REPO / argv[1]).is_file():
            return f"no such script {argv[1]}"
        usage = _script_help(argv[1])
        unknown = [a.split("=")[0] for a in argv[2:] if a.startswith("--")]
        unknown = [a for a in unknown if not re.search(rf"{re.escape(a)}\b", usage)]
        return f"unknown option(s) {unknown}" if unknown else None
    return "a runnable block may hold lasagna, ray job submit and python scripts/ commands"


def test_runnable_commands_in_the_docs_parse() -> None:
    commands = _runnable_commands()
    assert len(commands) > 40, "the { .runnable } marks were lost"
    bad = []
    for page, line in commands:
        argv = shlex.split(line, comments=True)
        while argv and "=" in argv[0] and not argv[0].startswith("-"):  # VAR=value prefixes
            argv = argv[1:]
        if problem := _check(argv):
            bad.append(f"{page}: {line}\n    {problem}")
    assert not bad, "\n".join(bad)


CHEAP = re.compile(
    r"^lasagna benchmark (validate-data lasagna/sample/\S+|plan configs/sweeps/sample_\w+\.yaml)$"
)


def test_cheap_runnable_commands_run_on_the_sample(tmp_path, monkeypatch) -> None:
    lines = {" ".join(shlex.split(line, comments=True)) for _, line in _runnable_commands()}
    cheap = sorted(line for line in lines if CHEAP.match(line))
    assert cheap, "the docs show no validate-data or plan command on the sample"
    monkeypatch.chdir(REPO)
    for line in cheap:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(
                [*shlex.split(line)[1:], *(["--output", str(tmp_path)] if " plan " in line else [])]
            )
        assert code == 0, f"{line} exited {code}"
        assert out.getvalue().strip(), line


# ------------------------------------------------------------------ no process words
def _help_texts() -> dict[str, str]:
    texts = {" ".join(p): parser.format_help() for p, parser in _parsers(build_parser())}
    scripts = sorted(str(p.relative_to(REPO)) for p in (REPO / "scripts").glob("*.py"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        for script, text in zip(scripts, pool.map(_script_help, scripts), strict=True):
            texts[f"{script} --help"] = text
    return texts


def test_docs_and_help_texts_speak_of_the_product_only() -> None:
    found = []
    for path in USER_FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if m := PROCESS_WORDS.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {m.group(0)!r}: {line.strip()}")
    for where, text in _help_texts().items():
        for m in PROCESS_WORDS.finditer(text):
            found.append(f"{where}: {m.group(0)!r}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("bad", ["measured in session 5", "see issue 15", "under the heavy lock"])
def test_the_process_words_pattern_catches(bad: str) -> None:
    assert PROCESS_WORDS.search(bad)


def test_readme_is_short_and_links_into_the_docs() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert {"docs/architecture.md", "docs/troubleshooting.md"} <= set(links)
    missing = [link for link in links if not (REPO / link).exists()]
    assert not missing, missing
