"""Plotly figures of the report, as JSON the page hands to Plotly.newPlot (no chart code of
our own: plotly draws, with its JavaScript inlined in the page).

Only bar and scatter traces: the page inlines plotly's basic bundle (bar, scatter, pie)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

TRACE_TYPES = ("bar", "scatter")  # what the figures use; all in plotly's basic bundle
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"


@cache
def _template() -> go.layout.Template:
    """plotly_white with the trace defaults of our trace types only (the others are types
    the basic bundle does not have, and bytes in every figure)."""
    full = pio.templates["plotly_white"].to_plotly_json()
    data = {k: v for k, v in full.get("data", {}).items() if k in TRACE_TYPES}
    return go.layout.Template(layout=full["layout"], data=data)


def _layout(**kwargs: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "template": _template(),
        "font": {"family": FONT, "size": 12},
        "margin": {"l": 10, "r": 10, "t": 36, "b": 10},
    }
    return base | kwargs


def leaderboard_figure(board: dict[str, Any]) -> dict[str, Any]:
    """One bar per system (best on top) with its 95% interval as error bars."""
    lines = list(reversed(board["lines"]))
    over = "questions" if any(line["interval"] == "questions" for line in lines) else "trials"
    means = [line["mean"] for line in lines]
    plus = [(line["high"] - line["mean"]) if line["high"] is not None else 0 for line in lines]
    minus = [(line["mean"] - line["low"]) if line["low"] is not None else 0 for line in lines]
    fig = go.Figure(
        go.Bar(
            x=means,
            y=[f"{line['rank']}. {line['system']}" for line in lines],
            orientation="h",
            error_x={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus},
            customdata=[[line["n_trials"]] for line in lines],
            hovertemplate="%{y}<br>" + board["metric"] + " %{x:.4f}<br>%{customdata[0]} trial(s)"
            "<extra></extra>",
            name=board["metric"],
        )
    )
    fig.update_layout(
        _layout(
            title={"text": f"{board['metric']} (95% CI over {over})", "font": {"size": 13}},
            height=max(160, 60 + 34 * len(lines)),
            yaxis={"automargin": True},
            xaxis={"automargin": True},
        )
    )
    return json.loads(fig.to_json())


def progression_figure(prog: dict[str, Any]) -> dict[str, Any]:
    """A line per system over run time; a menu (plotly's own) picks the metric shown by
    restyling those lines' data, so the chart holds one trace per system, not one per
    system and metric (30 retrieval metrics made 90 traces to lay out at load), and each
    metric gets its own y axis. One run: a point on a one-category axis."""
    metrics, default = prog["metrics"], prog["default"]
    shown = default if default in metrics else metrics[0]
    times = sorted({p["time"] for s in prog["series"] for p in s["points"]})
    one_run = len(times) == 1  # a point on a category axis, not a time axis around it

    def when(time: str) -> str:
        return time[:19].replace("T", " ") + " UTC" if one_run else time

    def lines(metric: str) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {"x": [], "y": [], "customdata": [], "hovertemplate": []}
        for s in prog["series"]:
            pts = [p for p in s["points"] if metric in p["values"]]
            out["x"].append([when(p["time"]) for p in pts])
            out["y"].append([p["values"][metric] for p in pts])
            out["customdata"].append([[p["run"], p["n"]] for p in pts])
            out["hovertemplate"].append(
                "%{fullData.name}<br>run %{customdata[0]}<br>%{x}<br>"
                + metric
                + " %{y:.4f} (%{customdata[1]} trial(s))<extra></extra>"
            )
        return out

    first = lines(shown)
    fig = go.Figure()
    for i, s in enumerate(prog["series"]):
        fig.add_trace(
            go.Scatter(
                x=first["x"][i],
                y=first["y"][i],
                customdata=first["customdata"][i],
                hovertemplate=first["hovertemplate"][i],
                mode="lines+markers",
                name=s["system"],
            )
        )
    xaxis: dict[str, Any] = {"title": {"text": "run time (UTC)"}, "automargin": True}
    if one_run:  # one run: its time as the one category, the point in the middle
        xaxis |= {"type": "category", "title": {"text": "run time (one run so far)"}}
    buttons = [
        {
            "label": metric,
            "method": "update",
            "args": [
                first if metric == shown else lines(metric),
                {"yaxis.title.text": metric} | _y_axis(prog, metric, "yaxis."),
            ],
        }
        for metric in metrics
    ]
    fig.update_layout(
        _layout(
            height=320,
            margin={"l": 10, "r": 10, "t": 48, "b": 10},
            xaxis=xaxis,
            yaxis={"title": {"text": shown}, "automargin": True} | _y_axis(prog, shown),
            legend={"orientation": "h", "y": -0.25},
            showlegend=True,
            updatemenus=[
                {
                    "buttons": buttons,
                    "active": metrics.index(shown),
                    "x": 0,
                    "xanchor": "left",
                    "y": 1.18,
                    "yanchor": "top",
                }
            ]
            if len(metrics) > 1
            else [],
        )
    )
    return json.loads(fig.to_json())


def _y_axis(prog: dict[str, Any], metric: str, prefix: str = "") -> dict[str, Any]:
    """The y axis of one metric: plotly pads a single value by +-1 (a score of 0.34 drawn
    from -0.5 to 1, one of 1.0 up to 2), so one value (one run, or all equal) gets a
    narrow range around it; several values are autoranged. Neither goes below 0 when no
    value is negative."""
    values = [p["values"].get(metric) for s in prog["series"] for p in s["points"]]
    values = [v for v in values if isinstance(v, int | float)]
    if not values:
        return {}
    low, high = min(values), max(values)
    if high - low > 1e-12:
        mode = "normal" if low < 0 else "nonnegative"
        return {f"{prefix}autorange": True, f"{prefix}rangemode": mode}
    pad = max(0.05, 0.1 * abs(high))
    bottom = low - pad if low < 0 or low - pad >= 0 else 0.0
    return {f"{prefix}range": [bottom, high + pad], f"{prefix}autorange": False}
