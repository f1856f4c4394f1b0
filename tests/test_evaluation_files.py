"""`lasagna eval FILE.py` on files that fail before Ray starts: a mistake in the user's own
code or arguments is a user error (FILE:LINE: ..., no lasagna frame, exit 2); an exception
raised inside lasagna keeps its traceback and exits 1."""

from __future__ import annotations

import pytest

from lasagna.cli import main

HEAD = """from lasagna import Datapoint, evaluate


def executor(data):
    return data


def same(output, target):
    return output == target


"""


def _eval(tmp_path, monkeypatch, capsys, body: str, name: str = "eval_it.py") -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(HEAD + body)
    code = main(["eval", name])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("evaluate(\n    data=[1],\n", "eval_it.py:12: SyntaxError: '(' was never closed"),
        (
            "evaluate(dataset=[1], executor=executor, evaluators=same)\n",
            "eval_it.py:12: TypeError: evaluate() got an unexpected keyword argument 'dataset'. "
            "Fix: evaluate() takes data, executor,",
        ),
        ("import no_such_module_here\n", "eval_it.py:12: ModuleNotFoundError: No module named"),
        (
            "evaluate([Datapoint(1)], executor, same, trials=0)\n",
            "eval_it.py:12: field 'trials': must be",
        ),
        ("evaluate([], executor, same)\n", "eval_it.py:12: field 'data': there is no datapoint"),
        (
            "evaluate([Datapoint(1, task_id='a')] * 2, executor, same)\n",
            "eval_it.py:12: 1 duplicate task id(s); nothing ran\ndata[1]: field 'task_id'",
        ),
        ("x = 1\n", "eval_it.py: it ran no evaluate() call"),
    ],
)
def test_a_mistake_in_the_users_file_is_a_user_error_at_its_line(
    tmp_path, monkeypatch, capsys, body, said
):
    code, err = _eval(tmp_path, monkeypatch, capsys, body)
    assert code == 2, err
    assert f"error: {said}" in err
    assert "Traceback" not in err and "lasagna/" not in err and "runpy" not in err


def test_an_error_in_a_helper_the_file_calls_names_both_lines(tmp_path, monkeypatch, capsys):
    (tmp_path / "helper_mod.py").write_text("def load():\n    return 1 / 0\n")
    code, err = _eval(tmp_path, monkeypatch, capsys, "import helper_mod\n\nhelper_mod.load()\n")
    assert code == 2, err
    assert "error: eval_it.py:14: ZeroDivisionError: division by zero" in err
    assert "raised at helper_mod.py:2, in load" in err


def test_every_wrong_argument_is_listed_in_one_error(tmp_path, monkeypatch, capsys):
    body = (
        "def two(a, b):\n    return a\n\n\n"
        "evaluate([Datapoint(1)], two, {'s': lambda output: 1},\n"
        "         resources={'memory': 1, 'gpu': 1})\n"
    )
    code, err = _eval(tmp_path, monkeypatch, capsys, body)
    assert code == 2, err
    assert "eval_it.py:16: evaluate() is refused (4 problems); nothing ran" in err
    for part in ("field 'executor'", "field 'evaluators['s']'", "'memory'", "'gpu'"):
        assert part in err


def test_an_exception_inside_lasagna_keeps_its_traceback_and_exits_1(tmp_path, monkeypatch, capsys):
    body = "from lasagna.errors import dotted\n\ndotted(5)\n"  # raises inside lasagna
    code, err = _eval(tmp_path, monkeypatch, capsys, body)
    assert code == 1, err
    assert "error: eval_it.py: Traceback" in err and "lasagna/errors.py" in err
