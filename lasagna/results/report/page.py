"""Render the report: one self-contained HTML file (plotly.js, styles, script, data inline).

No URL is ever loaded: the page works from file:// or as a mail attachment. The plotly.js
inlined is plotly's own *basic* bundle (bar, scatter, pie: all the page draws; 1.2 MB
instead of the full 4.8 MB bundle the Python package ships), vendored from the npm package
plotly.js-basic-dist-min at the version the Python package carries (see
`scripts/vendor_plotly_basic.sh`). Each group's drill-down rows and the passage texts sit
in their own JSON blocks, parsed only when the drill-down is first shown.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

from lasagna.metrics import catalog
from lasagna.results.leaderboard_render import fmt

TEMPLATES = "templates"
PLOTLY_BUNDLE = "plotly-basic.min.js"


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(TEMPLATES, name).read_text(encoding="utf-8")


def plotly_bundle() -> str:
    """The plotly.js the page inlines (the vendored basic bundle)."""
    return _asset(PLOTLY_BUNDLE)


def bundle_version(js: str) -> str:
    """'4.1.1' from a plotly.js bundle's header comment."""
    found = re.search(r"plotly\.js[^\n]*? v(\d+\.\d+\.\d+)", js[:400])
    return found.group(1) if found else "?"


def script_json(value: Any) -> str:
    """JSON safe inside <script>: no '</script>', no '<!--' (every '<' escaped)."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def p_value(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def _show(value: float | None, metric: str) -> str:
    return catalog.show(metric, value)


@cache
def environment(*packages: str) -> Any:
    """The Jinja environment of the page: this package's templates, then those of each of
    `packages` (a package with a `templates` folder: `lasagna view` adds its own)."""
    import jinja2

    def load(name: str) -> str | None:
        for package in (__package__, *packages):
            found = resources.files(package).joinpath(TEMPLATES, name)
            if found.is_file():
                return found.read_text(encoding="utf-8")
        return None

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load), autoescape=True, undefined=jinja2.StrictUndefined
    )
    env.filters |= {"fmt": fmt, "p": p_value, "signed": signed, "show": _show}
    return env


def render_page(data: dict[str, Any], server: dict[str, Any] | None = None) -> str:
    """The HTML text of the page for `data` (see `lasagna.results.report.build`).

    One template, two deliveries. Without `server` (`lasagna report`): one file with
    plotly.js, styles, script and every JSON block inline. With it (`lasagna view`): the
    same page linking those assets from the server (`server["static"]`), each group's
    drill-down rows fetched when first shown (`server["drill"](group)`: its URL), and
    `server["top"]` (HTML: the live panel, a run's facts) above the groups."""
    env = environment(*(server or {}).get("packages", ()))
    template = env.get_template("page.html.j2")
    # the drill-down rows and passage texts (most of the bytes) in blocks of their own
    head = data | {"groups": [_without(g, "drill") for g in data["groups"]], "docs": {}}
    if server is not None:
        head |= {"mode": "server", "version": server["version"], "poll_ms": server["poll_ms"]}
        head["poll"] = server.get("scope") == "all"  # a page of every run: new runs appear
        return template.render(
            data=data,
            generated=datetime.now(UTC).isoformat(timespec="seconds"),
            server=server,
            payload=script_json(head),
            lazy={f"drill-{g['id']}": "" for g in data["groups"]} | {"docs": "{}"},
            sources={f"drill-{g['id']}": server["drill"](g) for g in data["groups"]},
        )
    lazy = {f"drill-{g['id']}": g["drill"] for g in data["groups"]} | {"docs": data["docs"]}
    return template.render(
        data=data,
        generated=datetime.now(UTC).isoformat(timespec="seconds"),
        server=None,
        css=_asset("report.css"),
        script=_asset("report.js"),
        plotly_js=plotly_bundle(),
        payload=script_json(head),
        lazy={name: script_json(value) for name, value in lazy.items()},
        sources={},
    )


def _without(entry: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != key}
