"""One question across every run of its group, for `lasagna view`: the question, its
references and relevant passages, and per run and system the retrieved passages (with
relevance marks), the answer, the judge's verdicts and the per-question metrics, side by
side. Built from the report's drill-down code (the same records), reading only the row
groups of each trial that can hold the id."""

from __future__ import annotations

from typing import Any

from lasagna.errors import UserError
from lasagna.results.report.collect import GroupView, metric_info, select_groups
from lasagna.results.report.evaluations import evaluation_group, group_evaluations
from lasagna.results.report.questions import (
    References,
    _case_question,
    _question,
    _trial_rows,
)
from lasagna.results.runs import Run


def question_data(runs: list[Run], key: str, qid: str) -> dict[str, Any] | None:
    """The page of question `qid` of group `key` (a comparability key, an evaluation group
    name, or what names one group as `/group/KEY` does: the start of a key, a benchmark
    name); None when there is no such group or no run of it has the question."""
    views = select_groups(runs) if runs else []
    exact = [v for v in views if v.key == key]
    if exact:
        return _benchmark_question(exact[0], qid)
    evals = group_evaluations(runs).get(key)
    if evals:
        return _evaluation_question(key, evals, qid)
    try:
        named = select_groups(runs, key) if runs else []
    except UserError:
        named = []
    return _benchmark_question(named[0], qid) if len(named) == 1 else None


def _benchmark_question(view: GroupView, qid: str) -> dict[str, Any] | None:
    refs = References()
    bench = None if view.track == "judge" else refs.benchmark(view.benchmark)
    question: dict[str, Any] | None = None
    columns: list[dict[str, Any]] = []
    for run in view.runs:
        for t in view.trials[run.run_id]:
            table = run.rows_with_ids(t.key, [qid])
            if not table.num_rows:
                continue
            data = _trial_rows(table, t, bench, refs, 1)
            if question is None:
                text = None
                if "question" in table.column_names:
                    text = table["question"][0].as_py()
                elif "case" in table.column_names:
                    text = _case_question(table["case"][0].as_py())
                question = _question(bench, qid, text, refs)
            columns.append(_column(run, t.system, t.repeat, data["metrics"], data["rows"][qid]))
    if question is None:
        return None
    return {
        "kind": "benchmark",
        "key": view.key,
        "title": view.title,
        "qid": qid,
        "question": question,
        "columns": columns,
        "docs": refs.docs,
        "metrics": metric_info(view.metrics),
        "notes": refs.notes,
    }


def _evaluation_question(name: str, runs: list[Run], qid: str) -> dict[str, Any] | None:
    drill = evaluation_group(0, name, runs)["drill"]
    if qid not in drill["questions"]:
        return None
    columns = []
    by_id = {r.run_id: r for r in runs}
    for run in drill["runs"]:
        for t in run["trials"]:
            if qid in t["rows"]:
                rec = t["rows"][qid]
                columns.append(
                    _column(by_id[run["run"]], t["system"], t["repeat"], t["metrics"], rec)
                )
    return {
        "kind": "evaluation",
        "key": name,
        "title": f"evaluation group {name}",
        "qid": qid,
        "question": drill["questions"][qid],
        "columns": columns,
        "docs": {},
        "metrics": {},
        "notes": [],
    }


def _column(run: Run, system: str, repeat: Any, metrics: list[str], rec: dict) -> dict:
    return {
        "run": run.run_id,
        "time": str(run.manifest.get("created_at", "")),
        "system": system,
        "repeat": repeat,
        "metrics": list(zip(metrics, rec.get("m", []), strict=False)),
        "record": rec,
    }
