"""calibrate: agreement figures from labels + judge rows (pure), the label checks, the
HaluEval converter, and reading a finished run's judge rows."""

from __future__ import annotations

import json

import pytest

from lasagna.cli.calibrate import load_labels
from lasagna.errors import UserError
from lasagna.judges.calibrate import agreement_of, label_kind
from lasagna.metrics.agreement import cohen_kappa


def rows(flags, scores=None):
    scores = scores or [0.9 if f else 0.1 for f in flags]
    return [
        {"id": f"r{i}", "hallucination_score": s, "hallucination_detected": f, "error": None}
        for i, (f, s) in enumerate(zip(flags, scores, strict=True))
    ]


def test_binary_agreement_with_confusion_and_intervals():
    labels = {f"r{i}": v for i, v in enumerate(["yes", "yes", "no", "no", "yes", "no"])}
    judged = rows([True, False, False, True, True, False]) + [
        {"id": "r9", "error": "boom", "hallucination_score": None}
    ]
    result = agreement_of("hallucination", "human", labels, judged)
    assert result.kind == "binary" and result.rows == 6 and result.unscored == 1
    stats = result.statistics
    assert stats["accuracy"]["value"] == pytest.approx(4 / 6)
    truth = [True, True, False, False, True, False]
    pred = [True, False, False, True, True, False]
    assert stats["cohen_kappa"]["value"] == pytest.approx(cohen_kappa(truth, pred))
    assert stats["accuracy"]["low"] <= 4 / 6 <= stats["accuracy"]["high"]
    assert result.confusion["counts"] == [[2, 1], [1, 2]]
    json.dumps(result.to_json())


def test_graded_labels_give_rank_correlations():
    labels = {"r0": "1", "r1": "3", "r2": "2", "r3": "5"}
    judged = rows([False] * 4, scores=[0.1, 0.5, 0.4, 0.9])
    result = agreement_of("hallucination", "score", labels, judged)
    assert result.kind == "graded"
    assert result.statistics["spearman"]["value"] == pytest.approx(1.0)
    assert result.statistics["kendall_tau_b"]["value"] == pytest.approx(1.0)


def test_a_judge_or_labels_of_one_value_are_explained():
    """A rank correlation of a judge that scores every row alike is nan: said why; so is a
    binary judge that never flags, and labels of one value."""
    labels = {"r0": "1", "r1": "3", "r2": "2", "r3": "5"}
    result = agreement_of("hallucination", "score", labels, rows([False] * 4, [0.5] * 4))
    assert result.statistics["spearman"]["value"] != result.statistics["spearman"]["value"]
    assert "all 4 rows scored 0.5" in result.warnings[0]
    assert "rank correlations are undefined (nan)" in result.warnings[1]
    labels = {f"r{i}": v for i, v in enumerate(["yes", "no", "no", "yes"])}
    never = rows([False] * 4, scores=[0.1, 0.2, 0.3, 0.1])  # scores differ, verdicts not
    (warning,) = agreement_of("hallucination", "human", labels, never).warnings
    assert "the same verdict (False), so kappa is 0" in warning
    same = {f"r{i}": "yes" for i in range(4)}
    (warning,) = agreement_of("hallucination", "h", same, rows([True, False] * 2)).warnings
    assert "every row has the same human label (True)" in warning
    varied = agreement_of("hallucination", "human", labels, rows([True, False, True, False]))
    assert varied.warnings == []


def test_positive_value_and_bad_labels():
    assert label_kind(["hallucinated", "ok"], positive="hallucinated") == "binary"
    with pytest.raises(UserError, match="--positive"):
        label_kind(["good", "bad"], positive=None)


def test_labels_must_cover_every_row(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"input": "q", "actual_output": "a", "context": "c", "human": "yes"}\n'
        '{"input": "q2", "actual_output": "a2", "context": "c"}\n'
    )
    with pytest.raises(UserError, match="1 row"):
        load_labels(str(path), "human")
    with pytest.raises(UserError, match="unknown column 'human'"):
        load_labels(str(path), "other")  # a label column not named is still strict
    bare = tmp_path / "bare.jsonl"
    bare.write_text('{"input": "q", "actual_output": "a"}\n')
    with pytest.raises(UserError, match="no row has the label column"):
        load_labels(str(bare), "human")


def test_labels_in_the_metadata(tmp_path):
    """A file whose labels sit in its metadata: the same file runs with `benchmark run`."""
    from lasagna.data.judge_cases import load_judge_cases

    path = tmp_path / "m.jsonl"
    path.write_text(
        '{"id": "a", "input": "q", "actual_output": "x", "context": "c", '
        '"metadata": {"human": "yes", "by": {"rater": 2}}}\n'
        '{"id": "b", "input": "q2", "actual_output": "y", "context": "c", '
        '"metadata": {"human": "no", "by": {"rater": 4}}}\n'
    )
    assert load_labels(str(path), "human")[1] == {"a": "yes", "b": "no"}
    assert load_labels(str(path), "metadata.human")[1] == {"a": "yes", "b": "no"}
    assert load_labels(str(path), "by.rater")[1] == {"a": 2, "b": 4}
    assert len(load_judge_cases(path).cases) == 2  # no label column: a plain judge file
    with pytest.raises(UserError, match="no row has the label column 'humans'") as err:
        load_labels(str(path), "humans")
    assert "did you mean 'human'?" in err.value.problems[0].fix


def test_a_positive_value_no_label_has_is_refused():
    """`--positive maybe` on yes/no labels made every row negative: accuracy and kappa 1.0
    against a judge that never flags."""
    from lasagna.cli.calibrate import check_positive

    labels = {"a": "yes", "b": "No"}
    check_positive("no", labels, "human")
    check_positive(None, labels, "human")
    with pytest.raises(UserError, match="label is 'maybe'") as err:
        check_positive("maybe", labels, "human")
    assert err.value.problems[0].fix == "name one of the labels: no, yes"


def test_labels_it_cannot_read_are_refused_before_judging(tmp_path, capsys):
    from lasagna.cli import main

    path = tmp_path / "lab.jsonl"
    rows_ = [("a", "yes"), ("b", "maybe")]
    path.write_text(
        "".join(
            json.dumps({"id": i, "input": "q", "actual_output": "a", "context": ["c"],
                        "metadata": {"human": v}}) + "\n"
            for i, v in rows_
        )
    )  # fmt: skip
    out = tmp_path / "results"
    argv = ["benchmark", "calibrate", str(path), "--judge", "hallucination"]
    assert main([*argv, "--label-column", "human", "--output", str(out)]) == 2
    assert "neither yes/no nor numbers" in capsys.readouterr().err
    assert not out.exists()  # refused before any judge ran


def test_halueval_converter_balances_labels(shared_data, tmp_path):
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "convert_halueval.py"
    spec = importlib.util.spec_from_file_location("convert_halueval", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows_out = module.convert(shared_data / "halueval" / "general_data.json", 20, seed=0)
    assert [r["metadata"]["human_hallucination"] for r in rows_out].count("yes") == 10
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows_out))
    cases, labels = load_labels(str(path), "human_hallucination")
    assert len(cases.cases) == 20 and set(labels.values()) == {"yes", "no"}
