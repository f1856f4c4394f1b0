"""System labels: short, unique within a group, the same in the plan and the results tables,
and never cut in a table."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.models.precision import hardware_kind, resolve_setting
from lasagna.results import leaderboard, render_leaderboard, write_run
from lasagna.results.model import system_id
from lasagna.sweep import build_plan, load_sweep
from lasagna.systems.labels import system_labels

RAG = {"kind": "rag", "retriever": {"kind": "bm25", "top_k": 3}, "passages": 3, "name": None}


def test_labels_say_what_differs_and_nothing_else() -> None:
    bm25 = {"kind": "bm25", "k1": 1.5, "b": 0.75, "stemmer": "english", "method": "lucene"}
    variants = [bm25, bm25 | {"stemmer": None}, bm25 | {"k1": 0.9, "b": 0.4}]
    variants.append(bm25 | {"method": "robertson"})
    assert system_labels(variants) == [
        "bm25",  # every setting the common one
        "bm25 stemmer=none",
        "bm25 k1=0.9 b=0.4",
        "bm25 method=robertson",
    ]
    rag5 = RAG | {"retriever": {"kind": "bm25", "top_k": 5}}
    closed = {"kind": "closed_book", "model": {"model": "packaged:SmolLM2-135M-Instruct"}}
    assert system_labels([RAG, rag5, closed, RAG]) == [
        "rag top_k=3",
        "rag top_k=5",
        "closed_book",
        "rag top_k=3",  # a repeat of one config: the same label
    ]
    hybrid = {"kind": "hybrid", "retrievers": [{"kind": "bm25"}, {"kind": "dense"}]}
    assert system_labels([hybrid, {"kind": "bm25"}]) == ["hybrid", "bm25"]
    judges = [RAG | {"judges": [{"benchmark": "faithfulness", "model_identity": {"x": 1}}]}, RAG]
    assert system_labels(judges) == ["rag judges=faithfulness", "rag judges=none"]
    named = [{"kind": "bm25", "name": "mine", "k1": 0.9}, {"kind": "bm25", "name": "mine"}]
    assert system_labels(named) == ["mine k1=0.9", "mine k1=none"]
    assert system_labels([{"kind": "judge", "benchmark": "faithfulness"}]) == ["faithfulness"]


def test_a_field_left_out_of_keys_at_its_default_is_labelled_with_it() -> None:
    """`vectors:` is left out of a dense config's key (and stored config) at fp32."""
    plain, half = {"kind": "dense", "index": "flat"}, {"kind": "dense", "index": "flat"}
    half = half | {"vectors": "fp16"}
    assert system_labels([plain, half]) == ["dense vectors=fp32", "dense vectors=fp16"]
    hnsw = plain | {"index": "hnsw"}
    assert system_labels([plain, hnsw]) == ["dense index=flat", "dense index=hnsw"]
    rag = {"kind": "rag", "retriever": plain}
    assert system_labels([rag, rag | {"retriever": half}]) == [
        "rag vectors=fp32",
        "rag vectors=fp16",
    ]


def test_labels_stay_unique_when_short_values_collide() -> None:
    a = {"kind": "dense", "model": "/models/a/minilm"}
    b = {"kind": "dense", "model": "/models/b/minilm"}  # one folder name, two models
    assert system_labels([a, b]) == ["dense model=/models/a/minilm", "dense model=/models/b/minilm"]
    c = {"kind": "dense", "model": "x", "model_identity": {"sha256": "1"}}
    d = {"kind": "dense", "model": "x", "model_identity": {"sha256": "2"}}  # a new model file
    labels = system_labels([c, d])
    assert labels == [f"dense #{system_id(c)[:6]}", f"dense #{system_id(d)[:6]}"]
    long_a = {"kind": "closed_book", "prompt": "Answer briefly, please: {question}"}
    long_b = {"kind": "closed_book", "prompt": "Answer in one word only: {question}"}
    la, lb = system_labels([long_a, long_b])
    assert la != lb and la.startswith("closed_book prompt=#") and len(la) < 40


def test_plan_names_rag_systems_apart_and_lists_the_judges(tmp_path: Path, capsys) -> None:
    """Two RAG systems on the packaged model, one setting apart, used to show as two equal
    `rag:SmolLM2-135M-Instruct(pa…` lines; the judges of judged generation were not said."""
    (tmp_path / "s.yaml").write_text(
        "benchmarks: [{name: sample, n_samples: 3}]\n"
        "generators:\n"
        "  - {kind: rag, retriever: {kind: bm25, top_k: 3}, passages: 2}\n"
        "  - {kind: rag, retriever: {kind: bm25, top_k: 3}, passages: 3}\n"
        "  - {kind: rag, retriever: {kind: dense, top_k: 3}, passages: 3}\n"
        "judges:\n"
        "  - {benchmark: faithfulness, parameters: {max_claims: 3}}\n"
        "  - {benchmark: relevancy}\n"
    )
    sweep, base = load_sweep(tmp_path / "s.yaml")
    plan = build_plan(sweep, base)
    assert [t.system_name for t in plan.trials] == [
        "rag passages=2",  # passages=3 and the bm25 retriever are the common settings
        "rag",
        "rag retriever=dense",
    ]
    assert [t.system_name for t in plan.trials] == system_labels(
        [t.system_config for t in plan.trials]
    )
    assert main(["benchmark", "plan", str(tmp_path / "s.yaml")]) == 0
    out = capsys.readouterr().out
    assert "rag passages=2, rag, rag retriever=dense: rag:SmolLM2-135M-Instruct" in out
    assert "judges (score each generation trial's answers): faithfulness:" in out
    assert "(max_claims=3)" in out and "relevancy:SmolLM2-135M-Instruct" in out
    assert "…" not in out
    # the RAG system's dense retriever: how its encoder runs on this machine
    backend, precision = resolve_setting("auto", "auto", gpu=False)
    encoders = f"encoders: all-MiniLM-L6-v2 as {backend} {precision} on {hardware_kind(False)}\n"
    assert encoders in out


def test_plan_says_what_labels_leave_out_and_nothing_else(tmp_path: Path, capsys) -> None:
    """A grid of one kind used to repeat its labels on one long wrapped line ending in
    `: bm25`, which adds nothing; a dense system's model is still said."""
    (tmp_path / "s.yaml").write_text(
        "benchmarks: [{name: sample}]\n"
        "retrievers:\n"
        "  - grid: {kind: bm25, k1: [0.9, 1.2], b: [0.4, 0.75], stemmer: [english, none]}\n"
        "  - {kind: dense, index: ivf}\n"
        "  - {kind: dense, index: hnsw}\n"
    )
    assert main(["benchmark", "plan", str(tmp_path / "s.yaml")]) == 0
    out = capsys.readouterr().out
    said = out[out.index("systems:") : out.index("#")]
    assert "bm25" not in said
    assert "dense index=ivf, dense index=hnsw: dense:all-MiniLM-L6-v2" in said
    assert said.count("encoders: all-MiniLM-L6-v2 as ") == 1  # one encoder, said once


def test_a_setting_every_system_shares_off_its_default_is_said_once(tmp_path: Path, capsys) -> None:
    """A grid over k1 at b=0.3 labelled `bm25 k1=0.5`, `bm25 k1=0.7` read as BM25 at its
    default b: the plan, the run summary, `results show` and the leaderboard say the b."""
    from lasagna.systems.labels import shared_line, shared_settings

    grid = [{"kind": "bm25", "k1": k1, "b": 0.3, "top_k": 100} for k1 in (0.5, 0.7)]
    assert shared_settings(grid) == ["b=0.3"]
    assert shared_settings([{"kind": "bm25", "k1": 0.5}, {"kind": "bm25", "k1": 0.7}]) == []
    rag = {"kind": "rag", "retriever": {"kind": "bm25", "top_k": 5}, "passages": 3}
    mixed = [rag, {**rag, "passages": 5}, {"kind": "closed_book"}]
    assert shared_line(mixed) == "every rag: top_k=5 (not repeated in the labels)"
    assert shared_settings([{"kind": "dense", "precision": "bf16"}]) == []  # auto, resolved
    (tmp_path / "s.yaml").write_text(
        "benchmarks: [{name: sample, n_samples: 5}]\n"
        "retrievers:\n  - grid: {kind: bm25, k1: [0.5, 0.7], b: [0.3]}\n"
        f"output: {tmp_path / 'out'}\n"
    )
    said = "every system: b=0.3 (not repeated in the labels)"
    assert main(["benchmark", "plan", str(tmp_path / "s.yaml")]) == 0
    assert said in capsys.readouterr().out
    trials = [
        make_trial(f"k{i}", [0.5], system="bm25", config=config) for i, config in enumerate(grid)
    ]
    write_run(tmp_path / "out", "r1", {}, trials)
    for command in (["results", "show", "r1"], ["results", "leaderboard"]):
        assert main([*command, "--output", str(tmp_path / "out")]) == 0
        assert said in capsys.readouterr().out, command


def test_long_labels_fold_in_tables_and_are_never_cut(tmp_path: Path) -> None:
    long_a = {"kind": "bm25", "name": "a-system-with-a-very-long-name-ending-in-alpha"}
    long_b = {"kind": "bm25", "name": "a-system-with-a-very-long-name-ending-in-omega"}
    write_run(
        tmp_path,
        "R",
        {},
        [make_trial("ka", [0.5], config=long_a), make_trial("kb", [0.4], config=long_b)],
    )
    out = io.StringIO()
    render_leaderboard(leaderboard(tmp_path), Console(file=out, width=60))
    text = out.getvalue()
    assert "…" not in text
    lines = text.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("#"))
    start, end = header.index("system"), header.index("ndcg@10")
    body = lines[lines.index(header) + 2 :]
    folded = "".join(line[start:end].strip() for line in body if line.strip())
    assert long_a["name"] in folded and long_b["name"] in folded
