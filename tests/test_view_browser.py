"""`lasagna view` in a real headless Chromium (Debian's chromium + chromedriver, selenium),
as a user runs it: the real `lasagna view` command serving a results root on a free
loopback port, and a real `lasagna benchmark run` sweep (BM25 on the packaged sample)
started beside it while the page is open. The page must show the sweep running, its
trials counting up, and then its systems in the leaderboard, all without a reload; a
trace and a question drill-down are clicked through; deep links, the 404 page and a
damaged run folder are opened. Screenshots of the live panel and the trace view are
written for the docs (LASAGNA_VIEW_SCREENSHOTS names the folder)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browsers import chromium
from ray import cloudpickle

from lasagna import Datapoint, evaluate

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SYSTEMS = [(1.2, 0.75), (0.9, 0.4), (1.5, 0.75), (0.6, 0.3)]
SWEEP = "benchmarks:\n  - {name: sample}\nretrievers:\n" + "".join(
    f"  - {{kind: bm25, name: bm25-k{k1}-b{b}, k1: {k1}, b: {b}, top_k: 10}}\n" for k1, b in SYSTEMS
)
CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Peru": "Lima"}
_SWEEP: dict[str, subprocess.Popen] = {}


def capital(data: dict) -> str:
    """An executor that looks the capital up with a traced tool call (a span of its own)."""
    from opentelemetry import trace

    attributes = {"lasagna.span.type": "TOOL", "lasagna.span.input": data["country"]}
    with trace.get_tracer("capitals").start_as_current_span("lookup", attributes=attributes) as s:
        found = CAPITALS.get(data["country"], "?") if data["country"] != "Peru" else "Cusco"
        s.set_attribute("lasagna.span.output", found)
    return f"The capital is {found}."


def capital_v1(data: dict) -> str:
    return "Paris"


def accuracy(output: str, target: str) -> int:
    return 1 if target.lower() in output.lower() else 0


def _env() -> dict[str, str]:
    return os.environ | {"PYTHONPATH": str(REPO), "COLUMNS": "100"}


@pytest.fixture(scope="module")
def browser():
    with chromium(window="1280,1100") as driver:
        yield driver


@pytest.fixture(scope="module")
def root(ray_local, tmp_path_factory) -> Path:
    """Two real evaluate() runs of one group (traces, side by side) and a damaged folder."""
    out = tmp_path_factory.mktemp("view") / "results"
    data = [Datapoint({"country": c}, target=t, task_id=c.lower()) for c, t in CAPITALS.items()]
    for version, executor in (("v1", capital_v1), ("v2", capital)):
        time.sleep(1.1)  # start times have whole seconds: keep the two evaluations apart
        evaluate(
            data,
            executor,
            {"accuracy": accuracy},
            group_name="capitals",
            name=f"capitals-{version}",
            output=out,
            quiet=True,
        )
    (out / "damaged-run").mkdir()
    (out / "damaged-run" / "manifest.json").write_text('{"trials": [{"key": ')
    return out


@pytest.fixture(scope="module")
def base(root: Path):
    """`lasagna view --output ROOT --port 0` running; its URL (printed on its first line)."""
    cmd = [sys.executable, "-m", "lasagna.cli", "view", "--output", str(root), "--port", "0"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=REPO
    )
    line = proc.stdout.readline()
    assert "(read-only) at http://127.0.0.1:" in line, (line, proc.stderr.read())
    yield line.rsplit(" at ", 1)[1].strip().rstrip("/")
    proc.terminate()
    assert proc.wait(timeout=20) in (0, -15)


def _start_sweep(root: Path) -> subprocess.Popen:
    if "proc" not in _SWEEP:
        sweep = root.parent / "sweep.yaml"
        sweep.write_text(SWEEP)
        cmd = [
            sys.executable,
            "-m",
            "lasagna.cli",
            "benchmark",
            "run",
            str(sweep),
            "--output",
            str(root),
            "--trials-per-driver",  # two driver processes: the status goes on across them
            "2",
        ]
        with open(root.parent / "sweep.log", "w") as log:
            _SWEEP["proc"] = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, text=True, env=_env()
            )
    return _SWEEP["proc"]


@pytest.fixture(scope="module")
def swept(root: Path, base: str) -> None:
    """The sweep has finished (started here unless the live test started it)."""
    proc = _start_sweep(root)
    assert proc.wait(timeout=600) == 0, _sweep_log(root)


def _live(driver, selector: str) -> dict | None:
    """A live-panel line's data attributes, read at once (the panel is replaced as it
    updates, so an element found a moment ago may be gone)."""
    return driver.execute_script(
        "const r = document.querySelector(arguments[0]);"
        "return r ? Object.assign({}, r.dataset) : null",
        selector,
    )


def _sweep_log(root: Path) -> str:
    return (root.parent / "sweep.log").read_text()


def _wait(driver, condition, timeout: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(condition)


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("LASAGNA_VIEW_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _errors(driver) -> list:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def test_a_running_sweep_counts_up_then_joins_the_leaderboard(browser, base, root, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    _wait(browser, lambda d: d.execute_script("return document.body.dataset.version"))
    browser.execute_script("window.__sameDocument = 'yes'")  # gone if the page reloads
    assert not browser.find_elements(
        By.XPATH, "//section[contains(@class,'group')]//h2[contains(., 'sample')]"
    )
    proc = _start_sweep(root)
    line = _wait(browser, lambda d: _live(d, "tr.live-run[data-state='running']"), timeout=120)
    run_id = line["run"]
    assert line["total"] == str(len(SYSTEMS))
    seen, shot = set(), None
    live = f"tr.live-run[data-run='{run_id}']"
    while proc.poll() is None or not seen:
        now = _live(browser, live)
        if now and now["state"] == "running":
            seen.add(int(now["done"]))
            if shot is None and 0 < int(now["done"]) < len(SYSTEMS):
                shot = _shots(tmp_path) / "view-live.png"
                browser.execute_script("window.scrollTo(0, 0)")
                browser.save_screenshot(str(shot))
        time.sleep(0.2)
    assert proc.wait() == 0, _sweep_log(root)
    assert len(seen) >= 2, seen  # the count moved while the page stayed open
    _wait(browser, lambda d: (_live(d, live) or {}).get("landed") == "1", timeout=30)
    assert _live(browser, live)["state"] == "finished"
    systems = (
        "return [...document.querySelectorAll('table.leaderboard tr.system-row')]"
        ".map((r) => r.dataset.system)"
    )
    board = _wait(browser, lambda d: d.execute_script(systems), timeout=30)
    assert sorted(board) == sorted(f"bm25-k{k1}-b{b}" for k1, b in SYSTEMS)
    assert browser.execute_script("return window.__sameDocument") == "yes"
    assert shot is not None and shot.stat().st_size > 10_000
    assert not _errors(browser)


def test_trace_of_an_sdk_trial_clicked_through(browser, base, root, tmp_path):
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    run = _wait(
        browser,
        lambda d: d.find_element(
            By.XPATH, "//tr[@class='evaluation-row'][td[2][text()='capitals-v2']]//a"
        ),
    )
    # a click event on the link itself: charts drawn as the page scrolls move it meanwhile
    browser.execute_script("arguments[0].click()", run)
    _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "section.run-facts"))
    row = browser.find_element(By.CSS_SELECTOR, "tr.eval-trial[data-task='peru']")
    assert "accuracy 0.0000" in row.text
    row.find_element(By.CSS_SELECTOR, "a.trace-link").click()
    spans = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "details.span"))
    assert [s.get_attribute("data-type") for s in spans] == [
        "EVALUATION",
        "EXECUTOR",
        "TOOL",
        "EVALUATOR",
    ]
    assert [s.get_attribute("data-depth") for s in spans] == ["0", "1", "2", "1"]
    assert "task peru" in browser.find_element(By.CSS_SELECTOR, ".trace-summary").text
    tool = spans[2]
    assert not tool.find_element(By.CSS_SELECTOR, ".span-output").is_displayed()
    tool.find_element(By.TAG_NAME, "summary").click()
    assert tool.find_element(By.CSS_SELECTOR, ".span-input pre").text == "Peru"
    assert tool.find_element(By.CSS_SELECTOR, ".span-output pre").text == "Cusco"
    spans[3].find_element(By.TAG_NAME, "summary").click()
    assert spans[3].find_element(By.CSS_SELECTOR, ".span-output pre").text == "0"
    spans[1].find_element(By.TAG_NAME, "summary").click()
    shot = _shots(tmp_path) / "view-trace.png"
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    assert not _errors(browser)


def test_question_drilldown_across_every_system(browser, base, swept):
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    sec = _wait(
        browser,
        lambda d: d.find_element(
            By.XPATH, "//section[contains(@class,'group')][.//h2[contains(., 'retrieval')]]"
        ),
    )
    drill = sec.find_element(By.CSS_SELECTOR, "div.drill")
    browser.execute_script("arguments[0].scrollIntoView()", drill)
    _wait(browser, lambda d: drill.get_attribute("data-loaded") == "1")  # fetched on demand
    drill.find_element(By.CSS_SELECTOR, "tr.q[data-qid='s01']").click()
    details = drill.find_element(By.CSS_SELECTOR, ".details[data-qid='s01']")
    details.find_element(By.CSS_SELECTOR, "a.question-link").click()
    columns = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".column.trial"))
    assert sorted(c.get_attribute("data-system") for c in columns) == sorted(
        f"bm25-k{k1}-b{b}" for k1, b in SYSTEMS
    )
    for column in columns:  # every system's ranked list, its gold passage marked
        assert column.find_elements(By.CSS_SELECTOR, "ol.ranked li.rel")
    assert "Glassblowing" in browser.find_element(By.CSS_SELECTOR, "ul.gold").text
    assert "Roman glass" in browser.find_element(By.CSS_SELECTOR, ".question-text").text
    assert not _errors(browser)


def test_deep_links_open_their_view(browser, base, root, swept):
    from selenium.webdriver.common.by import By

    sweep_id = next(
        p.name
        for p in root.iterdir()
        if (p / "manifest.json").exists()
        and '"kind": "evaluation"' not in (p / "manifest.json").read_text()
        and p.name != "damaged-run"
    )
    browser.get(f"{base}/run/{sweep_id}")
    facts = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "section.run-facts"))
    assert facts.get_attribute("data-run") == sweep_id
    assert len(facts.find_elements(By.CSS_SELECTOR, "tr.trial-row")) == len(SYSTEMS)
    key = facts.find_element(By.CSS_SELECTOR, "tr.trial-row td a").get_attribute("href")
    browser.get(key)  # the group of the trial's benchmark
    assert len(browser.find_elements(By.CSS_SELECTOR, "section.group[data-key]")) == 1
    evals = sorted(
        p.name
        for p in root.iterdir()
        if p.name != "damaged-run" and p.name != sweep_id and (p / "manifest.json").exists()
    )
    browser.get(f"{base}/compare?a={evals[0]}&b={evals[1]}")
    line = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "table.compare tbody tr"))
    assert line.text.startswith("capitals-v1 vs capitals-v2 accuracy")
    assert not _errors(browser)


def test_missing_run_is_a_404_page_and_a_damaged_one_says_so(browser, base):
    from selenium.webdriver.common.by import By

    browser.get(f"{base}/run/no-such-run")
    box = browser.find_element(By.CSS_SELECTOR, ".error-box")
    assert box.get_attribute("data-status") == "404"
    assert "no run 'no-such-run'; the most recent are:" in box.text
    browser.get(base + "/")
    broken = _wait(
        browser, lambda d: d.find_element(By.CSS_SELECTOR, "tr.broken-run[data-run='damaged-run']")
    )
    assert "unreadable run manifest" in broken.text
    assert browser.find_elements(By.CSS_SELECTOR, "section.group[data-key]")  # the rest shows
    broken.find_element(By.TAG_NAME, "a").click()
    box = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, ".error-box"))
    assert "This run folder is damaged" in box.text and "damaged-run" in box.text
    assert not [e for e in _errors(browser) if "status of 4" not in e["message"]]
