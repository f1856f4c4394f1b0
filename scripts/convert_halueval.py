"""Convert HaluEval's general_data.json (ChatGPT replies with human hallucination labels)
into a lasagna judge file for `lasagna benchmark calibrate --judge hallucination`.

Each row: id, input (the user query), actual_output (ChatGPT's reply), context and the
human label `metadata.human_hallucination` (yes/no; in the metadata, so the file also runs
with `lasagna benchmark run FILE --judge hallucination` and its scores split by the label
with `lasagna results show RUN --by human_hallucination`). general_data has no reference passage,
so `context` is the query itself: the judge decides from the query and its own knowledge
(reference-free hallucination detection, a hard task for any judge). A seeded sample takes
half hallucinated and half clean replies (the set is ~18% hallucinated), replies up to
--max-chars long so a CPU judge finishes.

    python scripts/convert_halueval.py --n 100 --out halueval100.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_files import balanced_sample, converter_parser, write_jsonl  # noqa: E402

DEFAULT_INPUT = (
    Path(__file__).resolve().parents[1].parent / "shared/data/halueval/general_data.json"
)
LABEL = "human_hallucination"


def convert(path: Path, n: int, seed: int = 0, max_chars: int = 600) -> list[dict]:
    """n rows (n // 2 per label where possible), seeded, in the file's order."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    usable = [
        r
        for r in records
        if r.get("hallucination") in ("yes", "no")
        and r.get("user_query", "").strip()
        and 0 < len(r.get("chatgpt_response", "").strip()) <= max_chars
    ]
    chosen = balanced_sample(
        usable, lambda r: r["hallucination"], lambda r: r["ID"], n, seed, labels=("no", "yes")
    )
    return [
        {
            "id": f"halueval-{r['ID']}",
            "input": r["user_query"].strip(),
            "actual_output": r["chatgpt_response"].strip(),
            "context": [r["user_query"].strip()],
            "metadata": {LABEL: r["hallucination"]},
        }
        for r in chosen
    ]


def main() -> None:
    parser = converter_parser(__doc__, DEFAULT_INPUT, 100)
    parser.add_argument("--max-chars", type=int, default=600)
    args = parser.parse_args()
    rows = convert(args.input, args.n, args.seed, args.max_chars)
    print(f"wrote {write_jsonl(iter(rows), args.out)} rows to {args.out}")


if __name__ == "__main__":
    main()
