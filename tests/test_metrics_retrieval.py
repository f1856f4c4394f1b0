"""Parity of lasagna.metrics.retrieval with trec_eval: its own test files, ir_measures' cases,
and random runs full of ties against pytrec_eval. Both implementations (pytrec_eval-backed and
pure numpy) are held to the same numbers."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from reference_data import SHARED_DATA, missing

from lasagna.errors import UserError
from lasagna.metrics import METRIC_DEFINITIONS_VERSION
from lasagna.metrics.retrieval import (
    DEFAULT_KS,
    METRIC_NAMES,
    check_ks,
    mean_metrics,
    metric_names,
    passage_scores,
    score_queries,
)
from lasagna.metrics.retrieval_numpy import score_queries_numpy

TREC = SHARED_DATA / "trec_eval_tests"
IRM = SHARED_DATA / "ir_measures_tests"

IMPLEMENTATIONS = {
    "pytrec_eval": score_queries,
    "numpy": lambda qrels, run, ks: score_queries_numpy(qrels, run, check_ks(ks)),
}


def needs(folder: Path) -> None:
    if not folder.is_dir():
        pytest.skip(reason=missing(folder))


# ---------------------------------------------------------------- trec formats
def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """trec qrels: `qid iter docno rel`; a line whose first field starts with '#' is a comment."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        qid, _, doc, rel = fields[:4]
        qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """trec run: `qid Q0 docno rank sim runid [ignored...]`; the rank column is ignored."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        qid, _, doc, _, sim = fields[:5]
        run.setdefault(qid, {})[doc] = float(sim)
    return run


def read_expected(path: Path) -> dict[str, dict[str, str]]:
    """trec_eval output: `measure qid value` -> {qid or 'all': {measure: printed value}}."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split()
        out.setdefault(qid, {})[measure] = value
    return out


def our_name(measure: str, full: int) -> str | None:
    """lasagna's metric for a trec_eval measure name; recip_rank is mrr at `full` docs."""
    if measure == "recip_rank":
        return f"mrr@{full}"
    for prefix, name in (
        ("P_", "p"),
        ("recall_", "recall"),
        ("ndcg_cut_", "ndcg"),
        ("map_cut_", "map"),
        ("success_", "success"),
    ):
        rest = measure.removeprefix(prefix)
        if rest != measure and rest.isdigit():
            return f"{name}@{rest}"
    return None


TREC_CASES = [  # expected file, qrels, run, -c (judged queries without a ranking count), -M
    ("out.test", "qrels.test", "results.test", False, None),
    ("out.test", "qrels.test.with-comments", "results.test", False, None),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", False, None),
    ("out.test.a", "qrels.test", "results.test", False, None),
    ("out.test.aq", "qrels.test", "results.test", False, None),
    ("out.test.aqc", "qrels.test", "results.trunc", True, None),
    ("out.test.aqcM", "qrels.test", "results.trunc", True, 100),
]


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    ("expected_file", "qrels_file", "run_file", "all_judged", "max_docs"), TREC_CASES
)
def test_trec_eval_expected_output(impl, expected_file, qrels_file, run_file, all_judged, max_docs):
    needs(TREC)
    qrels, run = read_qrels(TREC / qrels_file), read_run(TREC / run_file)
    expected = read_expected(TREC / expected_file)
    # -M100 keeps each query's top 100: then recip_rank is mrr@100 and cuts above 100 are not
    # comparable; otherwise the whole run counts, so mrr at the longest ranking.
    full = max_docs or max(len(r) for r in run.values())
    measures = {m for row in expected.values() for m in row if our_name(m, full)}
    ks = {int(our_name(m, full).split("@")[1]) for m in measures}
    if max_docs:
        ks = {k for k in ks if k <= max_docs}
        measures = {m for m in measures if int(our_name(m, full).split("@")[1]) <= max_docs}
    per_query = IMPLEMENTATIONS[impl](qrels, run, sorted(ks))
    if not all_judged:  # without -c trec_eval averages over the queries the run has
        per_query = {q: v for q, v in per_query.items() if q in run}
    ours = {**per_query, "all": mean_metrics(per_query)}

    checked = 0
    for qid, row in expected.items():
        for measure in sorted(measures & set(row)):
            got = ours[qid][our_name(measure, full)]
            assert f"{got:.4f}" == row[measure], (expected_file, qid, measure, got)
            checked += 1
    assert checked >= 10, f"only {checked} values compared for {expected_file}"
    if "num_q" in expected.get("all", {}):
        assert len(per_query) == int(expected["all"]["num_q"])


# ---------------------------------------------------------------- ir_measures cases
def parse_lines(text: str, run: bool) -> dict:
    out: dict = {}
    for line in text.splitlines():
        f = line.split()
        if run:
            out.setdefault(f[0], {})[f[2]] = float(f[4])
        else:
            out.setdefault(f[0], {})[f[2]] = int(f[3])
    return out


# ir_measures names whose meaning is one of ours; nDCG and AP without a cut-off equal ours at a
# cut-off beyond every ranking and judgment list in these cases.
IRM_MEASURES = {"Success@2": "success@2", "nDCG@3": "ndcg@3", "P@4": "p@4"}
IRM_MEASURES |= {"nDCG": "ndcg@1000", "AP": "map@1000"}


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_ir_measures_cases(impl):
    needs(IRM)
    cases = json.loads((IRM / "ir_measures_pytrec_eval_expected.json").read_text())["cases"]
    used = [c for c in cases if c["measure"] in IRM_MEASURES]
    assert len(used) == 5
    for case in used:
        name = IRM_MEASURES[case["measure"]]
        k = int(name.split("@")[1])
        qrels, run = parse_lines(case["qrels"], False), parse_lines(case["run"], True)
        ours = IMPLEMENTATIONS[impl](qrels, run, [k])
        for expect in case["per_query"]:
            places = int(expect.get("places", 9))
            got = ours[expect["query_id"]][name]
            assert round(got - expect["value"], places) == 0, (case["measure"], expect, got)
        if case["aggregate"] is not None:
            places = int(case.get("aggregate_places", 9))
            agg = mean_metrics(ours)[name]
            assert round(agg - case["aggregate"], places) == 0, (case["measure"], agg)


# ---------------------------------------------------------------- against pytrec_eval
def pytrec_reference(qrels, run, ks) -> dict[str, dict[str, float]]:
    """pytrec_eval's numbers under our names; mrr@k is recip_rank where success@k is 1."""
    import pytrec_eval

    cut = ",".join(map(str, ks))
    measures = {f"ndcg_cut.{cut}", f"recall.{cut}", f"P.{cut}", f"map_cut.{cut}"}
    measures |= {f"success.{cut}", "recip_rank"}
    judged = {q: j for q, j in qrels.items() if j}
    py_run = {q: {d: float(s) for d, s in r.items()} for q, r in run.items()}
    ref = pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(py_run)
    out = {}
    for q, r in ref.items():
        row = {}
        for k in ks:
            row[f"ndcg@{k}"] = r[f"ndcg_cut_{k}"]
            row[f"recall@{k}"] = r[f"recall_{k}"]
            row[f"p@{k}"] = r[f"P_{k}"]
            row[f"map@{k}"] = r[f"map_cut_{k}"]
            row[f"success@{k}"] = r[f"success_{k}"]
            row[f"mrr@{k}"] = r["recip_rank"] if r[f"success_{k}"] else 0.0
        out[q] = row
    return out


def random_case(seed: int):
    """Graded qrels (-1..3), scores from 4 values (ties everywhere), every awkward shape."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(150):
        qid = f"q{q:03d}"
        pool = [f"d{rng.randrange(60)}" for _ in range(rng.randrange(1, 30))]
        qrels[qid] = {d: rng.choice([-1, 0, 0, 0, 1, 2, 3]) for d in pool}
        if q % 10 == 0:
            qrels[qid] = dict.fromkeys(qrels[qid], 0)  # judged, nothing relevant
        shape = rng.random()
        if shape < 0.05:
            continue  # judged, absent from the run
        n = 0 if shape < 0.1 else rng.choice([1, 2, 4, 7, 12, 40, 150])  # often shorter than k
        docs = {f"d{rng.randrange(90)}" for _ in range(n)}  # many never judged
        dtype = np.float32 if q % 3 == 0 else float
        run[qid] = {d: dtype(rng.choice([0.25, 0.5, 1.0, 2.0])) for d in docs}
    for q in range(10):  # ranked but never judged: ignored
        run[f"x{q}"] = {"d1": 1.0}
    qrels["empty"] = {}  # no judgments: skipped
    return qrels, run


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_runs_match_pytrec_eval(impl, seed):
    qrels, run = random_case(seed)
    ks = (1, 2, 3, 5, 10, 20, 100)
    ours = IMPLEMENTATIONS[impl](qrels, run, ks)
    ref = pytrec_reference(qrels, run, ks)
    judged = {q for q, j in qrels.items() if j}
    assert set(ours) == judged
    for qid in judged:
        expected = ref.get(qid) or dict.fromkeys(metric_names(ks), 0.0)  # absent/empty -> 0
        for name, value in expected.items():
            assert ours[qid][name] == pytest.approx(value, abs=1e-9), (qid, name)
    assert sum(1 for q in judged if q not in run or not run[q]) > 0  # the -c rule was exercised


@pytest.mark.parametrize("name", ["compat", "cwl"])
def test_ir_measures_files_match_pytrec_eval(name):
    needs(IRM)
    qrels, run = read_qrels(IRM / f"{name}.qrels"), read_run(IRM / f"{name}.run")
    ks = (1, 3, 5, 10, 20, 100, 1000)
    ours = score_queries(qrels, run, ks)
    ref = pytrec_reference(qrels, run, ks)
    assert set(ref) <= set(ours) and ref
    for qid, row in ref.items():
        for metric, value in row.items():
            assert ours[qid][metric] == pytest.approx(value, abs=1e-9), (qid, metric)


# ---------------------------------------------------------------- rules, by hand
@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_ties_break_by_document_id_descending(impl):
    qrels = {"q": {"a": 1, "c": 2}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "z": 0.5}}  # trec_eval order: c, b, a, z
    row = IMPLEMENTATIONS[impl](qrels, run, (1, 2, 3))["q"]
    assert row["p@1"] == 1.0 and row["mrr@1"] == 1.0
    assert row["p@2"] == 0.5 and row["recall@2"] == 0.5
    assert row["map@3"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    idcg = 2 + 1 / np.log2(3)
    assert row["ndcg@3"] == pytest.approx((2 + 1 / np.log2(4)) / idcg)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_missing_and_unjudged_queries(impl):
    qrels = {"judged": {"a": 1}, "no_ranking": {"a": 1}, "absent": {"b": 2}, "nothing": {}}
    run = {"judged": {"a": 0.1}, "no_ranking": {}, "unjudged": {"a": 1.0}}
    out = IMPLEMENTATIONS[impl](qrels, run, DEFAULT_KS)
    assert set(out) == {"judged", "no_ranking", "absent"}
    assert all(v == 0.0 for q in ("no_ranking", "absent") for v in out[q].values())
    assert out["judged"]["ndcg@1"] == 1.0 and out["judged"]["mrr@100"] == 1.0
    assert mean_metrics(out)["success@1"] == pytest.approx(1 / 3)


def test_mrr_at_k_is_zero_when_first_relevant_is_deeper():
    qrels = {"q": {"d3": 1}}
    run = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    row = score_queries(qrels, run, (2, 3))["q"]
    assert row["mrr@2"] == 0.0 and row["mrr@3"] == pytest.approx(1 / 3)


def test_names_and_cutoffs():
    assert "ndcg@10" in METRIC_NAMES and "success@100" in METRIC_NAMES
    assert len(METRIC_NAMES) == 6 * len(DEFAULT_KS)
    assert check_ks([10, 1, 10]) == (1, 10)
    assert set(score_queries({"q": {"a": 1}}, {"q": {"a": 1.0}})["q"]) == set(METRIC_NAMES)
    for bad in ([], [0], [2.5], [True]):
        with pytest.raises(UserError, match="ks"):
            check_ks(bad)
    assert mean_metrics({}) == {}
    assert METRIC_DEFINITIONS_VERSION == "1"


@pytest.mark.parametrize("seed", range(5))
def test_passage_scores_are_trec_eval_recall_and_success_at_the_passages_read(seed):
    """What a RAG generator read: on rankings without ties, trec_eval's recall@k and
    success@k at k = the passages read (graded and negative judgments included)."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    for q in range(50):
        judged = {d: rng.choice([-1, 0, 1, 2]) for d in rng.sample(docs, rng.randint(1, 6))}
        ranked = rng.sample(docs, 10)
        k = rng.choice([1, 3, 5])
        run = {str(q): {d: float(10 - i) for i, d in enumerate(ranked)}}  # no ties
        expected = score_queries({str(q): judged}, run, (k,))[str(q)]
        recall, hit = passage_scores(ranked[:k], judged)
        assert recall == pytest.approx(expected[f"recall@{k}"], abs=1e-12)
        assert hit == expected[f"success@{k}"]
    assert passage_scores(["d1"], {}) is None  # no judgments: no score
    assert passage_scores(["d1"], {"d1": 0}) == (0.0, 0.0)  # nothing relevant to find
