"""The per-question drill-down: every trial's rows, with references and relevance marks.

Rows hold ids, ranked doc ids, predictions, errors and per-question metrics, but not the
judgments or passage texts; those come from the data file the trial ran on (its recorded
source), used only when its content hash still equals the recorded revision. Limits keep
a large run usable: `MAX_RECORDS` trial-question records per page (newest runs first; what
is left out is said on the page) and the top `SHOW_DOCS` documents of each ranked list.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from lasagna.results.model import TrialMeta, per_question_metrics
from lasagna.results.report.collect import GroupView, num
from lasagna.results.store import Run

MAX_RECORDS = 20_000  # trial x question records in one page
SHOW_DOCS = 10  # ranked documents shown per trial and question
SNIPPET = 300  # characters of a passage's text
MAX_JSON = 2_000  # characters of each string inside JSON text columns (verdicts, cases)
METRIC_DIGITS = 6  # significant digits of a per-question metric (the page shows 4 decimals)
SCORE_DIGITS = 5  # significant digits of a retrieval score (the page shows 3 decimals)
# Columns shown in their own place (or not at all); any other scalar column is shown as a
# field of the row (judge verdicts and reasons, abstained, latency, ...).
KNOWN = {
    "id",
    "question",
    "doc_ids",
    "scores",
    "prediction",
    "error",
    "answers",
    "passages",
    "unanswerable",
    "batch_rows",
    "batch_started_at",
    "engine_load_s",
    "metadata",  # the question's, shown with the question (once, not per trial)
}


class References:
    """Gold answers, judgments and passage texts of the benchmarks the trials ran on."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[str, str | None, str | None], Any] = {}
        self.docs: dict[str, dict[str, str]] = {}
        self.notes: list[str] = []
        self._index: dict[int, dict[str, Any]] = {}

    def benchmark(self, meta: dict[str, Any]) -> Any:
        source, split, corpus = meta.get("source"), meta.get("split"), meta.get("corpus")
        if not source:
            return None
        key = (str(source), split, corpus)
        if key not in self._loaded:
            self._loaded[key] = self._load(str(source), split, meta.get("revision"), corpus)
        return self._loaded[key]

    def _load(
        self, source: str, split: str | None, revision: str | None, corpus: str | None = None
    ) -> Any:
        from lasagna.results.data_file import open_data_file

        meta = {"source": source, "split": split, "revision": revision, "corpus": corpus}
        bench, why = open_data_file(meta)
        if bench is None:
            self.notes.append(f"{why}; questions show no references or relevance marks")
        return bench

    def row(self, bench: Any, qid: str) -> Any:
        index = self._index.get(id(bench))
        if index is None:
            index = self._index[id(bench)] = {r.id: r for r in bench.rows}
        return index.get(qid)

    def doc(self, bench: Any, doc_id: str) -> None:
        if bench is None or doc_id in self.docs:
            return
        d = bench.corpus.get(doc_id)
        if d is not None:
            self.docs[doc_id] = {"title": d.title, "text": d.text[:SNIPPET]}


def _question(
    bench: Any, qid: str, text: str | None, refs: References, stored: str | None = None
) -> dict[str, Any]:
    """The question's record: its text, references and judgments from the data file, and
    its metadata (the file's, else `stored`: the rows' `metadata` column, JSON text)."""
    out: dict[str, Any] = {"question": text or ""}
    meta = _json_value(stored) if stored else None
    if isinstance(meta, dict) and meta:
        out["metadata"] = _spelled(meta)
    if bench is None:
        return out
    row = refs.row(bench, qid)
    if row is not None:
        out["question"] = row.question or text or ""
        out["answers"] = list(row.answers)
        out["unanswerable"] = bool(row.unanswerable)
        if row.metadata:
            out["metadata"] = _spelled(row.metadata)
    gold = bench.qrels.get(qid, {})
    out["gold"] = [[d, int(g)] for d, g in sorted(gold.items(), key=lambda x: -x[1])]
    for d in gold:
        refs.doc(bench, d)
    return out


def _spelled(metadata: dict[str, Any]) -> dict[str, str]:
    """Metadata values as the page prints them: strings as they are, the rest as JSON."""
    return {
        k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        for k, v in metadata.items()
    }


def _trial_rows(
    table: pa.Table, meta: TrialMeta, bench: Any, refs: References, limit: int
) -> dict[str, Any]:
    """The drill-down records of the first `limit` rows of `table` (by question id)."""
    metrics = per_question_metrics(meta, table.schema)
    extra = [
        n
        for n in table.column_names
        if n not in KNOWN
        and n not in metrics
        and n not in meta.metrics
        and not pa.types.is_nested(table.schema.field(n).type)
    ]
    table = table.slice(0, limit)
    cols = {
        n: _shown(table[n]).to_pylist()
        for n in table.column_names
        if n in KNOWN | set(metrics) | set(extra)
    }
    rows: dict[str, Any] = {}
    for i in range(table.num_rows):
        qid = str(cols["id"][i])
        rec: dict[str, Any] = {"m": [compact(cols[m][i], METRIC_DIGITS) for m in metrics]}
        if "doc_ids" in cols and cols["doc_ids"][i] is not None:
            ids = cols["doc_ids"][i][:SHOW_DOCS]
            scores = list((cols["scores"][i] or []) if "scores" in cols else [])
            scores += [None] * (len(ids) - len(scores))
            rec["docs"] = [[d, compact(s, SCORE_DIGITS)] for d, s in zip(ids, scores, strict=False)]
            for d in ids:
                refs.doc(bench, d)
        if "prediction" in cols:
            rec["prediction"] = cols["prediction"][i]
        if cols.get("error") and cols["error"][i]:
            rec["error"] = cols["error"][i]
        fields = {n: cols[n][i] for n in extra if cols[n][i] is not None}
        parsed = {n: j for n, v in fields.items() if (j := _json_value(v)) is not None}
        if parsed:  # JSON text columns (judge verdicts, test cases): shown as structures
            rec["json"] = parsed
            fields = {n: v for n, v in fields.items() if n not in parsed}
        if fields:
            rec["fields"] = {
                k: v if isinstance(v, int | float | str) else str(v) for k, v in fields.items()
            }
        rows[qid] = rec
    return {"metrics": metrics, "rows": rows}


def _shown(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column as the drill-down shows it: ranked lists cut to their top `SHOW_DOCS` in
    Arrow, before any of it becomes Python objects."""
    import pyarrow.compute as pc

    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        return pc.list_slice(column, 0, SHOW_DOCS)
    return column


def compact(value: Any, digits: int) -> float | int | None:
    """`num(value)` to `digits` significant digits, whole numbers as ints: the drill-down's
    per-question numbers are most of a large page's bytes ('0' for '0.0', '0.333333' for
    '0.3333333333333333')."""
    x = num(value)
    if x is None:
        return None
    if x.is_integer() and abs(x) < 1e15:
        return int(x)
    return float(f"{x:.{digits}g}")


def _json_value(value: Any) -> Any:
    """A JSON object or list held as text, its long strings cut to `MAX_JSON` characters;
    None for anything else."""
    if not isinstance(value, str) or value[:1] not in ("{", "["):
        return None
    try:
        return _cut(json.loads(value))
    except ValueError:
        return None


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_JSON else value[:MAX_JSON] + " …"
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    return value


def _case_question(text: Any) -> str | None:
    """The question of a judge test case (its input), from the case's JSON text."""
    case = _json_value(text)
    if not isinstance(case, dict):
        return None
    for name in ("input", "question", "query", "scenario"):
        if isinstance(case.get(name), str):
            return case[name][: SNIPPET * 4]
    return None


def drilldown_data(
    view: GroupView, budget: int = MAX_RECORDS, refs: References | None = None
) -> dict[str, Any]:
    """Per run of the group (newest first, within `budget` records): each trial's rows."""
    refs = refs or References()
    # judge test cases carry their own question and references (the `case` column)
    bench = None if view.track == "judge" else refs.benchmark(view.benchmark)
    questions: dict[str, Any] = {}
    runs_out: list[dict[str, Any]] = []
    notes: list[str] = []
    left = budget
    for run in view.runs:
        if left <= 0:
            notes.append(f"run {run.run_id} and older ones are not in the drill-down (page limit)")
            break
        runs_out.append(_run_rows(view, run, bench, refs, questions, notes, left))
        left -= sum(len(t["rows"]) for t in runs_out[-1]["trials"])
    return {"questions": questions, "runs": runs_out, "notes": notes}


def _run_rows(
    view: GroupView,
    run: Run,
    bench: Any,
    refs: References,
    questions: dict[str, Any],
    notes: list[str],
    left: int,
) -> dict[str, Any]:
    trials = []
    for t in view.trials[run.run_id]:
        table, total = run.rows_page(t.key, 0, max(0, left))  # only the row groups shown
        data = _trial_rows(table, t, bench, refs, max(0, left))
        left -= len(data["rows"])
        if len(data["rows"]) < total:
            notes.append(
                f"run {run.run_id}, {view.labels[t.system_id]} repeat {t.repeat}: the first "
                f"{len(data['rows'])} of {total} questions are shown (page limit)"
            )
        texts: dict[str, Any] = {}
        stored: dict[str, Any] = {}
        if "metadata" in table.column_names:
            ids = [str(x) for x in table["id"].to_pylist()]
            stored = dict(zip(ids, table["metadata"].to_pylist(), strict=True))
        if "question" in table.column_names:
            ids = [str(x) for x in table["id"].to_pylist()]
            texts = dict(zip(ids, table["question"].to_pylist(), strict=True))
        elif "case" in table.column_names:
            ids = [str(x) for x in table["id"].to_pylist()]
            texts = dict(zip(ids, map(_case_question, table["case"].to_pylist()), strict=True))
        for qid in data["rows"]:
            if qid not in questions:
                questions[qid] = _question(bench, qid, texts.get(qid), refs, stored.get(qid))
        trials.append(
            {"key": t.key, "system": view.labels[t.system_id], "repeat": t.repeat, **data}
        )
    return {"run": run.run_id, "time": str(run.manifest.get("created_at", "")), "trials": trials}
