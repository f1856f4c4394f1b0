"""Convert Topical-Chat's test_freq conversations (two crowd workers chatting about a
topic, each rating the conversation at the end) into a multi-turn lasagna judge file for
`lasagna benchmark calibrate --judge conversation-completeness --label-column human_rating`.

Why conversation-completeness: Topical-Chat's only human judgements are quality ratings
(Poor / Not Good / Passable / Good / Excellent) of each message and of the whole
conversation by each partner; nothing in them is about a persona (role-adherence) or
forgotten facts (knowledge-retention). The nearest meaning is the user's own verdict on
the conversation, so agent_1 plays the user, agent_2 the chatbot, and the label is
agent_1's conversation_rating as a grade 1-5 (`metadata.human_rating`; calibrate reports Spearman
and Kendall against conversation_completeness_score, the share of the user's intentions
the chatbot met). It is a loose match: the workers rated how good the chat was, not
whether intentions were met, and these chats have no task. A seeded sample takes the
rating levels in turn (most ratings are Good or Excellent), conversations up to
--max-turns turns.

    python scripts/convert_topical_chat.py --n 60 --out topical_chat60.jsonl
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_files import balanced_sample, converter_parser, write_jsonl  # noqa: E402

DEFAULT_INPUT = (
    Path(__file__).resolve().parents[1].parent
    / "shared/data/topical_chat/conversations__test_freq.json"
)
LABEL = "human_rating"
GRADES = {"Poor": 1, "Not Good": 2, "Passable": 3, "Good": 4, "Excellent": 5}
ROLES = {"agent_1": "user", "agent_2": "assistant"}


def rating_of(conversation: dict, agent: str = "agent_1") -> int | None:
    """The agent's 1-5 grade of the conversation (None when missing)."""
    ratings = conversation.get("conversation_rating") or {}
    if isinstance(ratings, str):  # some copies hold the dict as its Python repr
        ratings = ast.literal_eval(ratings)
    return GRADES.get(str(ratings.get(agent, "")).strip())


def turns_of(conversation: dict) -> list[dict]:
    return [
        {"role": ROLES[t["agent"]], "content": " ".join(t["message"].split())}
        for t in conversation["content"]
        if t.get("agent") in ROLES and t.get("message", "").strip()
    ]


def convert(path: Path, n: int, seed: int = 0, max_turns: int = 30) -> list[dict]:
    """n rows, the rating levels taken in turn, seeded, in the file's order."""
    conversations = json.loads(path.read_text(encoding="utf-8"))
    usable = [
        (key, c, rating_of(c), turns_of(c))
        for key, c in conversations.items()
        if rating_of(c) is not None
    ]
    usable = [u for u in usable if 0 < len(u[3]) <= max_turns]
    chosen = balanced_sample(usable, lambda u: u[2], lambda u: u[0], n, seed)
    return [
        {
            "id": f"topical-{key}",
            "turns": turns,
            "metadata": {
                LABEL: grade,
                "config": c.get("config", ""),
                "article_url": c.get("article_url", ""),
            },
        }
        for key, c, grade, turns in chosen
    ]


def main() -> None:
    parser = converter_parser(__doc__, DEFAULT_INPUT, 60)
    parser.add_argument("--max-turns", type=int, default=30, help="longest conversation kept")
    args = parser.parse_args()
    rows = convert(args.input, args.n, args.seed, args.max_turns)
    print(f"wrote {write_jsonl(iter(rows), args.out)} rows to {args.out}")


if __name__ == "__main__":
    main()
