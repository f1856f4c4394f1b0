"""Plotly figures of the report, as JSON the page hands to Plotly.newPlot (no chart code of
our own: plotly draws, with its JavaScript inlined in the page)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import plotly.graph_objects as go

FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"


def _layout(**kwargs: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "template": "plotly_white",
        "font": {"family": FONT, "size": 12},
        "margin": {"l": 10, "r": 10, "t": 36, "b": 10},
    }
    return base | kwargs


def leaderboard_figure(board: dict[str, Any]) -> dict[str, Any]:
    """One bar per system (best on top) with its 95% interval as error bars."""
    lines = list(reversed(board["lines"]))
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
            title={"text": f"{board['metric']} (95% CI over trials)", "font": {"size": 13}},
            height=max(160, 60 + 34 * len(lines)),
            yaxis={"automargin": True},
            xaxis={"automargin": True},
        )
    )
    return json.loads(fig.to_json())


def progression_figure(prog: dict[str, Any]) -> dict[str, Any]:
    """A line per system over run time, for each metric; a menu picks the metric shown."""
    metrics, default = prog["metrics"], prog["default"]
    fig = go.Figure()
    for metric in metrics:
        for s in prog["series"]:
            pts = [p for p in s["points"] if metric in p["values"]]
            fig.add_trace(
                go.Scatter(
                    x=[p["time"] for p in pts],
                    y=[p["values"][metric] for p in pts],
                    customdata=[[p["run"], p["n"]] for p in pts],
                    mode="lines+markers",
                    name=s["system"],
                    legendgroup=s["system"],
                    meta=metric,
                    visible=metric == default,
                    hovertemplate="%{fullData.name}<br>run %{customdata[0]}<br>%{x}<br>"
                    + metric
                    + " %{y:.4f} (%{customdata[1]} trial(s))<extra></extra>",
                )
            )
    times = sorted({p["time"] for s in prog["series"] for p in s["points"]})
    xaxis: dict[str, Any] = {"title": {"text": "run time (UTC)"}, "automargin": True}
    if len(times) == 1:  # one run: a day around it, not a millisecond scale
        t = datetime.fromisoformat(times[0])
        xaxis["range"] = [
            (t - timedelta(hours=12)).isoformat(),
            (t + timedelta(hours=12)).isoformat(),
        ]
    n = len(prog["series"])
    buttons = [
        {
            "label": metric,
            "method": "update",
            "args": [
                {"visible": [j // n == i for j in range(len(metrics) * n)]},
                {"yaxis.title.text": metric},
            ],
        }
        for i, metric in enumerate(metrics)
    ]
    fig.update_layout(
        _layout(
            height=320,
            margin={"l": 10, "r": 10, "t": 48, "b": 10},
            xaxis=xaxis,
            yaxis={"title": {"text": default}, "automargin": True},
            legend={"orientation": "h", "y": -0.25},
            showlegend=True,
            updatemenus=[
                {
                    "buttons": buttons,
                    "active": metrics.index(default) if default in metrics else 0,
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
