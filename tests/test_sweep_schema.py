"""The sweep YAML: the spec's example, strictness with lines and did-you-mean, grids."""

from __future__ import annotations

from pathlib import Path

import pytest

from lasagna.errors import UserError
from lasagna.sweep.schema import Sweep, load_sweep, resolve_output
from lasagna.systems import BM25Retriever, DenseRetriever, RagGenerator

SPEC_EXAMPLE = """\
benchmarks:
  - {path: data/my_data.jsonl, n_samples: 50}
  - {path: data/support_tickets.csv, name: tickets}   # optional display name
  - {path: data/my_beir}                              # a BEIR folder
retrievers:
  - {kind: bm25}
"""


def write(tmp_path: Path, text: str, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> UserError:
    with pytest.raises(UserError) as info:
        load_sweep(path)
    return info.value


def test_spec_example_parses_as_written(tmp_path):
    sweep, base = load_sweep(write(tmp_path, SPEC_EXAMPLE))
    assert base == tmp_path.resolve()
    first, second, third = sweep.benchmarks
    assert (first.path, first.n_samples, first.name) == ("data/my_data.jsonl", 50, None)
    assert (second.path, second.name) == ("data/support_tickets.csv", "tickets")
    assert third.resolve_path(base) == tmp_path.resolve() / "data" / "my_beir"
    assert sweep.retrievers == [BM25Retriever()]
    assert (sweep.trials, sweep.seed, sweep.judges) == (1, 0, [])


def test_unknown_keys_name_line_and_suggest(tmp_path):
    text = (
        "benchmarks:\n"
        "  - {pth: data/x.jsonl}\n"
        "retrievers:\n"
        "  - kind: dense\n"
        "    topk: 10\n"
        "tirals: 2\n"
    )
    err = load_error(write(tmp_path, text))
    by_field = {p.field: p for p in err.problems}
    assert set(by_field) == {"benchmarks[0].pth", "retrievers[0].topk", "tirals"}
    assert by_field["benchmarks[0].pth"].where == "line 2"
    assert "did you mean 'path'" in by_field["benchmarks[0].pth"].fix
    assert by_field["retrievers[0].topk"].where == "line 5"
    assert "did you mean 'top_k'" in by_field["retrievers[0].topk"].fix
    assert by_field["tirals"].where == "line 6"
    assert "did you mean 'trials'" in by_field["tirals"].fix
    assert all(p.file == str(tmp_path / "sweep.yaml") for p in err.problems)


def test_unknown_kind_and_bad_value_reported_together(tmp_path):
    text = "benchmarks:\n  - {name: sample, n_samples: 0}\nretrievers:\n  - {kind: bm2}\n"
    err = load_error(write(tmp_path, text))
    fields = {p.field: p for p in err.problems}
    assert fields["benchmarks[0].n_samples"].where == "line 2"
    assert "did you mean 'bm25'" in fields["retrievers[0]"].fix
    assert fields["retrievers[0]"].where == "line 4"


def test_a_profile_a_hybrid_and_bm25_values_are_checked_with_the_rest(tmp_path):
    """An unknown profile is one more problem on its line (it was found only after every
    other was fixed, with no line); a hybrid of one retriever says it needs two; BM25's
    k1 < 0 or b outside 0..1 is refused (k1 -1 ran, with a bm25s warning)."""
    text = (
        "profile: sped\n"
        "benchmarks: [{name: sample}]\n"
        "retrievers:\n"
        "  - {kind: bm25, k1: -1, b: 1.5}\n"
        "  - {kind: hybrid, retrievers: [{kind: bm25}]}\n"
        "  - {kind: bm2}\n"
    )
    err = load_error(write(tmp_path, text))
    found = {p.field: p for p in err.problems}
    assert found["profile"].where == "line 1" and "did you mean 'speed'" in found["profile"].fix
    assert found["retrievers[0].k1"].where == "line 4" and "greater than or equal to 0" in (
        found["retrievers[0].k1"].message
    )
    assert "less than or equal to 1" in found["retrievers[0].b"].message
    hybrid = found["retrievers[1].retrievers[1]"]
    assert hybrid.message == "'retrievers' needs 2 items, it has 1" and hybrid.where == "line 5"
    assert "retrievers[2]" in found


def test_a_negative_temperature_is_refused_on_its_line(tmp_path):
    """vLLM refuses it only once the engine has loaded (minutes later)."""
    text = (
        "benchmarks: [{name: sample}]\n"
        "generators:\n"
        "  - kind: closed_book\n"
        "    model: {temperature: -1, tensor_parallel_size: 0}\n"
    )
    found = {p.field: p for p in load_error(write(tmp_path, text)).problems}
    temperature = found["generators[0].model.temperature"]
    assert temperature.where == "line 4" and "greater than or equal to 0" in temperature.message
    assert "greater than or equal to 1" in found["generators[0].model.tensor_parallel_size"].message


def test_unknown_builtin_lists_builtins(tmp_path):
    err = load_error(write(tmp_path, "benchmarks:\n  - {name: sampel}\n"))
    (problem,) = err.problems
    assert "'sampel' is not a built-in" in problem.message and "sample" in problem.message
    assert problem.where == "line 2"


def test_yaml_syntax_error_has_line(tmp_path):
    err = load_error(write(tmp_path, "benchmarks:\n  - {path: a.jsonl\nseed: 1\n"))
    assert err.problems[0].where is not None and err.problems[0].where.startswith("line ")
    assert "not valid YAML" in err.problems[0].message


def test_duplicate_key_is_an_error(tmp_path):
    err = load_error(write(tmp_path, "seed: 1\nbenchmarks: [{name: sample}]\nseed: 2\n"))
    assert err.problems[0].where == "line 3" and "appears twice" in err.problems[0].message


def test_unsafe_yaml_tags_are_refused(tmp_path):
    err = load_error(write(tmp_path, "benchmarks: !!python/object/apply:os.system [echo]\n"))
    assert "not valid YAML" in err.problems[0].message


def test_judges_entries_are_strict(tmp_path):
    err = load_error(write(tmp_path, "benchmarks: [{name: sample}]\njudges: [{kind: x}]\n"))
    assert "judges[0]" in (err.problems[0].field or "")
    text = "benchmarks: [{name: sample}]\njudges: [{benchmark: faithfulnes}]\n"
    err = load_error(write(tmp_path, text, "c.yaml"))
    assert "did you mean 'faithfulness'" in err.render()
    sweep, _ = load_sweep(write(tmp_path, "benchmarks: [{name: sample}]\njudges: []\n", "b.yaml"))
    assert sweep.judges == []


def test_grid_expands_cartesian_product_in_written_order(tmp_path):
    text = (
        "benchmarks: [{name: sample}]\n"
        "retrievers:\n"
        "  - {kind: dense}\n"
        "  - {grid: {kind: bm25, k1: [0.9, 1.2], b: [0.4, 0.75], top_k: 10}}\n"
        "generators: {grid: {kind: rag, passages: [3, 5], model: {temperature: [0.0, 0.7]}}}\n"
    )
    sweep, _ = load_sweep(write(tmp_path, text))
    assert isinstance(sweep.retrievers[0], DenseRetriever)
    bm25 = sweep.retrievers[1:]
    assert [(r.k1, r.b, r.top_k) for r in bm25] == [
        (0.9, 0.4, 10),
        (0.9, 0.75, 10),
        (1.2, 0.4, 10),
        (1.2, 0.75, 10),
    ]
    assert all(isinstance(g, RagGenerator) for g in sweep.generators)
    assert [(g.passages, g.model.temperature) for g in sweep.generators] == [
        (3, 0.0),
        (3, 0.7),
        (5, 0.0),
        (5, 0.7),
    ]


def test_grid_errors_point_at_the_grid_once(tmp_path):
    text = "benchmarks: [{name: sample}]\nretrievers:\n  - grid: {kind: bm25, k2: [1, 2], b: []}\n"
    err = load_error(write(tmp_path, text))
    assert [p.field for p in err.problems] == ["retrievers[0].grid.b"]
    assert "empty" in err.problems[0].message
    text = "benchmarks: [{name: sample}]\nretrievers:\n  - grid: {kind: bm25, k2: [1, 2]}\n"
    err = load_error(write(tmp_path, text, "c.yaml"))
    assert [p.field for p in err.problems] == ["retrievers[0].grid.k2"]
    assert err.problems[0].where == "line 3" and "did you mean 'k1'" in err.problems[0].fix


def test_grid_in_python_construction():
    sweep = Sweep.model_validate(
        {"benchmarks": [{"name": "sample"}], "retrievers": {"grid": {"kind": "bm25", "b": [0.3]}}}
    )
    assert sweep.retrievers == [BM25Retriever(b=0.3)]


def test_missing_benchmarks_and_non_mapping(tmp_path):
    err = load_error(write(tmp_path, "retrievers: [{kind: bm25}]\n"))
    assert err.problems[0].field == "benchmarks" and "missing" in err.problems[0].message
    err = load_error(write(tmp_path, "- a\n- b\n", "list.yaml"))
    assert "mapping" in err.problems[0].message


def test_filters_accept_values_and_lists(tmp_path):
    text = "benchmarks:\n  - {name: sample, filters: {question_type: [multihop, factoid], x: 1}}\n"
    sweep, _ = load_sweep(write(tmp_path, text))
    assert sweep.benchmarks[0].filters == {"question_type": ["multihop", "factoid"], "x": 1}


def test_output_local_relative_to_sweep_or_uri(tmp_path):
    assert resolve_output("results", tmp_path) == str((tmp_path / "results").resolve())
    assert resolve_output("s3://bucket/runs", tmp_path) == "s3://bucket/runs"


def test_stage_resources_defaults_and_overrides(tmp_path):
    text = "benchmarks: [{name: sample}]\nresources: {encode: {num_gpus: 1, actors: 4}}\n"
    sweep, _ = load_sweep(write(tmp_path, text))
    own = DenseRetriever(encode={"batch_size": 8}).encode
    merged = sweep.resources.for_stage("encode", own)
    assert (merged.num_gpus, merged.actors, merged.batch_size) == (1, 4, 8)
    assert sweep.resources.for_stage("search").actors == 1
    with pytest.raises(KeyError):
        sweep.resources.for_stage("nope")
    err = load_error(
        write(tmp_path, "benchmarks: [{name: sample}]\nresources: {encod: {}}\n", "r.yaml")
    )
    assert "did you mean 'encode'" in err.problems[0].fix
    for bad in ("num_cpus: -1", "num_gpus: -0.5", "resources: {searcher: -1}"):
        text = f"benchmarks: [{{name: sample}}]\nresources:\n  search: {{{bad}}}\n"
        (problem,) = load_error(write(tmp_path, text, "neg.yaml")).problems
        assert problem.where == "line 3" and "greater than or equal to 0" in problem.message
        assert problem.field.startswith("resources.search."), problem.field


def test_paths_expand_env_vars(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_TEST_DATA", str(tmp_path / "shared"))
    text = "benchmarks: [{path: $LASAGNA_TEST_DATA/x.jsonl}]\noutput: $LASAGNA_TEST_DATA/out\n"
    sweep, base = load_sweep(write(tmp_path, text))
    assert sweep.benchmarks[0].resolve_path(base) == tmp_path / "shared" / "x.jsonl"
    assert resolve_output(sweep.output, base) == str(tmp_path / "shared" / "out")


def test_configs_readme_example_parses(tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "configs" / "README.md").read_text()
    block = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    sweep, _ = load_sweep(write(tmp_path, block))
    assert len(sweep.benchmarks) == 6 and len(sweep.retrievers) == 7
    assert sweep.benchmarks[-1].corpus == "data/docs"
    assert [g.kind for g in sweep.generators] == ["closed_book", "rag"]
    assert sweep.resources.generate.num_gpus == 1


def test_more_passages_than_the_retriever_returns_is_refused(tmp_path):
    """A trial (and key) of its own that answers exactly as passages = top_k does: refused
    at its line, a grid's item too."""
    head = "benchmarks: [{name: sample}]\ngenerators:\n"
    one = head + "  - {kind: rag, retriever: {kind: bm25, top_k: 3}, passages: 5}\n"
    (problem,) = load_error(write(tmp_path, one, "p.yaml")).problems
    assert (problem.where, problem.field) == ("line 3", "generators[0].passages")
    assert "passages (5) is more than the retriever's top_k (3)" in problem.message
    grid = head + "  - grid:\n      kind: rag\n      retriever: {kind: bm25, top_k: 3}\n"
    grid += "      passages: [1, 5]\n"
    (problem,) = load_error(write(tmp_path, grid, "g.yaml")).problems
    assert problem.field == "generators[0].grid.passages" and problem.where == "line 6"
    sweep, _ = load_sweep(write(tmp_path, one.replace("passages: 5", "passages: 3"), "ok.yaml"))
    assert sweep.generators[0].passages == 3
