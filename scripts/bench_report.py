"""How fast the report page opens in Chromium, and how big it is, on SciFact x 3 systems x 2 trials.

    python scripts/bench_report.py [--results DIR] [--repeats 3]

Makes the runs once with real `lasagna benchmark run` (three BM25 variants, two trials each,
on ../shared/data/beir_scifact; reused when --results already holds them), writes the page
with `lasagna report`, and opens it in headless Chromium (Debian's chromium + chromedriver)
from file://, each time in a fresh browser (a cold start: no cached compiled scripts).
Three times are read from the browser, from navigation start: first contentful paint, the
load event's end, and "drawn": the page's own mark once every chart in (or near) the first
screen is drawn (charts further down are drawn when scrolled to). The baselines, opened the
same way in the same script, are pages holding only a plotly.js: the basic bundle the report
inlines (so the ratio says what the report adds to the cost of its plotting library), and
the full bundle plotly's Python package ships (what the page inlined before).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCIFACT = REPO.parent / "shared" / "data" / "beir_scifact"
SWEEP = """\
benchmarks:
  - {{path: {data}, split: test}}
retrievers:
  - {{kind: bm25, name: bm25-default}}
  - {{kind: bm25, name: bm25-tuned, k1: 0.9, b: 0.4}}
  - {{kind: bm25, name: bm25-nostem, stemmer: null}}
trials: 2
"""


def lasagna(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "lasagna.cli", *args], check=True, cwd=REPO)


def open_times(page: Path, repeats: int) -> list[tuple[float, float, float]]:
    """(first contentful paint, load end, drawn) in seconds from navigation start, cold
    starts; drawn is the load end on a page without the report's ready mark."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    times = []
    for _ in range(repeats):
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,2000"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        try:
            driver.get(page.as_uri())
            WebDriverWait(driver, 120).until(
                lambda d: d.execute_script("return document.readyState === 'complete'")
            )
            WebDriverWait(driver, 120).until(
                lambda d: d.execute_script(
                    "return !document.getElementById('report-data')"
                    " || !!document.body.dataset.ready"
                )
            )
            paint, load, drawn = driver.execute_script(
                "const p = performance.getEntriesByName('first-contentful-paint')[0];"
                "const load = performance.getEntriesByType('navigation')[0].loadEventEnd;"
                "return [p ? p.startTime : -1, load,"
                " document.body.dataset.readyMs ? Number(document.body.dataset.readyMs) : load]"
            )
            times.append((paint / 1000, load / 1000, drawn / 1000))
        finally:
            driver.quit()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results", type=Path, default=Path(tempfile.gettempdir()) / "bench-report"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    out = args.results
    if not any(out.glob("*/manifest.json")):
        sweep = out.parent / f"{out.name}-sweep.yaml"
        out.mkdir(parents=True, exist_ok=True)
        sweep.write_text(SWEEP.format(data=SCIFACT))
        t0 = time.perf_counter()
        lasagna("benchmark", "run", str(sweep), "--output", str(out))
        print(f"runs made in {time.perf_counter() - t0:.1f} s")
    page = out.parent / f"{out.name}.html"
    t0 = time.perf_counter()
    lasagna("report", "--output", str(out), "--out", str(page))
    print(f"lasagna report: {time.perf_counter() - t0:.1f} s (process, imports included)")

    import plotly.offline

    from lasagna.results.report.page import plotly_bundle

    pages = {"basic plotly.js": plotly_bundle(), "full plotly.js": plotly.offline.get_plotlyjs()}
    results = {}
    for label, js in pages.items():
        only = out.parent / f"{out.name}-{label.split()[0]}-plotly-only.html"
        only.write_text(f"<!DOCTYPE html><html><body><script>{js}</script></body></html>")
        results[label] = (only.stat().st_size, open_times(only, args.repeats))
    results["report page"] = (page.stat().st_size, open_times(page, args.repeats))
    median = {}
    for label, (size, got) in results.items():
        paint, load, drawn = (statistics.median(t[i] for t in got) for i in range(3))
        median[label] = drawn
        painted = f"{paint:.2f} s" if paint >= 0 else "none (nothing to paint)"
        print(
            f"open, {label:15} ({size / 1e6:.2f} MB): first paint {painted}, loaded "
            f"{load:.2f} s, charts drawn {drawn:.2f} s (median of {len(got)})"
        )
    for label in pages:
        ratio = median["report page"] / median[label]
        print(f"ratio, report drawn / {label} only loaded: {ratio:.2f}")


if __name__ == "__main__":
    main()
