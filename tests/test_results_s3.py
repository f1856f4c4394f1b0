"""Results on a real S3-compatible server (moto's server mode on 127.0.0.1, through s3fs):
runs and checkpoints commit atomically there too, readers never see half a run, two writer
processes at once (on S3 and on a local disk) lose or mix nothing, a bad bucket is refused
before Ray starts, and two real `lasagna benchmark run` drivers share one S3 root."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from ray_procs import cleanup, dead_pid, short_tmpdir
from test_results_store import make_trial

from lasagna.errors import UserError
from lasagna.results import (
    leaderboard,
    list_runs,
    load_trial,
    open_run,
    remove_stale_temps,
    save_trial,
    sql,
    write_run,
)
from lasagna.results import run_writer as results_run_writer
from lasagna.results.fs import Store

BUCKET = "lasagna-test"
REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    """One moto S3 server for the module, and the environment a user would set for it."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{port}",  # what a MinIO/Ceph user sets
    }
    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        mp.delenv("AWS_PROFILE", raising=False)
        fsspec.filesystem("s3", skip_instance_cache=True).mkdir(BUCKET)
        yield env
    server.stop()


@pytest.fixture
def s3_root(s3_env, request) -> str:
    return f"s3://{BUCKET}/{request.node.name.replace('[', '-').rstrip(']')}"


def objects(root: str) -> list[str]:
    """Every object under a root, relative to it."""
    return Store(root).find(Store(root).root)


def test_run_and_checkpoint_on_s3(s3_root: str) -> None:
    t1, t2 = make_trial("k1", [0.25, 0.75]), make_trial("k2", [1.0, 0.0], system="dense")
    write_run(s3_root, "r1", {"profile": "speed"}, [t1, t2])
    save_trial(s3_root, t1)
    save_trial(s3_root, make_trial("k1", [1.0, 1.0]))  # replaces, removes the old version
    names = objects(s3_root)
    assert sorted(n for n in names if n.startswith("r1/")) == [
        "r1/manifest.json",
        "r1/trials/k1.parquet",
        "r1/trials/k2.parquet",
    ]
    checkpoint = sorted(n for n in names if n.startswith(".trials/"))
    assert len(checkpoint) == 2 and checkpoint[0] == ".trials/k1/trial.json"
    assert checkpoint[1].startswith(".trials/k1/v@") and checkpoint[1].endswith("/rows.parquet")
    assert not [n for n in names if n.startswith(".tmp")]  # no lease or probe left

    run = open_run("r1", s3_root)
    assert run.location == f"{s3_root}/r1"  # shown with its scheme, as users name it
    assert run.rows("k2").equals(t2.rows)
    assert load_trial(s3_root, "k1").metrics["ndcg@10"] == 1.0
    assert [s.run_id for s in list_runs(s3_root)] == ["r1"]
    assert {line.system for g in leaderboard(s3_root) for line in g.lines} == {"bm25", "dense"}
    assert sql(s3_root, "SELECT count(*) AS n FROM rows").column("n").to_pylist() == [4]
    with pytest.raises(UserError, match="never overwritten"):
        write_run(s3_root, "r1", {}, [t1])


def test_readers_never_see_half_a_run_on_s3(s3_root: str, monkeypatch) -> None:
    real = results_run_writer.write_parquet
    seen: list[list[str]] = []

    def look_while_writing(store, path, table):
        real(store, path, table)
        seen.append([s.run_id for s in list_runs(s3_root)])  # a reader, mid-write
        if path.endswith("k3.parquet"):
            raise RuntimeError("driver killed")

    write_run(s3_root, "r1", {}, [make_trial("k1", [0.5])])
    monkeypatch.setattr(results_run_writer, "write_parquet", look_while_writing)
    with pytest.raises(RuntimeError):
        write_run(s3_root, "r2", {}, [make_trial(f"k{i}", [0.5]) for i in (2, 3)])
    assert seen == [["r1"], ["r1"]]  # r2's files were there, but no manifest yet
    assert [s.run_id for s in list_runs(s3_root)] == ["r1"]
    assert not [n for n in objects(s3_root) if not n.startswith("r1/")]  # cleaned up


def test_dead_writers_debris_on_s3_is_removed_live_is_kept(s3_root: str) -> None:
    dead = dead_pid()
    host = socket.gethostname()
    store = Store(s3_root)
    fs = store.fs
    # a run whose writer died after its Parquet files, before its manifest
    fs.pipe_file(store.path(f".tmp-lease-r-dead@{host}.{dead}.0123abcd"), b"")
    fs.pipe_file(store.path("r-dead", "trials", "k.parquet"), b"PAR1")
    # a run being written right now by a live writer (this process)
    fs.pipe_file(store.path(f".tmp-lease-r-live@{host}.{os.getpid()}.0123abcd"), b"")
    fs.pipe_file(store.path("r-live", "trials", "k.parquet"), b"PAR1")
    # a checkpoint: its committed version, and one a dead writer never committed
    save_trial(s3_root, make_trial("k1", [0.5]))
    fs.pipe_file(store.path(".trials", "k1", f"v@{host}.{dead}.0123abcd", "rows.parquet"), b"x")
    # a dead writer's probe object, beside a user's folder of that name (never a run's)
    fs.pipe_file(store.path(f".tmp-probe@{host}.{dead}.0123abcd"), b"")
    fs.pipe_file(store.path("probe", "notes.txt"), b"mine")
    assert list_runs(s3_root) == []
    assert remove_stale_temps(s3_root) == 3
    left = objects(s3_root)
    # by name and pid: a live writer's random hex may spell "dead" ("v@host.pid.dedead83")
    assert not [n for n in left if "r-dead" in n or f".{dead}." in n]
    assert "r-live/trials/k.parquet" in left and "probe/notes.txt" in left
    assert load_trial(s3_root, "k1").metrics["ndcg@10"] == 0.5


def test_fsspec_settings_reach_the_store(s3_root: str, s3_env, monkeypatch) -> None:
    """The other documented way: FSSPEC_S3_* options instead of the AWS variables."""
    import fsspec.config

    write_run(s3_root, "r1", {}, [make_trial("k1", [0.5])])
    documented = {
        "FSSPEC_S3_ENDPOINT_URL": s3_env["AWS_ENDPOINT_URL_S3"],
        "FSSPEC_S3_KEY": "testing",
        "FSSPEC_S3_SECRET": "testing",
    }
    conf: dict = {}
    fsspec.config.set_conf_env(conf, documented)  # what fsspec does with them at import
    monkeypatch.setattr(fsspec.config, "conf", conf)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    assert [s.run_id for s in list_runs(s3_root)] == ["r1"]


def test_unwritable_bucket_is_refused_before_ray(s3_env, tmp_path: Path, monkeypatch, capsys):
    from test_faults import sweep_file

    from lasagna.cli import main
    from lasagna.engine import sweep_part

    with pytest.raises(UserError, match="cannot use results there") as err:
        Store("s3://no-such-bucket-here/results").check_writable()
    assert "s3://no-such-bucket-here/results" in err.value.render()
    Store(f"s3://{BUCKET}/probe").check_writable()  # a good one passes, leaves nothing
    assert objects(f"s3://{BUCKET}/probe") == []

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray must not start for an output that cannot be written")

    monkeypatch.setattr(sweep_part, "ray_session", no_ray)
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "cache"))
    out = "s3://no-such-bucket-here/results"
    assert main(["benchmark", "run", str(sweep_file(tmp_path)), "--output", out]) == 2
    err_text = " ".join(capsys.readouterr().err.split())
    assert "cannot use results there" in err_text and out in err_text and "Fix:" in err_text
    assert "Traceback" not in err_text


def test_a_missing_bucket_is_said_by_the_readers(s3_root: str, capsys) -> None:
    """A mistyped bucket is an error naming it (exit 2), not "no runs yet"; an existing
    bucket with nothing under the root is "no runs in <root> yet"."""
    from lasagna.cli import main

    missing = "s3://no-such-bucket-here/results"
    for call in (lambda: list_runs(missing), lambda: leaderboard(missing)):
        with pytest.raises(UserError, match="bucket 'no-such-bucket-here' does not exist"):
            call()
    capsys.readouterr()
    for command in (["results", "list"], ["results", "leaderboard"], ["view", "--port", "0"]):
        assert main([*command, "--output", missing]) == 2
        said = capsys.readouterr()
        assert "no-such-bucket-here" in said.err and "Traceback" not in said.err
        assert "serving" not in said.out  # the view refuses before it serves
    assert list_runs(s3_root) == []
    assert main(["results", "list", "--output", s3_root]) == 0
    assert f"no runs in {s3_root} yet" in " ".join(capsys.readouterr().out.split())


def test_missing_credentials_are_a_user_error(s3_root: str, monkeypatch) -> None:
    """No credentials anywhere: every way in says so, naming the location (no traceback)."""
    import s3fs

    write_run(s3_root, "r1", {}, [make_trial("k1", [0.5])])
    save_trial(s3_root, make_trial("k1", [0.5]))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3fs.S3FileSystem.clear_instance_cache()  # a cached client keeps its credentials
    try:
        for call in (
            lambda: list_runs(s3_root),
            lambda: load_trial(s3_root, "k1"),  # what --resume does first
            lambda: Store(s3_root).check_writable(),
        ):
            with pytest.raises(UserError, match="NoCredentialsError") as err:
                call()
            text = err.value.render()
            assert s3_root in text and "credentials" in text
    finally:
        s3fs.S3FileSystem.clear_instance_cache()


WRITER = """
import sys
from test_results_store import make_trial
from lasagna.results import save_trial, write_run

root, tag, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    values = [tag + i / 1000, float(i)]
    save_trial(root, make_trial("shared", values, seed=tag))
    save_trial(root, make_trial(f"own-{tag}-{i}", values))
write_run(root, f"run-{tag}", {}, [make_trial("shared", [0.5]), make_trial(f"own-{tag}-0", [1.0])])
"""


@pytest.mark.parametrize("where", ["local", "s3"])
def test_two_writer_processes_at_once_mix_and_lose_nothing(
    where: str, tmp_path: Path, request, caplog
) -> None:
    root = str(tmp_path / "results") if where == "local" else request.getfixturevalue("s3_root")
    n = 3
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, root, str(tag), str(n)], env=env)
        for tag in (1, 2)
    ]
    reads = 0
    with caplog.at_level("WARNING", logger="lasagna.results"):
        while any(w.poll() is None for w in writers):
            trial = load_trial(root, "shared")  # a reader while both replace it
            if trial is not None:  # one writer's metadata with that writer's own rows
                first = trial.rows.column("ndcg@10").to_pylist()[0]
                assert trial.seed == int(first), "metadata and rows of different writers"
                values = trial.rows.column("ndcg@10").to_pylist()
                assert trial.metrics["ndcg@10"] == pytest.approx(sum(values) / len(values))
                reads += 1
            time.sleep(0.01)  # the S3 server runs in this process: leave it the GIL
    assert [w.returncode for w in writers] == [0, 0]
    assert "checkpoint" not in caplog.text  # never a corrupt or missing one
    assert reads > 0
    assert sorted(s.run_id for s in list_runs(root)) == ["run-1", "run-2"]
    for tag in (1, 2):
        for i in range(n):
            own = load_trial(root, f"own-{tag}-{i}")
            assert own is not None and own.rows["ndcg@10"].to_pylist() == [tag + i / 1000, i]
    remove_stale_temps(root)  # versions the losing writer committed and nobody names
    store = Store(root)
    inside = store.listdir(store.path(".trials", "shared"))
    assert len(inside) == 2 and "trial.json" in inside  # the pointer and its one version


# ---------------------------------------------------------------- two sweeps, real CLI
SWEEP = """\
benchmarks:
  - {{name: sample}}
retrievers:
  - grid: {{kind: bm25, k1: {k1}, top_k: 10}}
"""


@pytest.mark.slow
def test_two_sweeps_at_once_into_one_s3_root_then_resume(s3_root, tmp_path, capsys) -> None:
    """Two `lasagna benchmark run` drivers write one S3 root at once (they share one trial);
    both runs are listed and ranked, and a --resume of their union restores every trial
    from the S3 checkpoints with the rows each sweep computed."""
    from test_faults import cli_env, lasagna_cmd

    from lasagna.cli import main
    from lasagna.results.store import load_runs

    sweeps = {}
    for name, k1 in (("a", "[0.9, 1.2]"), ("b", "[1.2, 1.5]"), ("both", "[0.9, 1.2, 1.5]")):
        sweeps[name] = tmp_path / f"{name}.yaml"
        sweeps[name].write_text(SWEEP.format(k1=k1))
    ray_tmps = [short_tmpdir() for _ in range(2)]
    drivers = [
        subprocess.Popen(
            lasagna_cmd("benchmark", "run", str(sweeps[name]), "--output", s3_root),
            env=cli_env(ray_tmp, tmp_path / "cache"),  # one model/index cache, as on a machine
            cwd=tmp_path,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, ray_tmp in zip("ab", ray_tmps, strict=True)
    ]
    try:
        errs = [d.communicate(timeout=400)[1] for d in drivers]
    finally:
        for d in drivers:
            if d.poll() is None:
                os.killpg(d.pid, 9)
        for ray_tmp in ray_tmps:
            cleanup(ray_tmp)
    assert [d.returncode for d in drivers] == [0, 0], errs
    assert all(f"-> {s3_root}/" in " ".join(e.split()) for e in errs), errs

    runs = load_runs(s3_root)
    assert len(runs) == 2 and all(len(r.trials) == 2 for r in runs)
    (shared,) = set.intersection(*({t.key for t in r.trials} for r in runs))
    assert runs[0].rows(shared).equals(runs[1].rows(shared))  # same trial, same rows
    computed = {t.key: r.rows(t.key) for r in runs for t in r.trials}
    assert len(computed) == 3

    capsys.readouterr()
    assert main(["results", "list", "--output", s3_root]) == 0
    listed = capsys.readouterr().out
    assert all(r.run_id in listed for r in runs)
    assert len({line.system_id for g in leaderboard(s3_root) for line in g.lines}) == 3

    assert main(["benchmark", "run", str(sweeps["both"]), "--output", s3_root, "--resume"]) == 0
    said = capsys.readouterr()
    assert "restored 3 finished trial(s) of 3" in " ".join(said.err.split())
    newest = load_runs(s3_root)[0]
    assert f"run folder: {s3_root}/{newest.run_id}" in said.out  # a URI one can open
    assert len(newest.manifest["restored_trials"]) == 3 and newest.manifest["ray"] == {}
    for key, rows in computed.items():
        assert newest.rows(key).equals(rows)
    assert not [n for n in objects(s3_root) if n.startswith(".tmp") or "/.tmp" in n]
