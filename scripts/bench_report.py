"""How fast the report page opens in Chromium, and how big it is, on SciFact x 3 systems x 2 trials.

    python scripts/bench_report.py [--results DIR] [--repeats 3]

Makes the runs once with real `lasagna benchmark run` (three BM25 variants, two trials each,
on ../shared/data/beir_scifact; reused when --results already holds them), writes the page
with `lasagna report`, and opens it in headless Chromium (Debian's chromium + chromedriver)
from file://, each time in a fresh browser (a cold start: no cached compiled scripts). The
baseline, opened the same way in the same script, is a page holding only the same inlined
plotly.js, so the ratio says what the report adds to the cost of the plotting library.
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


def open_times(page: Path, repeats: int) -> list[tuple[float, float]]:
    """(first contentful paint, load end) in seconds from navigation start, cold starts.
    Load end comes after the last script: for the report, every chart drawn."""
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
            paint, load = driver.execute_script(
                "const p = performance.getEntriesByName('first-contentful-paint')[0];"
                "return [p ? p.startTime : -1,"
                " performance.getEntriesByType('navigation')[0].loadEventEnd]"
            )
            times.append((paint / 1000, load / 1000))
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

    baseline = out.parent / f"{out.name}-plotly-only.html"
    baseline.write_text(
        "<!DOCTYPE html><html><body><script>"
        + plotly.offline.get_plotlyjs()
        + "</script></body></html>"
    )
    base = open_times(baseline, args.repeats)
    rep = open_times(page, args.repeats)
    size, base_size = page.stat().st_size, baseline.stat().st_size
    print(f"page {size / 1e6:.2f} MB (plotly.js alone {base_size / 1e6:.2f} MB)")
    for label, got in (("plotly.js only", base), ("report page", rep)):
        paint = statistics.median(p for p, _ in got)
        load = statistics.median(x for _, x in got)
        print(f"open, {label:14}: first paint {paint:.2f} s, loaded {load:.2f} s (median)")
    ratio = statistics.median(x for _, x in rep) / statistics.median(x for _, x in base)
    print(f"ratio loaded, report / plotly.js only: {ratio:.2f}")


if __name__ == "__main__":
    main()
