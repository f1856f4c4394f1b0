"""Plugins: a package's tracks, judges and metrics found through its entry points (the
example package under tests/plugins, put on the path with its dist-info), every list that
depends on the kinds derived from the registries, and broken plugins costing one line.

Each command runs in a fresh interpreter, as a user's would: the registries load once per
process, so the plugin must be on the path before the first one is read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lasagna.common import plugins

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "plugins"
BROKEN = ROOT / "tests" / "plugins_broken"
SAMPLE = ROOT / "lasagna" / "sample" / "sample.jsonl"


def lasagna(*argv: str, paths: tuple[Path, ...] = (EXAMPLE,), cwd: Path = ROOT, code: str = ""):
    """`lasagna ARGV` (or python -c CODE) in a fresh interpreter with `paths` on its path."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *map(str, paths)])
    env["LASAGNA_CONFIGS"] = str(EXAMPLE / "configs")
    env["COLUMNS"] = "200"
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "lasagna.cli", *argv]
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_lasagna_plugins_lists_each_entry_point_with_its_package_and_what_it_added():
    proc = lasagna("plugins")
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())  # a table cell may wrap
    assert "lasagna-example-plugin 0.1.0" in out
    for what in ("track extractive", "judge answer-length", "metric judged@10"):
        assert what in out
    assert "built in: tracks retrieval, generation, judge" in out


def test_a_broken_plugin_is_one_line_naming_its_package_and_the_problem():
    listed = lasagna("plugins", paths=(EXAMPLE, BROKEN))
    assert listed.returncode == 1  # `lasagna plugins` says a plugin did not load
    shown = " ".join(listed.stdout.split())
    assert "PRIMARY must be one of its OUTPUT_METRICS" in shown
    assert "No module named 'lasagna_broken_plugin.missing'" in shown
    # an unrelated command runs, the broken plugins cost one line each and no traceback
    plan = lasagna(
        "benchmark", "plan", str(SAMPLE), "--profile", "extractive", paths=(EXAMPLE, BROKEN)
    )
    assert plan.returncode == 0, plan.stderr
    warnings = [line for line in plan.stderr.splitlines() if line.startswith("warning: plugin")]
    assert len(warnings) == 2 and "Traceback" not in plan.stderr
    assert all("package lasagna-broken-plugin 0.1.0" in w for w in warnings)
    assert "overlap-40" in plan.stdout  # the working plugin's track still plans
    # what the broken module registered before it failed is taken back whole
    check = "from lasagna.metrics import catalog; print(catalog.get('broken_score'))"
    assert lasagna(paths=(BROKEN,), code=check).stdout.strip() == "None"


def test_help_and_results_list_load_no_plugin():
    code = (
        "import sys, lasagna.cli as c\n"
        "for argv in (['--help'], ['results', 'list', '--output', 'nowhere']):\n"
        "    try: c.main(argv)\n"
        "    except SystemExit: pass\n"
        "print('lasagna_example_plugin' in sys.modules, 'importlib.metadata' in sys.modules)"
    )
    assert lasagna(code=code).stdout.split()[-2:] == ["False", "False"]


def test_sweep_fields_resources_and_capabilities_come_from_the_registries(tmp_path):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - {{path: {SAMPLE}}}\n"
        "extractor:\n  - {kind: overlap}\n"  # typo of the plugin's systems field
        "resources:\n  extrac: {num_cpus: 0.5}\n"  # typo of the plugin's stage key
    )
    refused = lasagna("benchmark", "plan", str(sweep))
    assert refused.returncode == 2
    assert "did you mean 'extractors'" in refused.stderr
    assert "did you mean 'extract'" in refused.stderr
    report = lasagna("benchmark", "validate-data", str(SAMPLE))
    assert "retrieval, generation, extractive" in report.stdout
    code = (
        "from lasagna.results.schema import columns; from lasagna.metrics import catalog\n"
        "last = len(catalog.track_entries()) - 1  # the plugin's track: after the built-ins\n"
        "print(columns()['extract_answer'].stage, catalog.track_rank('extractive') == last,"
        " catalog.exports_of('extractive'), catalog.exports_of('retrieval'))"
    )
    assert lasagna(code=code).stdout.split() == ["extract", "True", "()", "('trec',)"]


def test_a_plugin_stage_asking_more_than_the_machine_has_is_refused_before_ray(tmp_path):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - {{path: {SAMPLE}}}\nextractors:\n  - {{kind: overlap}}\n"
        "resources:\n  extract: {num_cpus: 4096}\n"
    )
    refused = lasagna("benchmark", "plan", str(sweep))
    assert refused.returncode == 2, refused.stderr
    said = " ".join(refused.stderr.split())
    assert "extract actors (resources.extract): 1 x 4096 CPU" in said
    assert "Ray would wait forever" in said and "resources: {extract: {num_cpus:" in said


def test_a_failing_registry_module_is_undone_whole(tmp_path, monkeypatch):
    from lasagna.metrics import catalog

    (tmp_path / "half_plugin.py").write_text(
        "from lasagna.metrics import catalog\n"
        "catalog.register('half_metric', 'retrieval', 'registered, then the module fails')\n"
        "raise RuntimeError('the plugin is half done')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registered, problem = plugins._import("half_plugin")
    assert (registered, problem) == ([], "RuntimeError: the plugin is half done")
    assert catalog.get("half_metric") is None


def test_a_track_that_clashes_or_cannot_run_is_refused_by_name():
    from lasagna.tracks import QUESTIONS, Track, register
    from lasagna.tracks.base import DATAPOINTS
    from lasagna.tracks.checks import check_track
    from lasagna.tracks.retrieval import RetrievalTrack

    class Rerank(RetrievalTrack):
        name = "rerank"

    with pytest.raises(plugins.PluginError, match="systems_field 'retrievers' is the retrieval"):
        register(Rerank())

    class Half(Track):
        name, systems_field = "half", "halves"

    with pytest.raises(plugins.PluginError, match="define input_columns, stages, aggregate"):
        register(Half())

    class Typed(RetrievalTrack):
        name, systems_field = "typed", "typeds"
        columns = (("doc_ids", "string", "search", "not a list"),)

    with pytest.raises(plugins.PluginError, match="row column 'doc_ids' is list"):
        register(Typed())

    class Points(Half):  # an evaluate() call's track: no sweep key, so no system_type
        name, systems_field, reads = "points", "points", DATAPOINTS
        input_columns = stages = aggregate = RetrievalTrack.aggregate

    check_track(Points(), [])
    with pytest.raises(plugins.PluginError, match="define system_type"):
        check_track(type("Swept", (Points,), {"reads": QUESTIONS})(), [])


def test_a_judge_benchmark_with_a_bad_primary_or_column_is_refused():
    from types import SimpleNamespace

    from lasagna.judges.registry import register_benchmark

    judge = SimpleNamespace(
        ID="x",
        NAME="X",
        REQUIRED=("answer",),
        OPTIONAL=(),
        OUTPUT_METRICS=("x_score",),
        PRIMARY="x_score",
        HIGHER_IS_BETTER=True,
        PROMPTS=(),
        judge=lambda case, params: iter(()),
    )
    with pytest.raises(plugins.PluginError, match="unknown test-case column"):
        register_benchmark(judge)
    with pytest.raises(plugins.PluginError, match="PRIMARY"):
        register_benchmark(SimpleNamespace(**{**vars(judge), "REQUIRED": (), "PRIMARY": "y"}))


def test_the_code_judge_scores_without_a_model():
    sys.path.insert(0, str(EXAMPLE))
    try:
        from lasagna_example_plugin import answer_length
    finally:
        sys.path.remove(str(EXAMPLE))
    from lasagna.judges.base import run_cases
    from lasagna.judges.params import JudgeParams

    cases = [{"actual_output": "Paris."}, {"actual_output": "The capital is Paris, in France."}]
    results = run_cases(answer_length, cases, None, JudgeParams())
    assert [r.metrics["answer_length_score"] for r in results] == [pytest.approx(1 / 3), 1.0]
    assert [r.metrics["passed"] for r in results] == [False, True] and results[0].calls == 0


def test_an_unknown_judge_names_the_plugins_ones(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"input": "q", "actual_output": "a"}) + "\n")
    proc = lasagna("benchmark", "plan", str(cases), "--judge", "answer-lenght")
    assert proc.returncode == 2 and "did you mean 'answer-length'" in proc.stderr
