"""Render the report: one self-contained HTML file (plotly.js, styles, script, data inline).

No URL is ever loaded: the page works from file:// or as a mail attachment.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

from lasagna.metrics import catalog
from lasagna.results.leaderboard import fmt

TEMPLATES = "templates"


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(TEMPLATES, name).read_text(encoding="utf-8")


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


def render_page(data: dict[str, Any]) -> str:
    """The HTML text of the page for `data` (see `lasagna.results.report.build`)."""
    import jinja2
    import plotly.offline

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters |= {"fmt": fmt, "p": p_value, "signed": signed, "show": _show}
    template = env.from_string(_asset("page.html.j2"))
    return template.render(
        data=data,
        generated=datetime.now(UTC).isoformat(timespec="seconds"),
        css=_asset("report.css"),
        script=_asset("report.js"),
        plotly_js=plotly.offline.get_plotlyjs(),
        payload=script_json(data),
    )
