"""Convert HotpotQA (original format, distractor setting) into a question file and a corpus.

The corpus is every question's context paragraphs (gold and distractors) pooled, one
document per paragraph title: `{_id: the title with _ for spaces (TREC files hold no
spaces), title, text: the sentences joined}`. Each
question row has its answer and `expected_docs` (the titles of its supporting facts), so
retrieval searches the distractors too, a harder search than the gold passages alone.

    python scripts/convert_hotpotqa.py ../shared/data/hotpotqa_train_sample100_hipporag \
        --out work/hotpotqa        # writes work/hotpotqa/questions.jsonl and corpus.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from lasagna.errors import Problem, UserError

DEFAULT_INPUT = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "hotpotqa_train_sample100_hipporag"
)
QUESTIONS_FILE = "hotpotqa_train.json"


def doc_id(title: str) -> str:
    return "_".join(title.split())


def hotpot_rows(items: list[dict], source: str = "<hotpotqa>") -> tuple[list[dict], list[dict]]:
    """(question rows, corpus documents) of parsed HotpotQA items, in file order."""
    corpus: dict[str, dict] = {}
    rows = []
    for i, item in enumerate(items):
        for title, sentences in item["context"]:
            text = "".join(sentences).strip()
            if title in corpus and corpus[title]["text"] != text:
                raise UserError(
                    Problem(
                        f"paragraph '{title}' has two texts",
                        file=source,
                        where=f"item {i}",
                        fix="use an unmodified HotpotQA file",
                    )
                )
            corpus[title] = {"_id": doc_id(title), "title": title, "text": text}
        gold = list(dict.fromkeys(doc_id(title) for title, _ in item["supporting_facts"]))
        rows.append(
            {
                "id": str(item["_id"]),
                "question": item["question"],
                "answer": item["answer"],
                "expected_docs": gold,
                "metadata": {"type": item.get("type", ""), "level": item.get("level", "")},
            }
        )
    return rows, list(corpus.values())


def write_lines(objects: list[dict], out: Path) -> None:
    out.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", type=Path, default=DEFAULT_INPUT)
    parser.add_argument("--out", type=Path, default=Path("hotpotqa"))
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    args = parser.parse_args(argv)
    source = args.input / QUESTIONS_FILE if args.input.is_dir() else args.input
    try:
        if not source.is_file():
            raise UserError(
                Problem("file not found", file=str(source), fix="pass a HotpotQA JSON file")
            )
        items = json.loads(source.read_text(encoding="utf-8"))[: args.limit]
        rows, corpus = hotpot_rows(items, str(source))
    except UserError as err:
        print(err.render(), file=sys.stderr)
        return UserError.exit_code
    args.out.mkdir(parents=True, exist_ok=True)
    write_lines(rows, args.out / "questions.jsonl")
    write_lines(corpus, args.out / "corpus.jsonl")
    print(f"wrote {len(rows)} questions and {len(corpus)} documents to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
