"""Run lasagna commands in one process with the example plugin on the path and one Ray for
all of them (the engine reuses a Ray it finds running): the plugin's judge and track from
the command line and from sweeps, then the results commands on what they wrote.

    python tests/plugin_session.py WORKDIR   (WORKDIR holds the inputs; writes WORKDIR/session.json)

Each command is `lasagna.cli.main(argv)`, the code the `lasagna` command runs; its exit code,
stdout and stderr go to session.json for the test to read."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from pathlib import Path


def run(argv: list[str]) -> dict:
    from lasagna.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code
    return {"argv": argv, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main(work: Path) -> None:
    import ray

    ray.init(  # its own, never a Ray already running on the machine
        address="local",
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        logging_level="WARNING",
    )
    sample = str(Path(__file__).resolve().parents[1] / "lasagna" / "sample" / "sample.jsonl")
    out = ["--output", str(work / "out")]
    done = [
        run(["benchmark", "run", sample, "--profile", "extractive", *out]),
        run(["benchmark", "run", str(work / "cases.jsonl"), "--judge", "answer-length", *out]),
        run(["benchmark", "run", str(work / "track.yaml"), *out]),
        run(["benchmark", "run", str(work / "judges.yaml"), *out]),
    ]
    ray.shutdown()
    runs = [re.search(r"wrote run (\S+)", d["stderr"] + d["stdout"]) for d in done]
    cli_run, sweep_run = (m.group(1) if m else "missing" for m in (runs[0], runs[2]))
    done += [
        run(["results", "compare", cli_run, sweep_run, *out]),  # the track's two runs
        run(["results", "leaderboard", *out]),
        run(["results", "compare", "latest", *out]),
        run(
            [
                "results",
                "sql",
                'SELECT system, track, extract_f1, "judged@10", '
                "answer_length_score FROM trials ORDER BY track, system",
                *out,
            ]
        ),
        run(["report", "--out", str(work / "report.html"), *out]),
    ]
    (work / "session.json").write_text(json.dumps(done, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
