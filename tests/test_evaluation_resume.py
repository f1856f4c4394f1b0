"""A driver SIGKILLed mid-evaluation loses no finished batch: `resume=` runs only the rest,
through the checkpoint store sweeps use (`.trials/<key>/parts/`, then `.trials/<key>/`),
and only for the same executor, evaluators and data (the trial key)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ray import cloudpickle

from lasagna import Datapoint, evaluate
from lasagna.errors import UserError

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = pytest.mark.slow

CHILD = """
import json, os, signal, time
from lasagna import Datapoint, evaluate
os.environ["DRIVER_PID"] = str(os.getpid())  # Ray's workers inherit it

def slow(data):
    with open(os.environ["CALLS"], "a") as fh:
        fh.write(f"{data}\\n")
    time.sleep(0.05)
    if data == 35 and not os.environ.get("RESUME"):
        os.kill(int(os.environ["DRIVER_PID"]), signal.SIGKILL)  # the driver dies mid-run
        time.sleep(30)
    return data

result = evaluate([Datapoint(i, target=i) for i in range(40)], slow,
                  {"same": lambda o, t: o == t}, output=OUT, concurrency=2,
                  resources={"num_cpus": 0.5}, resume=os.environ.get("RESUME") or None)
keys = [[t["task_id"], t["trial_index"]] for t in result.trials]
print(json.dumps({"id": result.evaluation_id, "keys": keys, "averages": result.averages}))
"""


def logged(data):
    return data


def _child(script: Path, tmp_path: Path, calls: Path, resume: str | None = None):
    from ray_procs import cleanup, short_tmpdir
    from test_cli_run import cli_env

    ray_tmp = short_tmpdir()
    env = cli_env(ray_tmp, tmp_path / "cache") | {"CALLS": str(calls)}
    if resume:
        env["RESUME"] = resume
    try:
        return subprocess.run(
            [sys.executable, str(script)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        cleanup(ray_tmp)


def test_killed_driver_resumes_without_rerunning_finished_trials(ray_local, tmp_path):
    out = tmp_path / "results"
    script = tmp_path / "child.py"
    script.write_text(f"OUT = {str(out)!r}\n" + CHILD)
    proc = _child(script, tmp_path, tmp_path / "calls1.txt")
    assert proc.returncode == -9, proc.stderr[-3000:]
    (eid,) = re.findall(r"evaluation (\S+): 40 trials to run", proc.stderr)
    assert not (out / eid).exists()  # no half-written run folder
    assert not (out / ".evaluations").exists()  # one store: the sweeps' .trials/
    parts = sorted((out / ".trials").glob("*/parts/part-*.json"))
    docs = [json.loads(p.read_text()) for p in parts]
    kept = {t["task_id"] for d in docs for t in d["records"]}
    assert 10 <= len(kept) < 40 and "35" not in kept
    assert {d["run_id"] for d in docs} == {eid}

    with pytest.raises(UserError, match="no unfinished evaluation .* of this executor"):
        evaluate([Datapoint(i, target=i) for i in range(40)], logged, {}, output=out, resume=eid)

    proc = _child(script, tmp_path, tmp_path / "calls2.txt", resume=eid)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    rerun = set((tmp_path / "calls2.txt").read_text().split())
    assert rerun == {str(i) for i in range(40)} - kept  # finished rows were not run again
    keys = [tuple(k) for k in result["keys"]]
    assert len(keys) == len(set(keys)) == 40 and result["averages"] == {"same": 1.0}
    assert result["id"] == eid and (out / eid / "manifest.json").exists()
    assert not list((out / ".trials").glob("*/parts"))  # row parts gone once committed
    (key,) = [p.name for p in (out / ".trials").iterdir()]
    assert (out / ".trials" / key / "trial.json").exists()  # the trial's checkpoint
    manifest = json.loads((out / eid / "manifest.json").read_text())
    assert [t["key"] for t in manifest["trials"]] == [key] and manifest["kind"] == "evaluation"
    with pytest.raises(UserError, match="finished already"):
        evaluate([Datapoint(1)], logged, {}, output=out, resume=eid, quiet=True)
    with pytest.raises(UserError, match="no unfinished evaluation"):
        evaluate([Datapoint(1)], logged, {}, output=out, resume="nope", quiet=True)


def _same(output, target):
    return output == target


def test_resume_with_nothing_left_names_the_run_that_holds_the_rows(ray_local, tmp_path, capsys):
    """A stopped run B whose trial another run A finished meanwhile: `resume=B` writes no
    new run, so the result, its printed query and `note_run` name A, which exists."""
    from lasagna.results import sql
    from lasagna.results.store import new_run_id

    out = tmp_path / "results"
    data = [Datapoint(i, target=i) for i in range(4)]
    first = evaluate(data, logged, {"same": _same}, group_name="g", output=out)
    capsys.readouterr()
    stopped = new_run_id()  # as a run killed after A checkpointed the same trial
    again = evaluate(data, logged, {"same": _same}, group_name="g", output=out, resume=stopped)
    said = capsys.readouterr()
    assert f"run {first.evaluation_id} holds them, so no new run is written" in said.err
    assert again.evaluation_id == first.evaluation_id != stopped
    assert (again.name, again.group_name) == (first.name, "g")
    assert f"evaluation_id = '{first.evaluation_id}'" in said.out and stopped not in said.out
    assert "resume=" not in said.err  # nothing runs: no resume to offer
    query = f"SELECT * FROM evaluation_trials WHERE evaluation_id = '{again.evaluation_id}'"
    assert sql(out, query).num_rows == 4 and not (out / stopped).exists()
