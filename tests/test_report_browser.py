"""`lasagna report` in a real headless Chromium (Debian's chromium + chromium-driver, driven
by selenium): runs made by real `lasagna benchmark run` commands on the packaged sample, the
page opened from file://, and its rendered DOM checked. Charts and drill-downs are drawn when
scrolled to, so the checks scroll to them as a reader would. A screenshot is written for
people (set LASAGNA_REPORT_SCREENSHOT to choose where)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from browsers import chromium
from ray import cloudpickle

from lasagna import Datapoint, evaluate
from lasagna.cli import main

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = pytest.mark.slow

SYSTEMS = """\
  - {kind: bm25, name: bm25-default, top_k: 10}
  - {kind: bm25, name: bm25-nostem, stemmer: null, stopwords: null, top_k: 10}
"""
FIRST = "benchmarks:\n  - {name: sample}\nretrievers:\n" + SYSTEMS
SECOND = FIRST + "  - {kind: bm25, name: bm25-tuned, k1: 0.9, b: 0.4, top_k: 10}\n"
GENERATION = """\
benchmarks:
  - {name: sample, n_samples: 3}
generators:
  - kind: rag
    name: rag-smollm2
    retriever: {kind: bm25, top_k: 3}
    passages: 2
    model: {backend: transformers, max_tokens: 8}
"""


CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Peru": "Lima"}


def capital_v1(data: dict) -> str:
    return "Paris"  # the first version knows one capital


def capital_v2(data: dict) -> str:
    if data["country"] == "Peru":
        raise ValueError("no idea")  # a failed trial, kept and shown
    return f"The capital is {CAPITALS[data['country']]}."


def accuracy(output: str, target: str) -> int:
    return 1 if target.lower() in output.lower() else 0


def length(output: str, target: str) -> int:
    return len(output.split())  # a word count: another scale than accuracy's 0..1


@pytest.fixture(scope="module")
def results_root(ray_local, tmp_path_factory) -> Path:
    """Three real runs: two retrieval sweeps (progression, side by side) and a small RAG run."""
    base = tmp_path_factory.mktemp("report_runs")
    out = base / "out"
    for name, text in (("first", FIRST), ("second", SECOND), ("rag", GENERATION)):
        sweep = base / f"{name}.yaml"
        sweep.write_text(text)
        assert main(["benchmark", "run", str(sweep), "--output", str(out)]) == 0
    data = [Datapoint({"country": c}, target=t, task_id=c.lower()) for c, t in CAPITALS.items()]
    for version, executor in (("v1", capital_v1), ("v2", capital_v2)):
        time.sleep(1.1)  # start times have whole seconds: keep the two evaluations apart
        evaluate(
            data,
            executor,
            {"accuracy": accuracy, "length": length},
            group_name="capitals",
            name=f"capitals-{version}",
            output=out,
            quiet=True,
        )
    return out


@pytest.fixture(scope="module")
def browser():
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def page(results_root: Path, browser, tmp_path_factory):
    """The report of every run, opened from file:// (console messages collected)."""
    from selenium.webdriver.support.ui import WebDriverWait

    html = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", "--output", str(results_root), "--out", str(html)]) == 0
    browser.get(html.as_uri())
    WebDriverWait(browser, 60).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'")
    )
    return {"driver": browser, "html": html, "console": browser.get_log("browser")}


def _drawn(driver, chart):
    """`chart` (a div.chart) scrolled into view and drawn by plotly."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("arguments[0].scrollIntoView()", chart)
    WebDriverWait(driver, 30).until(lambda d: chart.get_attribute("data-drawn") == "1")
    return chart


def _drill(driver, sec):
    """The section's drill-down, scrolled into view and filled."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    drill = sec.find_element(By.CSS_SELECTOR, "div.drill")
    driver.execute_script("arguments[0].scrollIntoView()", drill)
    WebDriverWait(driver, 30).until(lambda d: drill.get_attribute("data-loaded") == "1")
    return drill


def _section(driver, title_part: str):
    from selenium.webdriver.common.by import By

    for sec in driver.find_elements(By.CSS_SELECTOR, "section.group"):
        if title_part in sec.find_element(By.TAG_NAME, "h2").text:
            return sec
    raise AssertionError(f"no group section titled with {title_part!r}")


def test_no_console_errors_and_small_offline_page(page) -> None:
    errors = [e for e in page["console"] if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors
    assert page["html"].stat().st_size < 10_000_000


def test_leaderboard_row_per_system_and_charts_drawn(page) -> None:
    from selenium.webdriver.common.by import By

    driver = page["driver"]
    sec = _section(driver, "retrieval")
    assert "pooled gold" in sec.find_element(By.TAG_NAME, "h2").text
    rows = sec.find_elements(By.CSS_SELECTOR, "table.leaderboard tr.system-row")
    assert sorted(r.get_attribute("data-system") for r in rows) == [
        "bm25-default",
        "bm25-nostem",
        "bm25-tuned",
    ]
    bars = _drawn(driver, sec.find_element(By.CSS_SELECTOR, "div[data-chart=leaderboard]"))
    assert len(bars.find_elements(By.CSS_SELECTOR, "g.trace.bars")) == 1
    assert len(bars.find_elements(By.CSS_SELECTOR, "g.trace.bars g.point")) == 3
    prog = _drawn(driver, sec.find_element(By.CSS_SELECTOR, "div[data-chart=progression]"))
    lines = prog.find_elements(By.CSS_SELECTOR, "g.trace.scatter")
    assert len(lines) == 3  # one series per system
    points = sorted(len(t.find_elements(By.CSS_SELECTOR, "path.point")) for t in lines)
    assert points == [1, 2, 2]  # bm25-tuned only ran in the second run
    # plotly's menu picks another metric: the same three lines, restyled with its values
    from selenium.webdriver.support.ui import WebDriverWait

    prog.find_element(By.CSS_SELECTOR, "g.updatemenu-header-group").click()
    buttons = prog.find_elements(By.CSS_SELECTOR, "g.updatemenu-dropdown-button")
    next(b for b in buttons if b.text == "recall@10").click()
    title = "return arguments[0].layout.yaxis.title.text"
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(title, prog) == "recall@10")
    lines = prog.find_elements(By.CSS_SELECTOR, "g.trace.scatter")
    assert sorted(len(t.find_elements(By.CSS_SELECTOR, "path.point")) for t in lines) == points


def test_within_run_matrix_and_ties_with_the_best(page) -> None:
    """The newest run's three systems compared pairwise (bold where significant after
    Holm), and the leaderboard's ≈ on the systems not significantly different from #1."""
    from selenium.webdriver.common.by import By

    driver = page["driver"]
    sec = _section(driver, "retrieval")
    matrix = sec.find_element(By.CSS_SELECTOR, "table.matrix")
    rows = matrix.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 3
    weight = "return getComputedStyle(arguments[0]).fontWeight"
    for row in rows:
        cells = row.find_elements(By.CSS_SELECTOR, "td")[1:]  # after the mean
        assert len(cells) == 3 and sum(c.text == "·" for c in cells) == 1
        for c in cells:
            if c.text == "·":
                continue
            p = float(c.find_element(By.CSS_SELECTOR, ".p").text.removeprefix("p "))
            bold = int(driver.execute_script(weight, c)) >= 700
            assert bold == ("significant" in c.get_attribute("class")) == (p < 0.05)
    assert "Holm-adjusted over 3 comparison(s)" in sec.text
    for row in sec.find_elements(By.CSS_SELECTOR, "table.leaderboard tr.system-row")[1:]:
        p = row.find_element(By.CSS_SELECTOR, "td.vs-best").text
        tie = "tie-best" in row.get_attribute("class")
        assert tie == (float(p) >= 0.05) and tie == ("≈" in row.text)


def test_one_run_is_a_point_and_sdk_dimensions_get_their_own_axis(page) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = page["driver"]
    rag = _section(driver, "generation")  # one run so far
    prog = _drawn(driver, rag.find_element(By.CSS_SELECTOR, "div[data-chart=progression]"))
    assert driver.execute_script("return arguments[0].layout.xaxis.type", prog) == "category"
    (point,) = prog.find_elements(By.CSS_SELECTOR, "g.trace.scatter path.point")
    sec = _section(driver, "evaluation group capitals")
    prog = _drawn(driver, sec.find_element(By.CSS_SELECTOR, "div[data-chart=progression]"))
    title = "return arguments[0].layout.yaxis.title.text"
    assert driver.execute_script(title, prog) == "accuracy"
    prog.find_element(By.CSS_SELECTOR, "g.updatemenu-header-group").click()
    buttons = prog.find_elements(By.CSS_SELECTOR, "g.updatemenu-dropdown-button")
    next(b for b in buttons if b.text == "length").click()
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(title, prog) == "length")
    ys = driver.execute_script("return arguments[0].data[0].y", prog)
    assert ys == [1, 4]  # v1 says "Paris"; v2 "The capital is Paris." on its own scale
    drill = _drill(driver, sec)
    drill.find_element(By.CSS_SELECTOR, "tr.q[data-qid='france']").click()
    details = sec.find_element(By.CSS_SELECTOR, ".details[data-qid='france']")
    assert details.find_element(By.CSS_SELECTOR, ".answers").text == "target Paris"
    assert details.find_element(By.CSS_SELECTOR, ".question-text").text.startswith("data ")


def test_side_by_side_has_paired_tests(page) -> None:
    from selenium.webdriver.common.by import By

    sec = _section(page["driver"], "retrieval")
    table = sec.find_element(By.CSS_SELECTOR, "table.compare")
    cells = table.find_elements(By.CSS_SELECTOR, "tbody tr")[0].find_elements(By.TAG_NAME, "td")
    assert cells[1].text == "ndcg@10"
    assert float(cells[6].text) == pytest.approx(1.0)  # same config, same data: no difference
    assert "bm25-tuned" in sec.text and "is only in run" in sec.text


def test_drilldown_shows_prediction_and_relevance(page, results_root: Path) -> None:
    from selenium.webdriver.common.by import By

    driver = page["driver"]
    rag = _section(driver, "generation")
    from lasagna.results.store import load_runs

    run = next(r for r in load_runs(results_root) if r.trials and r.trials[0].track == "generation")
    rows = run.rows(run.trials[0].key).to_pylist()
    row = rows[0]
    search = rag.find_element(By.CSS_SELECTOR, ".drill-search")
    search.send_keys(row["id"])
    rag.find_element(By.CSS_SELECTOR, f"tr.q[data-qid='{row['id']}']").click()
    details = rag.find_element(By.CSS_SELECTOR, f".details[data-qid='{row['id']}']")
    prediction = details.find_element(By.CSS_SELECTOR, ".prediction").text
    assert prediction == "prediction " + (row["prediction"] or "(empty)")
    assert details.find_element(By.CSS_SELECTOR, ".answers").text.startswith("references ")

    retrieval = _section(driver, "retrieval")
    _drill(driver, retrieval).find_element(By.CSS_SELECTOR, "tr.q[data-qid='s01']").click()
    box = retrieval.find_element(By.CSS_SELECTOR, ".details[data-qid='s01']")
    assert box.find_elements(By.CSS_SELECTOR, "ol.ranked li.rel")  # the gold passage, marked
    assert "Glassblowing" in box.text  # its text, from the data file


def test_filter_and_screenshot(page, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    driver = page["driver"]
    sec = _section(driver, "retrieval")
    search = sec.find_element(By.CSS_SELECTOR, ".drill-search")
    search.clear()
    search.send_keys("bridge")
    shown = sec.find_elements(By.CSS_SELECTOR, "table.questions tr.q")
    assert 0 < len(shown) < 26  # in the question, or the metadata (topic: bridges)
    assert sec.find_element(By.CSS_SELECTOR, ".drill-count").text == f"{len(shown)} question(s)"
    search.clear()
    search.send_keys("topic: coins")  # a metadata value: the questions of one slice
    shown = sec.find_elements(By.CSS_SELECTOR, "table.questions tr.q")
    assert len(shown) == 9, [r.text for r in shown]
    search.clear()
    target = Path(os.environ.get("LASAGNA_REPORT_SCREENSHOT") or tmp_path / "report.png")
    driver.execute_script("window.scrollTo(0, 0)")
    assert driver.save_screenshot(str(target)) and target.stat().st_size > 10_000


def test_evaluation_group_progression_and_failed_trial(page) -> None:
    from selenium.webdriver.common.by import By

    driver = page["driver"]
    sec = _section(driver, "evaluation group capitals")
    rows = sec.find_elements(By.CSS_SELECTOR, "table.evaluations tr.evaluation-row")
    assert len(rows) == 2
    prog = _drawn(driver, sec.find_element(By.CSS_SELECTOR, "div[data-chart=progression]"))
    (line,) = prog.find_elements(By.CSS_SELECTOR, "g.trace.scatter")  # one score dimension
    assert len(line.find_elements(By.CSS_SELECTOR, "path.point")) == 2  # two runs
    assert sec.find_element(By.CSS_SELECTOR, "table.compare tbody tr").text.startswith(
        "capitals-v1 vs capitals-v2 accuracy"
    )
    sec.find_element(By.CSS_SELECTOR, ".drill-failed").click()
    (failed,) = sec.find_elements(By.CSS_SELECTOR, "table.questions tr.q")
    assert failed.get_attribute("data-qid") == "peru" and "failed" in failed.text
    failed.click()
    details = sec.find_element(By.CSS_SELECTOR, ".details[data-qid='peru']")
    assert "no idea" in details.find_element(By.CSS_SELECTOR, ".error").text


def test_charts_and_drilldown_below_the_fold_wait_for_a_scroll(page) -> None:
    """On a short window, the last group's chart and drill-down are not drawn at load (they
    cost nothing until read), and are drawn, with their points, once scrolled to."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = page["driver"]
    driver.set_window_size(1280, 700)
    try:
        driver.get(page["html"].as_uri())
        WebDriverWait(driver, 60).until(
            lambda d: d.execute_script("return document.body.dataset.ready === '1'")
        )
        sec = _section(driver, "evaluation group capitals")
        prog = sec.find_element(By.CSS_SELECTOR, "div[data-chart=progression]")
        drill = sec.find_element(By.CSS_SELECTOR, "div.drill")
        below = "return arguments[0].getBoundingClientRect().top - window.innerHeight"
        assert driver.execute_script(below, prog) > 400  # past the page's 400 px lookahead
        assert prog.get_attribute("data-drawn") is None
        assert not prog.find_elements(By.CSS_SELECTOR, "g.trace")
        assert drill.get_attribute("data-loaded") is None
        assert not drill.find_elements(By.CSS_SELECTOR, "tr.q")
        first = _section(driver, "retrieval").find_element(By.CSS_SELECTOR, "div.chart")
        assert first.get_attribute("data-drawn") == "1"  # the first screen's, before any scroll
        (line,) = _drawn(driver, prog).find_elements(By.CSS_SELECTOR, "g.trace.scatter")
        assert len(line.find_elements(By.CSS_SELECTOR, "path.point")) == 2
        rows = _drill(driver, sec).find_elements(By.CSS_SELECTOR, "table.questions tr.q")
        assert sorted(r.get_attribute("data-qid") for r in rows) == ["france", "japan", "peru"]
    finally:
        driver.set_window_size(1280, 2000)
    assert not [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
