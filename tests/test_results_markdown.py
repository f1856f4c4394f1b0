"""`--format markdown`: the leaderboard, `--across` and `show --by` as Markdown tables, read
back here cell by cell and checked against the figures the terminal tables show."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from test_results_across import root  # noqa: F401  (the fixture: three benchmarks)
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.results import write_run
from lasagna.results.markdown import table


def _tables(text: str) -> list[list[list[str]]]:
    """The Markdown tables of `text`, each a list of lines of cells (the header first, the
    alignment line left out), `\\|` read back as `|`."""
    out: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("| "):
            cells = [
                c.strip().replace("\0", "|") for c in line.replace("\\|", "\0")[2:-2].split(" | ")
            ]
            if not all(set(c) <= set(":-") for c in cells):
                current.append(cells)
        elif current:
            out.append(current)
            current = []
    return out


def test_a_table_escapes_and_aligns() -> None:
    text = table(["system", "score"], [["bm25 | k1=0.9", "0.5"], ["two\nlines", "-"]])
    assert text.splitlines()[1] == "| :--- | ---: |"  # names left, numbers right
    assert _tables(text) == [[["system", "score"], ["bm25 | k1=0.9", "0.5"], ["two lines", "-"]]]


def test_leaderboard_as_markdown(tmp_path: Path, capsys) -> None:
    trials = [
        make_trial("ka" * 8, [0.9, 0.8, 1.0, 0.7], system="dense", config={"kind": "dense"}),
        make_trial("kb" * 8, [0.5, 0.7, 0.6, 0.4], system="bm25", config={"kind": "bm25"}),
    ]
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    assert main(["results", "leaderboard", "--output", str(tmp_path), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    ((header, first, second),) = _tables(text)
    assert header[:4] == ["#", "system", "ndcg@10", "95% CI"] and header[-2:] == ["trials", "runs"]
    assert first[:3] == ["1", "dense", "**0.8500**"]  # the best in bold
    assert second[:3] == ["2", "bm25", "0.5500"]
    assert first[-1] == "R1" and "- key `group-1`" in text
    assert "95% CI: percentile bootstrap over questions" in text


def test_across_as_markdown(root: Path, capsys) -> None:  # noqa: F811
    assert (
        main(["results", "leaderboard", "--across", "--output", str(root), "--format", "json"]) == 0
    )
    records = json.loads(capsys.readouterr().out)
    assert (
        main(["results", "leaderboard", "--across", "--output", str(root), "--format", "markdown"])
        == 0
    )
    ((header, *lines),) = _tables(capsys.readouterr().out)
    assert header[:2] == ["system", "mean"] and len(header) == 2 + 3  # three benchmarks
    for line, record in zip(lines, records, strict=True):
        assert line[0] == record["system"]
        for cell, field in zip(line[1:], header[1:], strict=True):
            value = record[field]
            assert cell.strip("*") == ("-" if value is None else f"{value:.4f}")
    means = [r["mean"] for r in records if r["mean"] is not None]
    assert lines[0][1] == f"**{max(means):.4f}**"  # the best of a column in bold


def test_show_by_as_markdown(tmp_path: Path, capsys) -> None:
    a, b = [0.9, 0.2, 1.0, 0.1], [0.5, 0.7, 0.6, 0.4]
    meta = pa.array([json.dumps({"type": t}) for t in ("x", "y", "x", "y")], pa.string())
    trials = [
        make_trial("ka" * 8, a, system="dense", config={"kind": "dense"}),
        make_trial("kb" * 8, b, system="bm25", config={"kind": "bm25"}),
    ]
    for t in trials:
        t.rows = t.rows.append_column("metadata", meta)
    write_run(tmp_path, "R1", {"created_at": "2026-01-01T00:00:00+00:00"}, trials)
    args = ["results", "show", "R1", "--by", "type", "--format", "markdown"]
    assert main([*args, "--output", str(tmp_path)]) == 0
    ((header, *lines),) = _tables(capsys.readouterr().out)
    assert header == ["type", "n", "dense", "bm25"]
    assert lines == [
        ["all", "4", "**0.5500**", "0.5500"],  # a tie: the first in bold
        ["x", "2", "**0.9500**", "0.5500"],
        ["y", "2", "0.1500", "**0.5500**"],
    ]
    assert main(["results", "show", "R1", "--format", "markdown", "--output", str(tmp_path)]) == 2
