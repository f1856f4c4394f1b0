"""Judge trials are planned like every other trial; bad requests are refused before Ray."""

from __future__ import annotations

import json

import pytest

from lasagna.cli import main
from lasagna.errors import UserError
from lasagna.sweep import build_plan, load_sweep, sweep_for_path
from lasagna.sweep.judge_plan import judge_systems

CONV = "\n".join(
    json.dumps({"turns": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]})
    for q, a in (("Hello", "Hi! How can I help?"), ("Bye", "Goodbye!"))
)


def plan_for(path, judges, **kw):
    sweep, base = sweep_for_path(path, None, **kw)
    return build_plan(sweep.model_copy(update={"judges": judges}), base)


def test_keys_hold_model_prompts_and_parameters(tmp_path):
    path = tmp_path / "conv.jsonl"
    path.write_text(CONV)
    (a,) = plan_for(path, judge_systems(["conversation-completeness"])).trials
    (b,) = plan_for(path, judge_systems(["conversation-completeness"])).trials
    (c,) = plan_for(
        path, judge_systems(["conversation-completeness"], params=["max_claims=3"])
    ).trials
    assert a.key == b.key and a.key != c.key
    assert a.track == "judge" and a.comparability_key.split("|")[2].startswith("judge:")
    identity = a.system_config["model_identity"]
    assert identity["judge"]["prompts"]["conversation_completeness.intentions@v1"]
    assert identity["model"]["files_sha256"]
    (d,) = plan_for(path, judge_systems(["knowledge-retention"])).trials
    assert d.comparability_key != a.comparability_key  # one benchmark per leaderboard group


def test_role_adherence_without_role_refused_before_any_model(tmp_path, capsys):
    path = tmp_path / "conv.jsonl"
    path.write_text(CONV)
    out = tmp_path / "out"
    rc = main(["benchmark", "run", str(path), "--judge", "role-adherence", "--output", str(out)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "role-adherence" in err and "chatbot_role" in err and "--param chatbot_role" in err
    assert not out.exists()
    plan = plan_for(path, judge_systems(["role-adherence"], params=["chatbot_role=agent"]))
    assert len(plan.trials) == 1


def test_cli_judge_option_errors(tmp_path, capsys):
    path = tmp_path / "conv.jsonl"
    path.write_text(CONV)
    rc = main(["benchmark", "plan", str(path), "--judge", "completeness", "--param", "x"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "unknown judge benchmark 'completeness'" in err and "KEY=VALUE" in err
    rc = main(["benchmark", "plan", str(path), "--judge", "faithfulness"])
    assert rc == 2
    assert "no 'input' column" in capsys.readouterr().err
    with pytest.raises(UserError, match="threshold must be between"):
        judge_systems(["hallucination"], params=["threshold=3"])


def test_sweep_yaml_judges_entries(tmp_path):
    (tmp_path / "conv.jsonl").write_text(CONV)
    (tmp_path / "s.yaml").write_text(
        "benchmarks: [{path: conv.jsonl, n_samples: 1}]\n"
        "judges:\n"
        "  - {benchmark: role-adherence, parameters: {chatbot_role: support agent}}\n"
        "  - {benchmark: knowledge_retention, name: kr, model: {max_tokens: 128}}\n"
        "trials: 2\n"
    )
    sweep, base = load_sweep(tmp_path / "s.yaml")
    plan = build_plan(sweep, base)
    assert [t.system_name for t in plan.trials] == [
        "role-adherence",
        "role-adherence",
        "kr",
        "kr",
    ]
    assert len(plan.benchmarks[0].benchmark.cases) == 1
    assert len({t.key for t in plan.trials}) == 4


def test_judge_model_sampling_that_would_not_be_used_is_refused(tmp_path, capsys):
    """Judges answer at temperature 0 without stop strings: a judge model's temperature
    would change the trial key and not one verdict, so it is refused, at its line."""
    from lasagna.evaluation.judge import LLMJudge
    from lasagna.models.spec import ModelSpec

    (tmp_path / "conv.jsonl").write_text(CONV)
    (tmp_path / "s.yaml").write_text(
        "benchmarks: [{path: conv.jsonl}]\n"
        "judges:\n"
        "  - {benchmark: knowledge-retention}\n"
        "  - benchmark: conversation-completeness\n"
        "    model: {temperature: 0.7}\n"
    )
    rc = main(["benchmark", "plan", str(tmp_path / "s.yaml")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "line 5" in err and "judges[1].model.temperature" in err
    assert "temperature 0.7 would not be used" in err and "remove temperature" in err
    with pytest.raises(UserError, match="model.stop"):
        LLMJudge("correctness", model=ModelSpec(stop=("}",)))
    LLMJudge("correctness", model=ModelSpec(temperature=0.0))  # greedy, written out: fine


JUDGED_SWEEP = """\
benchmarks: [{name: sample, n_samples: 3}]
generators:
  - {kind: rag, retriever: {kind: bm25, top_k: 3}, passages: 2, model: {max_tokens: 32}}
judges:
  - {benchmark: faithfulness, parameters: {max_claims: 3}}
"""


def test_judged_generation_keys_hold_the_judges(tmp_path):
    (tmp_path / "s.yaml").write_text(JUDGED_SWEEP)
    sweep, base = load_sweep(tmp_path / "s.yaml")
    (trial,) = build_plan(sweep, base).trials
    assert trial.track == "generation" and [j.benchmark for j in trial.judges] == ["faithfulness"]
    judge = trial.system_config["judges"][0]
    assert judge["benchmark"] == "faithfulness"
    assert judge["model_identity"]["judge"]["prompts"]["faithfulness.claims@v1"]
    (tmp_path / "plain.yaml").write_text(JUDGED_SWEEP.split("judges:")[0])
    sweep, base = load_sweep(tmp_path / "plain.yaml")
    (plain,) = build_plan(sweep, base).trials
    assert plain.key != trial.key and plain.comparability_key == trial.comparability_key


def test_judged_generation_refusals(tmp_path):
    text = JUDGED_SWEEP.replace(
        "kind: rag, retriever: {kind: bm25, top_k: 3}, passages: 2,", "kind: closed_book,"
    )
    text += "  - {benchmark: role-adherence, parameters: {chatbot_role: x}}\n"
    (tmp_path / "s.yaml").write_text(text)
    sweep, base = load_sweep(tmp_path / "s.yaml")
    with pytest.raises(UserError) as err:
        build_plan(sweep, base)
    out = err.value.render()
    assert "closed_book generator has none" in out and "needs turns" in out
    assert all(p.file == str(tmp_path / "s.yaml") and p.where for p in err.value.problems)


def test_two_judges_of_the_generators_never_share_their_columns(tmp_path):
    """Two g-eval criteria under one label (or a benchmark twice) would write one set of
    columns, the second judge's scores over the first's: refused on the second's line."""
    text = JUDGED_SWEEP + (
        "  - {benchmark: g-eval, parameters: {label: brief, criteria: a}}\n"
        "  - {benchmark: g-eval, parameters: {label: brief, criteria: b}}\n"
        "  - {benchmark: faithfulness, parameters: {threshold: 0.7}}\n"
    )
    (tmp_path / "s.yaml").write_text(text)
    sweep, base = load_sweep(tmp_path / "s.yaml")
    with pytest.raises(UserError) as err:
        build_plan(sweep, base)
    fields = {p.field: p for p in err.value.problems}
    assert set(fields) == {"judges[2]", "judges[3]"}
    assert "(g_eval_brief_*)" in fields["judges[2]"].message and "label" in fields["judges[2]"].fix
    assert "judges[0] and judges[3]" in fields["judges[3]"].message
    two = JUDGED_SWEEP + "  - {benchmark: g-eval, parameters: {label: brief, criteria: b}}\n"
    (tmp_path / "ok.yaml").write_text(two)
    sweep, base = load_sweep(tmp_path / "ok.yaml")
    assert build_plan(sweep, base).trials  # one g-eval beside faithfulness: fine


def test_a_g_eval_parameter_on_the_command_line_goes_to_the_judges_that_read_it(tmp_path):
    systems = judge_systems(
        ["relevancy", "g-eval"], params=["criteria=Is it short?", "threshold=0.6"]
    )
    assert [s.parameters for s in systems] == [
        {"threshold": "0.6"},
        {"criteria": "Is it short?", "threshold": "0.6"},
    ]
    (alone,) = judge_systems(["relevancy"], params=["criteria=Is it short?"])
    assert alone.parameters == {"criteria": "Is it short?"}  # refused where it is planned


def test_a_parameter_for_one_judge_on_the_command_line(tmp_path, capsys):
    """`--param JUDGE.KEY=VALUE` is that judge's alone, over the plain value; a judge that
    is not judging, or no judge at all, is refused with the fix before any model loads."""
    systems = judge_systems(
        ["faithfulness", "relevancy", "g-eval"],
        params=["threshold=0.6", "faithfulness.threshold=0.9", "g-eval.criteria=Is it short?"],
    )
    assert [s.parameters for s in systems] == [
        {"threshold": "0.9"},
        {"threshold": "0.6"},
        {"threshold": "0.6", "criteria": "Is it short?"},
    ]
    assert systems[0].params.threshold == 0.9 and systems[1].params.threshold == 0.6
    with pytest.raises(UserError) as err:
        judge_systems(["relevancy"], params=["faithfulness.threshold=0.9"])
    assert "not judging here" in err.value.render() and "--judge faithfulness" in (
        err.value.render()
    )
    with pytest.raises(UserError, match="did you mean 'faithfulness'"):
        judge_systems(["faithfulness"], params=["faithfulnes.threshold=0.9"])
    with pytest.raises(UserError, match="unknown judge parameter 'treshold'"):
        judge_systems(["faithfulness"], params=["faithfulness.treshold=0.9"])
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "input": "q", "actual_output": "a"}\n')
    out = tmp_path / "out"
    argv = ["benchmark", "run", str(path), "--judge", "relevancy", "--output", str(out)]
    assert main([*argv, "--param", "relevancy.criteria=x"]) == 2
    assert "the relevancy judge does not read the 'criteria' parameter" in capsys.readouterr().err
    assert not out.exists()


def test_context_judges_score_the_generators_retrieved_passages(tmp_path):
    context = "".join(
        f"  - {{benchmark: {b}}}\n"
        for b in ("contextual-precision", "contextual-recall", "contextual-relevancy")
    )
    (tmp_path / "s.yaml").write_text(JUDGED_SWEEP + context)
    sweep, base = load_sweep(tmp_path / "s.yaml")
    (trial,) = build_plan(sweep, base).trials
    assert [j.benchmark for j in trial.judges][1:] == [
        "contextual-precision",
        "contextual-recall",
        "contextual-relevancy",
    ]
    closed = JUDGED_SWEEP.replace(
        "kind: rag, retriever: {kind: bm25, top_k: 3}, passages: 2,", "kind: closed_book,"
    )
    (tmp_path / "c.yaml").write_text(closed.split("judges:")[0] + "judges:\n" + context)
    sweep, base = load_sweep(tmp_path / "c.yaml")
    with pytest.raises(UserError) as err:
        build_plan(sweep, base)
    assert err.value.render().count("closed_book generator has none") == 3
