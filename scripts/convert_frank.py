"""Convert FRANK's human factuality annotations (summaries of CNN/DM and XSum/BBC news
articles by nine systems) into a lasagna judge file for `lasagna benchmark calibrate
--judge faithfulness --label-column human_factual`.

Each row: id (frank-<article hash>-<system>), input (a fixed summarisation request),
actual_output (the system's summary), retrieval_context (the article) and the human label
`metadata.human_factual` (in the metadata, so the file also runs with `benchmark run`).
The rule: FRANK's `Factuality` is the share of the summary's sentences the annotators
(majority per sentence) found free of every factual error, so
`human_factual` is "yes" when Factuality is 1.0 (no sentence has an error) and "no"
otherwise. Judged with faithfulness at `--param threshold=1`, the judge's "passed" means
the same thing: no claim of the summary contradicted by the article. A seeded sample takes
half factual and half non-factual summaries from the chosen split, of articles up to
--max-chars long so a CPU judge finishes.

    python scripts/convert_frank.py --n 60 --out frank60.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_files import balanced_sample, converter_parser, write_jsonl  # noqa: E402

DEFAULT_INPUT = Path(__file__).resolve().parents[1].parent / "shared/data/frank"
LABEL = "human_factual"
REQUEST = "Summarise the news article."


def human_factual(factuality: float) -> str:
    """FRANK's Factuality (share of error-free sentences) -> the binary label."""
    return "yes" if float(factuality) >= 1.0 else "no"


def convert(
    folder: Path, n: int, seed: int = 0, max_chars: int = 2500, split: str = "test"
) -> list[dict]:
    """n rows (half per label where possible), seeded, in the annotation file's order."""
    annotations = json.loads((folder / "human_annotations.json").read_text(encoding="utf-8"))
    articles: dict[str, dict] = {}
    usable = []
    for a in annotations:
        if split != "all" and a.get("split") != split:
            continue
        if a["hash"] not in articles:
            path = folder / "articles-wmetrics-reference-json" / f"{a['hash']}.json"
            articles[a["hash"]] = json.loads(path.read_text(encoding="utf-8"))
        article = articles[a["hash"]]
        text = " ".join(article.get("article", "").split())
        summary = " ".join(str(article.get(a["model_name"], "")).split())
        if summary and 0 < len(text) <= max_chars:
            usable.append((a, text, summary))
    chosen = balanced_sample(
        usable,
        lambda u: human_factual(u[0]["Factuality"]),
        lambda u: f"{u[0]['hash']}:{u[0]['model_name']}",
        n,
        seed,
        labels=("no", "yes"),
    )
    return [
        {
            "id": f"frank-{a['hash']}-{a['model_name']}",
            "input": REQUEST,
            "actual_output": summary,
            "retrieval_context": [text],
            "metadata": {
                LABEL: human_factual(a["Factuality"]),
                "dataset": a["dataset"],
                "system": a["model_name"],
                "factuality": float(a["Factuality"]),
            },
        }
        for a, text, summary in chosen
    ]


def main() -> None:
    parser = converter_parser(__doc__, DEFAULT_INPUT, 60)
    parser.add_argument("--max-chars", type=int, default=2500, help="longest article kept")
    parser.add_argument("--split", choices=["test", "valid", "all"], default="test")
    args = parser.parse_args()
    rows = convert(args.input, args.n, args.seed, args.max_chars, args.split)
    print(f"wrote {write_jsonl(iter(rows), args.out)} rows to {args.out}")


if __name__ == "__main__":
    main()
