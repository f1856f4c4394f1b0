"""A small SVG chart of bench_scale's records (no plotting library needed): CPU time per
document of each build step, and per question and document of each search, against the
corpus size (both axes logarithmic). A flat line is a cost that grows linearly."""

from __future__ import annotations

import math

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 300, 60, 170, 20, 40
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
SERIES = {  # step -> (label, scale of cpu seconds / n: µs per item, or ns per query per doc)
    "bm25 build": "BM25 build, µs/doc",
    "embeddings write": "embeddings write, µs/doc",
    "ivf build": "IVF build, µs/doc",
    "hnsw build": "HNSW build, µs/doc",
    "flat search": "flat search, ns/query/doc",
    "bm25 search": "BM25 search, ns/query/doc",
    "ivf search": "IVF search, ns/query/doc",
}


def _value(r: dict) -> float:
    per_item_us = r["cpu"] * 1e6 / max(1, r["n"])
    return per_item_us * 1e3 / r["docs"] if r["per"] == "question" else per_item_us


def svg(records: list[dict]) -> str:
    lines = {
        label: sorted((r["docs"], _value(r)) for r in records if r["step"] == step)
        for step, label in SERIES.items()
    }
    lines = {k: v for k, v in lines.items() if v and all(y > 0 for _, y in v)}
    xs = [x for pts in lines.values() for x, _ in pts]
    ys = [y for pts in lines.values() for _, y in pts]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs)) + 1e-9
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def px(x: float) -> float:
        return PAD_L + (math.log10(x) - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return PAD_T + ph - (math.log10(y) - y0) / max(1e-9, y1 - y0) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
    ]
    for e in range(y0, y1 + 1):
        y = py(10**e)
        out.append(
            f'<line x1="{PAD_L}" x2="{PAD_L + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
        )
        out.append(f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0**e:g}</text>')
    for x in sorted(set(xs)):
        label = f"{x // 1_000_000}M" if x >= 1_000_000 else f"{x // 1000}k"
        out.append(f'<text x="{px(x):.1f}" y="{H - 22}" text-anchor="middle">{label}</text>')
    out.append(f'<text x="{PAD_L + pw / 2}" y="{H - 6}" text-anchor="middle">documents</text>')
    for i, (label, pts) in enumerate(lines.items()):
        c = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = PAD_T + 14 * i + 8
        out.append(f'<rect x="{W - PAD_R + 10}" y="{ly - 8}" width="10" height="10" fill="{c}"/>')
        out.append(f'<text x="{W - PAD_R + 24}" y="{ly + 1}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
