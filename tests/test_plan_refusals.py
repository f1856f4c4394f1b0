"""What `benchmark plan` and `run` refuse before Ray starts, all in one pass: every model
(judges of judged generation included) named by the sweep file, its line, the system and the
field; the trials whose pools cannot be placed; BM25 stemmers. No Ray, no model loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from lasagna import cli
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import load_sweep

JUDGED = """\
benchmarks:
  - {name: sample, n_samples: 4}
generators:
  - kind: rag
    retriever: {kind: bm25, top_k: 5}
judges:
  - benchmark: faithfulness
    model: {model: /models/nope}
output: out
"""


def _sweep(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    return path


def _refused(capsys, argv: list[str]) -> str:
    """exit 2, and Ray was never started (the suite's in-process Ray may already be up)."""
    import ray

    def no_start(*args, **kwargs):
        raise AssertionError("Ray was started before the refusal")

    real = ray.init
    ray.init = no_start
    try:
        assert cli.main(argv) == 2
    finally:
        ray.init = real
    return capsys.readouterr().err


@pytest.mark.parametrize("command", ["plan", "run"])
def test_missing_judge_model_of_judged_generation_is_refused_before_ray(tmp_path, capsys, command):
    path = _sweep(tmp_path, JUDGED)
    err = _refused(capsys, ["benchmark", command, str(path)])
    assert f"{path}:line 8: field 'judges[0].model': judge 'faithfulness:/models/nope':" in err
    assert "/models/nope does not exist" in err and "Fix:" in err
    assert not (tmp_path / "out").exists()


def test_missing_generator_model_names_the_system_and_the_grid_line(tmp_path, capsys):
    text = (
        "benchmarks: [{name: sample}]\n"
        "generators:\n"
        "  - kind: closed_book\n"
        "  - grid:\n"
        "      kind: rag\n"
        "      passages: [2, 3]\n"
        "      model: {model: /models/gone}\n"
    )
    err = _refused(capsys, ["benchmark", "plan", str(_sweep(tmp_path, text))])
    assert "line 7: field 'generators[1].grid.model': generation system 'rag:/models/gone'" in err
    assert err.count("/models/gone does not exist") == 1  # the grid's two members: one line


def test_every_kind_of_problem_is_reported_in_one_refusal(tmp_path, capsys):
    """A closed_book generator judged for faithfulness, a missing judge model and pools
    that can never be placed: all in one refusal, not one per try."""
    text = JUDGED.replace("  - kind: rag\n    retriever: {kind: bm25, top_k: 5}\n", "")
    text = text.replace("generators:\n", "generators:\n  - kind: closed_book\n")
    text += "resources:\n  generate: {num_cpus: 4096}\n"
    err = _refused(capsys, ["benchmark", "plan", str(_sweep(tmp_path, text))])
    assert "refused before any model loads: 3 problem(s)" in err
    assert "closed_book generator has none" in err
    assert "/models/nope does not exist" in err
    assert "line 10: field 'resources.generate':" in err and "would wait forever" in err


def test_pools_that_can_never_be_placed_are_refused_by_plan_and_run(tmp_path, capsys):
    text = JUDGED.replace("    model: {model: /models/nope}\n", "")
    text += "resources:\n  generate: {num_cpus: 4096}\n  judge: {num_cpus: 1}\n"
    path = _sweep(tmp_path, text)
    for command in ("plan", "run"):
        err = _refused(capsys, ["benchmark", command, str(path)])
        assert "these trials cannot be placed on the cluster (nothing was run):" in err
        assert "generator engine (resources.generate): 1 x 4096 CPU" in err
        assert "search actors (resources.retrieve): 1 x 0.5 CPU" in err
        assert "Fix: ask for less, e.g. resources: {generate: {num_cpus:" in err


OWN_RESOURCES = """\
benchmarks:
  - {name: sample}
generators:
  - kind: closed_book
    model: {backend: transformers, resources: {num_cpus: 3}}
  - grid:
      kind: rag
      retriever: {kind: bm25, retrieve: {num_cpus: 4}}
      passages: [1, 2]
resources:
  generate: {num_cpus: 0.2}
  retrieve: {num_cpus: 0.2}
"""


def test_a_pool_sized_on_the_system_is_refused_naming_the_system_field(tmp_path, capsys):
    """A system's own resources win over the sweep's `resources:` keys, so the refusal and
    its fix name what the system wrote (a grid's item as written, said once), not the
    sweep key that would change nothing."""
    path = _sweep(tmp_path, OWN_RESOURCES)
    err = " ".join(_refused(capsys, ["benchmark", "plan", str(path)]).split())
    at = "generators[0].model.resources"
    assert f"{path}:line 5: field '{at}':" in err
    assert f"generator engine ({at}): 1 x 3 CPU" in err
    assert f"Fix: ask for less, e.g. num_cpus: 1.8 in {at}," in err
    grid = "generators[1].grid.retriever.retrieve"
    assert err.count(f"{path}:line 8: field '{grid}':") == 1  # two systems, one line
    assert f"search actors ({grid}): 1 x 4 CPU" in err
    assert f"e.g. num_cpus: 1.5 in {grid}," in err
    assert "resources: {generate:" not in err and "resources: {retrieve:" not in err


def test_plan_prints_the_placement(tmp_path, capsys):
    path = _sweep(tmp_path, JUDGED.replace("    model: {model: /models/nope}\n", ""))
    assert cli.main(["benchmark", "plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "placement on an in-process Ray on this machine" in out
    assert "rag + faithfulness: one pipeline, 1.9 CPU at once" in out


def test_stemmer_none_means_no_stemming_and_an_unknown_one_is_refused(tmp_path, capsys):
    def plan(stemmer: str):
        body = "benchmarks: [{name: sample}]\nretrievers:\n"
        body += f"  - {{kind: bm25, stemmer: {stemmer}}}\n"
        sweep, base = load_sweep(_sweep(tmp_path, body))
        return build_plan(sweep, base)

    assert plan("none").trials[0].key == plan("null").trials[0].key
    assert plan("none").trials[0].system.stemmer is None
    path = _sweep(tmp_path, "benchmarks: [{name: sample}]\nretrievers:\n"
                  "  - {kind: bm25, stemmer: klingon}\n")  # fmt: skip
    err = _refused(capsys, ["benchmark", "plan", str(path)])
    assert "line 3: field 'retrievers[0].stemmer': unknown stemmer language 'klingon'" in err
    assert "or none for no stemming" in err


def test_synthesis_model_is_checked_by_the_dry_run_too(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Water boils at 100 degrees at sea level.")
    folder = str(tmp_path / "docs")
    for extra in (["--dry-run"], ["--out", str(tmp_path / "q.jsonl")]):
        argv = ["benchmark", "synthesize", folder, "--n", "2", "--model", "/models/nope"]
        err = _refused(capsys, argv + extra)
        assert "field '--model': the synthesis model: model path /models/nope" in err
    assert not (tmp_path / "q.jsonl").exists()


def test_preflight_of_a_plan_built_in_python_names_the_judge(tmp_path):
    from lasagna.engine.preflight import preflight
    from lasagna.errors import UserError

    sweep, base = load_sweep(_sweep(tmp_path, JUDGED))
    plan = build_plan(sweep, base)  # built without the model checks
    with pytest.raises(UserError) as err:
        preflight(plan.trials, prepare=False)
    assert "judge 'faithfulness:/models/nope': model path /models/nope" in err.value.render()
