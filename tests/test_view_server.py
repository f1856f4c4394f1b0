"""`lasagna view` over hand-made run folders, through its real ASGI app (Starlette's test
client; no Ray, no browser): every route, the 404 and damaged-run pages, the drill-down the
report builds, paged rows read from row groups, traces, one question across runs, and that
nothing is ever written into the root."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from starlette.testclient import TestClient
from test_report_data import BM25, DENSE, generation_trial
from test_results_store import make_trial

from lasagna.cli import main
from lasagna.results import evaluations as ev
from lasagna.results import write_run
from lasagna.results.report import build_report
from lasagna.results.store import open_run
from lasagna.results.view import create_app
from lasagna.results.view.serve import is_loopback

TRACE = "ab" * 16


def _span(span_id: str, parent: str | None, name: str, kind: str, start: int, end: int, **attrs):
    return {
        "trace_id": TRACE,
        "span_id": span_id,
        "parent_span_id": parent,
        "name": name,
        "kind": "INTERNAL",
        "span_type": kind,
        "start_ns": start,
        "end_ns": end,
        "status": "OK",
        "status_message": None,
        "attributes": {"lasagna.span.type": kind} | attrs,
    }


def write_traced_evaluation(root: Path, run_id: str = "ev1", judge: dict | None = None) -> None:
    """An evaluate() run folder with one trial's spans, written by the real writers; `judge`:
    the evaluator is an LLM judge named `accuracy` with this judgement (LLMJudge.annotate)."""
    t0 = 1_700_000_000_000_000_000
    said = {f"lasagna.span.judge.{k}": v for k, v in (judge or {}).items()}
    spans = [
        _span(
            "e" * 16,
            "x" * 16,
            "accuracy" if judge else "evaluate",
            "EVALUATOR",
            t0 + 7_000_000,
            t0 + 8_000_000,
            **{"lasagna.span.output": "1"},
            **said,
        ),
        _span(
            "r" * 16,
            None,
            "evaluation",
            "EVALUATION",
            t0,
            t0 + 9_000_000,
            **{"lasagna.span.input": '{"country": "France"}'},
        ),
        _span(
            "x" * 16,
            "r" * 16,
            "executor",
            "EXECUTOR",
            t0 + 1_000_000,
            t0 + 6_000_000,
            **{"lasagna.span.input": '{"country": "France"}', "lasagna.span.output": '"Paris"'},
        ),
        _span(
            "l" * 16,
            "x" * 16,
            "llm SmolLM2",
            "LLM",
            t0 + 2_000_000,
            t0 + 5_000_000,
            **{
                "gen_ai.usage.input_tokens": 12,
                "gen_ai.usage.output_tokens": 3,
                "gen_ai.request.model": "SmolLM2",
                "lasagna.span.output": '"Paris"',
            },
        ),
    ]
    spans[0]["parent_span_id"] = "r" * 16
    trial = {
        "task_id": "france",
        "trial_index": 0,
        "data": '{"country": "France"}',
        "target": '"Paris"',
        "metadata": "{}",
        "output": '"Paris"',
        "scores": {"accuracy": 1.0},
        "error": None,
        "error_type": None,
        "trace_id": TRACE,
        "started_at": "2026-01-03T00:00:00+00:00",
        "duration_s": 0.009,
    }
    record = {
        "evaluation_id": run_id,
        "name": "capitals-v1",
        "group_name": "capitals",
        "created_at": "2026-01-03T00:00:00+00:00",
        "finished_at": "2026-01-03T00:00:01+00:00",
        "executor": "capital",
        "n_datapoints": 1,
        "n_trials": 1,
        "n_errors": 0,
        "averages": {"accuracy": 1.0},
        "metadata": {},
        "path": str(root / run_id),
    }
    manifest = {
        "kind": ev.KIND,
        "created_at": record["created_at"],
        "evaluation": {k: v for k, v in record.items() if k != "path"},
    }
    tables = {
        ev.EVALUATIONS: ev.evaluations_table(record),
        ev.TRIALS: ev.trials_table(run_id, [trial], spans),
        ev.SPANS: ev.spans_table(run_id, spans),
    }
    write_run(root, run_id, manifest, [], tables=tables)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_run(
        tmp_path,
        "r1",
        {"created_at": "2026-01-01T00:00:00+00:00"},
        [
            make_trial("a-bm25-0", [0.2, 0.4, 0.6, 0.8], config=BM25),
            make_trial("a-dense-0", [1.0, 0.5, 0.5, 0.5], system="dense", config=DENSE),
        ],
    )
    write_run(
        tmp_path,
        "r2",
        {"created_at": "2026-01-02T00:00:00+00:00", "command": "lasagna benchmark run s.yaml"},
        [
            make_trial("b-bm25-0", [0.2, 0.4, 0.6, 0.1], config=BM25),
            generation_trial("b-gen-0", "2026-01-02T00:00:00+00:00"),
        ],
    )
    write_traced_evaluation(tmp_path)
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "manifest.json").write_text("{not json")
    return tmp_path


@pytest.fixture
def client(root: Path) -> TestClient:
    return TestClient(create_app(root))


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    }


def test_home_lists_every_group_and_the_damaged_folder(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    html = page.text
    assert html.count('<section class="group" id=') == 3  # retrieval, generation, capitals
    assert 'class="broken-run" data-run="damaged"' in html
    assert "unreadable run manifest" in html
    assert 'id="live"' in html and "/static/" in html and "<script src=" in html
    assert "Plotly" not in html  # assets are linked, not inlined (the report file inlines them)


def test_drill_api_serves_the_reports_own_rows(client: TestClient, root: Path) -> None:
    html = client.get("/").text
    urls = [u.replace("&amp;", "&") for u in re.findall(r'data-src="([^"]+)"', html)]
    assert len(urls) == 3
    offline = build_report([open_run(r, root) for r in ("ev1", "r2", "r1")])  # newest first
    for url in urls:
        got = client.get(url).json()
        key = re.search(r"key=([^&]+)", url).group(1)
        group = next(g for g in offline["groups"] if g["key"] == key)
        assert got["drill"]["runs"] == group["drill"]["runs"]
        assert got["drill"]["questions"] == group["drill"]["questions"]
    assert client.get("/api/drill?kind=benchmark&key=nope").status_code == 404


def test_deep_links_open_their_views(client: TestClient) -> None:
    run = client.get("/run/r2")
    assert run.status_code == 200 and 'class="group run-facts" data-run="r2"' in run.text
    assert "lasagna benchmark run s.yaml" in run.text and "/run/r2/trial/b-gen-0" in run.text
    assert client.get("/run/r").status_code == 404  # a prefix of two runs: not unique
    group = client.get("/group/group-1")
    assert group.status_code == 200 and group.text.count('<section class="group" id=') == 1
    assert client.get("/group/capitals").status_code == 200
    pair = client.get("/compare?a=r1&b=r2")
    assert pair.status_code == 200
    assert 'A = <code><a class="run-link" href="/run/r1">r1</a></code>' in pair.text


def test_missing_run_and_unknown_pages_are_404_pages(client: TestClient) -> None:
    missing = client.get("/run/nope")
    assert missing.status_code == 404
    assert "no run &#39;nope&#39;; the most recent are: ev1, r2, r1" in missing.text
    for url in ("/group/nope", "/trace/nope", "/question/group-1/nope", "/no/such", "/compare"):
        page = client.get(url)
        assert page.status_code == 404 and 'class="group error-box"' in page.text, url


def test_a_damaged_run_is_shown_as_such(client: TestClient, root: Path) -> None:
    page = client.get("/run/damaged")
    assert page.status_code == 422
    assert "This run folder is damaged" in page.text and "unreadable run manifest" in page.text
    # a readable manifest whose rows are not Parquet: the pages still open, the rows say why
    rows = next((root / "r1" / "trials").glob("a-dense-0*"))
    rows.write_bytes(b"not parquet")
    fresh = TestClient(create_app(root))
    assert fresh.get("/").status_code == 200
    answer = fresh.get("/api/drill?scope=run:r1&kind=benchmark&key=group-1")
    assert answer.status_code == 422 and "cannot read the rows of trial" in answer.json()["error"]
    assert fresh.get("/run/r1/trial/a-dense-0").status_code == 422


def test_trial_rows_come_a_page_at_a_time_from_their_row_groups(tmp_path: Path) -> None:
    values = [i / 130 for i in range(130)]
    write_run(
        tmp_path,
        "big",
        {"created_at": "2026-01-01T00:00:00+00:00"},
        [make_trial("k", values, config=BM25)],
    )
    run = open_run("big", tmp_path)
    path = Path(run.rows_path("k"))
    pq.write_table(pq.read_table(path), path, row_group_size=20)  # 7 row groups
    page, total = run.rows_page("k", 45, 50, ["id", "ndcg@10"])
    assert total == 130 and page.column_names == ["id", "ndcg@10"]
    assert page["id"].to_pylist() == [f"q{i}" for i in range(45, 95)]
    assert run.rows_page("k", 120, 50)[0]["id"].to_pylist() == [f"q{i}" for i in range(120, 130)]
    assert run.rows_with_ids("k", ["q7", "q99"])["id"].to_pylist() == ["q7", "q99"]
    html = TestClient(create_app(tmp_path)).get("/run/big/trial/k?page=3").text
    assert re.findall(r'data-qid="(q\d+)"', html)[:2] == ["q100", "q101"]
    assert "page 3 of 3" in html and 'href="?page=2"' in html


def test_trace_page_is_the_span_tree(client: TestClient) -> None:
    run = client.get("/run/ev1").text
    assert f'href="/trace/{TRACE}"' in run
    page = client.get(f"/trace/{TRACE}")
    assert page.status_code == 200
    spans = re.findall(r'data-type="(\w+)" data-depth="(\d)"', page.text)
    assert spans == [("EVALUATION", "0"), ("EXECUTOR", "1"), ("LLM", "2"), ("EVALUATOR", "1")]
    assert "tokens 12 in / 3 out" in page.text and "accuracy 1.0" in page.text
    assert "<pre>Paris</pre>" in page.text  # the executor's output, a JSON string unquoted


def test_one_question_across_every_run_and_system(client: TestClient) -> None:
    page = client.get("/question/group-1/q1")
    assert page.status_code == 200
    columns = re.findall(r'class="column trial" data-run="(\w+)" data-system="(\w+)"', page.text)
    assert columns == [("r2", "bm25"), ("r1", "bm25"), ("r1", "dense")]
    assert page.text.count('<ol class="ranked">') == 3
    evaluation = client.get("/question/capitals/france")
    assert evaluation.status_code == 200 and f"/trace/{TRACE}" in evaluation.text


def test_the_server_never_writes_into_the_root(client: TestClient, root: Path) -> None:
    before = _tree(root)
    html = client.get("/").text
    urls = [
        "/",
        "/run/r1",
        "/run/r2",
        "/run/ev1",
        "/run/r1/trial/a-bm25-0",
        "/group/group-1",
        "/compare?a=r1&b=r2",
        f"/trace/{TRACE}",
        "/question/group-1/q1",
        "/api/live",
        "/api/runs",
        "/run/damaged",
        "/run/nope",
    ]
    urls += [u.replace("&amp;", "&") for u in re.findall(r'data-src="([^"]+)"', html)]
    urls += re.findall(r'href="(/static/[^"]+)"', html)
    for url in urls:
        assert client.get(url).status_code in (200, 404, 422), url
    assert client.post("/").status_code == 405
    assert _tree(root) == before


def test_only_loopback_unless_allowed(tmp_path: Path, capsys) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert main(["view", "--output", str(tmp_path), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "no authentication" in err and "--allow-remote" in err
    assert os.listdir(tmp_path) == []
    for port in ("99999", "-1"):  # a number that is no port: the refusal, not a traceback
        assert main(["view", "--output", str(tmp_path), "--port", port]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"field '--port': {port} is not a port (0-65535)" in err, err


def test_runs_api_lists_runs_and_damaged_folders(client: TestClient) -> None:
    listed = {r["id"]: r for r in client.get("/api/runs").json()}
    assert set(listed) == {"r1", "r2", "ev1", "damaged"}
    assert listed["ev1"]["kind"] == "evaluation" and "damaged" in listed["damaged"]
    assert json.loads(client.get("/api/live").text)["version"]


def test_an_object_store_root_is_served_the_same(tmp_path: Path) -> None:
    import fsspec

    from lasagna.results.status import RunStatus

    root = f"memory://lasagna-view-{os.getpid()}-{tmp_path.name}"
    try:
        write_run(
            root,
            "m1",
            {"created_at": "2026-01-01T00:00:00+00:00"},
            [make_trial("m-bm25-0", [0.2, 0.4], config=BM25)],
        )
        RunStatus(root, "m2", "sweep", 3).start().trial_finished("k", 1.0)
        client = TestClient(create_app(root))
        home = client.get("/").text
        assert 'data-run="m2" data-state="running" data-done="1"' in home
        assert client.get("/run/m1/trial/m-bm25-0").text.count('class="row"') == 2
        drill = client.get("/api/drill?scope=run:m1&kind=benchmark&key=group-1").json()
        assert set(drill["drill"]["runs"][0]["trials"][0]["rows"]) == {"q0", "q1"}
    finally:
        fsspec.filesystem("memory").rm(root.removeprefix("memory://"), recursive=True)


def test_a_trial_is_named_by_its_key_its_start_or_its_system(client: TestClient) -> None:
    """The progress lines print a trial key's first 8 characters: that opens its rows too."""
    for ref in ("b-gen-0", "b-gen", "b-g"):
        page = client.get(f"/run/r2/trial/{ref}")
        assert page.status_code == 200 and "trial <code>b-gen-0</code>" in page.text, ref
    assert "trial <code>a-dense-0</code>" in client.get("/run/r1/trial/dense").text
    ambiguous = client.get("/run/r2/trial/b-")
    assert ambiguous.status_code == 404 and "b-bm25-0 (bm25)" in ambiguous.text
    assert "2 trials matching &#39;b-&#39;" in ambiguous.text
    missing = client.get("/run/r1/trial/zzz").text
    assert "no trial &#39;zzz&#39;; its trials: a-bm25-0 (bm25), a-dense-0 (dense)" in missing


def test_a_judges_reason_and_a_degenerate_row_are_on_the_trace(tmp_path: Path) -> None:
    """An LLM judge's score on the trace page says whether the row was judged, and why."""
    judge = {"benchmark": "faithfulness", "metric": "faithfulness_score", "degenerate": True}
    judge |= {"degenerate_reason": "no claims found", "reason": "The output states no claim."}
    write_traced_evaluation(tmp_path, judge=judge)
    page = TestClient(create_app(tmp_path)).get(f"/trace/{TRACE}").text
    chip = re.search(r'<span class="score-chip">accuracy 1.0 (.*?)</span></span>', page)
    assert chip and "⚠ degenerate" in chip.group(1) and "no claims found" in chip.group(1)
    assert "⚠ degenerate: no claims found" in page
    assert '<p class="judge-reason">reason: The output states no claim.</p>' in page
    run = TestClient(create_app(tmp_path)).get("/run/ev1").text  # the run's rows mark it too
    row = re.search(r'<tr class="eval-trial" data-task="france">(.*?)</tr>', run, re.S).group(1)
    assert "accuracy 1.0000 <span" in row and "⚠ degenerate" in row and "no claims found" in row
    write_traced_evaluation(tmp_path / "judged", judge=judge | {"degenerate": False})
    judged = TestClient(create_app(tmp_path / "judged")).get(f"/trace/{TRACE}").text
    assert "reason: The output states no claim." in judged and "⚠" not in judged
    assert "⚠" not in TestClient(create_app(tmp_path / "judged")).get("/run/ev1").text


def test_an_evaluation_runs_trial_links_its_group_and_counts_its_failed_rows(
    tmp_path: Path,
) -> None:
    """An evaluate() run's trial: its benchmark links to the evaluation group (the trial's own
    comparability key is no group of the view), and rows an evaluator failed are `failed`."""
    from types import SimpleNamespace

    points = [
        SimpleNamespace(
            order=i, task_id=f"t{i}", trial_index=0, data="q", target=None, metadata=None
        )
        for i in range(3)
    ]
    records = [ev.row_record(p, output="a", scores={"words": 1.0}) for p in points]
    for r in records[1:]:
        r |= {"error": "evaluator faith: JudgeError: bad reply", "error_type": "JudgeError"}
    trial = make_trial("sdk-0", [1.0, 1.0, 1.0], system="bot", ckey="datapoints@x|-|sdk")
    trial.track, trial.counts = "sdk", {"rows": 3, "errors": 2, "datapoints": 3}
    trial.rows = ev.rows_table(records)
    evaluation = {"name": "caps-v1", "group_name": "caps", "n_trials": 3, "n_errors": 2}
    manifest = {"kind": ev.KIND, "created_at": "2026-01-03T00:00:00+00:00"}
    write_run(tmp_path, "ev2", manifest | {"evaluation": evaluation}, [trial])
    client = TestClient(create_app(tmp_path))
    page = client.get("/run/ev2").text
    row = re.search(r'<tr class="trial-row" data-key="sdk-0">(.*?)</tr>', page, re.S).group(1)
    assert 'href="/group/caps"' in row and '<td class="num error">2</td>' in row
    assert client.get("/group/caps").status_code == 200
    rows = client.get("/run/ev2/trial/sdk-0").text  # its rows link the group and each question
    links = re.findall(r'href="(/(?:group|question)/[^"]+)"', rows)
    assert links == ["/group/caps", "/question/caps/t0", "/question/caps/t1", "/question/caps/t2"]
    assert all(client.get(u).status_code == 200 for u in links)
    assert '<td class="prediction-cell">a</td>' in rows


def test_a_question_page_names_its_group_as_the_group_page_does(client: TestClient) -> None:
    """`/group/KEY` takes the start of a key or a benchmark name: so does `/question/KEY/ID`."""
    whole = client.get("/question/group-1/q1").text
    for ref in ("group-", "toy"):
        page = client.get(f"/question/{ref}/q1")
        assert page.status_code == 200, ref
        assert page.text.count('class="column trial"') == whole.count('class="column trial"')


def test_a_judge_trials_rows_show_what_was_asked_and_judged(tmp_path: Path) -> None:
    """A judge row holds its test case, not a question: the rows page reads it from there."""
    import dataclasses

    import pyarrow as pa

    case = {"input": "Capital of France?", "actual_output": "Paris.", "turns": None}
    chat = {"turns": [{"role": "user", "content": "hi"}, {"role": "user", "content": "bye?"}]}
    trial = make_trial("j-0", [1.0, 0.0], system="faithfulness")
    rows = trial.rows.append_column("case", pa.array([json.dumps(case), json.dumps(chat)]))
    write_run(tmp_path, "j1", {}, [dataclasses.replace(trial, track="judge", rows=rows)])
    page = TestClient(create_app(tmp_path)).get("/run/j1/trial/j-0").text
    assert "Capital of France?" in page and 'class="prediction-cell">Paris.<' in page
    assert "bye?" in page
