"""Profiles: the packaged ones load, sweep keys override them, unknown names list them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lasagna.errors import UserError
from lasagna.sweep.profiles import list_profiles, load_profile, resolve, sweep_for_path
from lasagna.sweep.schema import Sweep, load_sweep
from lasagna.systems import (
    BM25Retriever,
    ClosedBookGenerator,
    DenseRetriever,
    RagGenerator,
)

REPO = Path(__file__).resolve().parents[1]


def test_packaged_profiles():
    assert {"speed", "rag", "closed_book"} <= set(list_profiles())
    speed = resolve(Sweep(profile="speed", benchmarks=[{"name": "sample"}]))
    kinds = [type(r) for r in speed.retrievers]
    assert kinds == [BM25Retriever, DenseRetriever]
    assert all(r.top_k == 100 for r in speed.retrievers) and speed.generators == []
    rag = resolve(Sweep(profile="rag", benchmarks=[{"name": "sample"}]))
    (gen,) = rag.generators
    assert isinstance(gen, RagGenerator) and gen.passages == 3
    assert isinstance(gen.retriever, BM25Retriever) and gen.model.backend == "vllm"
    closed = resolve(Sweep(profile="closed_book", benchmarks=[{"name": "sample"}]))
    assert [type(g) for g in closed.generators] == [ClosedBookGenerator]


def test_sweep_keys_override_profile_keys(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "profile: speed\nbenchmarks: [{name: sample}]\nretrievers: [{kind: bm25, k1: 0.9}]\n"
        "trials: 3\n"
    )
    sweep, _ = load_sweep(path)
    resolved = resolve(sweep)
    assert resolved.retrievers == [BM25Retriever(k1=0.9)]
    assert resolved.trials == 3 and resolved.profile == "speed"
    assert resolve(resolved) == resolved  # applying twice changes nothing


def test_profile_fills_unset_keys(tmp_path):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "mine.yaml").write_text(
        "description: two repeats\nretrievers: [{kind: bm25}]\ntrials: 2\nseed: 9\n"
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LASAGNA_CONFIGS", str(tmp_path))
        resolved = resolve(Sweep(profile="mine", benchmarks=[{"name": "sample"}], seed=1))
    assert (resolved.trials, resolved.seed, resolved.description) == (2, 1, "two repeats")


def test_unknown_profile_lists_profiles():
    with pytest.raises(UserError) as info:
        load_profile("sped")
    message = info.value.render()
    assert "unknown profile 'sped'" in message
    assert "speed" in message and "rag" in message and "closed_book" in message


def test_bad_profile_file_names_its_line(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "bad.yaml").write_text("retrievers:\n  - {kind: bm25, kk: 1}\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LASAGNA_CONFIGS", str(tmp_path))
        with pytest.raises(UserError) as info:
            load_profile("bad")
    (problem,) = info.value.problems
    assert problem.where == "line 2" and problem.file.endswith("bad.yaml")


def test_sweep_for_path(tmp_path):
    data = tmp_path / "d.jsonl"
    sweep, base = sweep_for_path(data, "speed", split="dev", n_samples=5, output="out")
    (entry,) = sweep.benchmarks
    assert Path(entry.path) == data.resolve() and (entry.split, entry.n_samples) == ("dev", 5)
    assert sweep.profile == "speed" and sweep.output == "out" and base == Path.cwd()
    with pytest.raises(UserError) as info:
        sweep_for_path(data, "speed", n_samples=0)
    assert info.value.problems[0].field == "benchmarks[0].n_samples"


def test_repo_sweeps_load():
    for name in ("scifact_retrieval", "sample_speed", "sample_rag"):
        sweep, base = load_sweep(REPO / "configs" / "sweeps" / f"{name}.yaml")
        resolved = resolve(sweep)
        assert resolved.retrievers or resolved.generators
    scifact, _ = load_sweep(REPO / "configs" / "sweeps" / "scifact_retrieval.yaml")
    assert [r.kind for r in scifact.retrievers] == ["bm25", "dense", "hybrid"]
    assert scifact.trials == 2


@pytest.mark.slow
def test_wheel_ships_the_profiles(tmp_path):
    """A non-editable install finds the profiles inside the package (lasagna/configs)."""
    import subprocess
    import sys
    import zipfile

    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + [str(root), "-w", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("lasagna-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.rsplit("/", 1)[-1] for n in names if n.startswith("lasagna/configs/profiles/")}
    assert shipped == {p.name for p in (root / "configs" / "profiles").glob("*.yaml")}


@pytest.mark.parametrize(
    "name", ["sample_speed", "sample_rag", "scifact_retrieval", "hotpotqa_corpus"]
)
def test_every_shipped_sweep_places_on_a_two_core_laptop(name, tmp_path, monkeypatch, capsys):
    """The README's machine: 2 CPUs, no GPU. The HotpotQA sweep's dense RAG system asked
    2.05 CPU at once and was refused there."""
    import shutil
    import sys

    from reference_data import HOTPOTQA, SCIFACT, missing

    from lasagna import cli
    from lasagna.stages import capacity

    monkeypatch.setattr(capacity, "local_capacity", lambda: capacity.Capacity({"CPU": 2.0}))
    sweep = REPO / "configs" / "sweeps" / f"{name}.yaml"
    if name == "scifact_retrieval":  # its path assumes ../shared beside the repository
        if not SCIFACT.is_dir():
            pytest.skip(missing(SCIFACT))
        text = sweep.read_text().replace("../../../shared/data/beir_scifact", str(SCIFACT))
        sweep = tmp_path / sweep.name
        sweep.write_text(text)
    if name == "hotpotqa_corpus":  # its data: the converter's output beside the repository
        if not HOTPOTQA.is_dir():
            pytest.skip(missing(HOTPOTQA))
        sys.path.insert(0, str(REPO / "scripts"))
        from convert_hotpotqa import main as convert

        assert convert([str(HOTPOTQA), "--out", str(tmp_path / "hotpotqa")]) == 0
        (tmp_path / "configs" / "sweeps").mkdir(parents=True)
        sweep = Path(shutil.copy(sweep, tmp_path / "configs" / "sweeps"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert cli.main(["benchmark", "plan", str(sweep)]) == 0, capsys.readouterr().err
    assert "one pipeline" in capsys.readouterr().out
