"""The calibration converters (scripts/convert_frank.py, convert_topical_chat.py and their
shared sampling in scripts/judge_files.py): labels by the stated rules, balanced seeded
samples, and files that `benchmark calibrate` loads. No model."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

from lasagna.cli.calibrate import load_labels

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_jsonl(rows: list[dict], path: Path) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_balanced_sample_takes_labels_in_turn_and_keeps_file_order():
    sample = script("convert_frank").balanced_sample  # judge_files.py, shared by the converters
    records = [("a", i) for i in range(10)] + [("b", i) for i in range(10, 12)]
    chosen = sample(records, lambda r: r[0], lambda r: str(r[1]), 6, seed=0)
    assert Counter(r[0] for r in chosen) == {"a": 4, "b": 2}  # b gives all it has
    assert chosen == sorted(chosen, key=lambda r: r[1])
    again = sample(records, lambda r: r[0], lambda r: str(r[1]), 6, seed=0)
    other = sample(records, lambda r: r[0], lambda r: str(r[1]), 6, seed=1)
    assert again == chosen and other != chosen
    assert len(sample(records, lambda r: r[0], lambda r: str(r[1]), 50)) == 12


def frank_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "frank"
    (folder / "articles-wmetrics-reference-json").mkdir(parents=True)
    annotations = []
    for i in range(6):
        digest = f"{i:040x}"
        article = {"article": f"Article {i}  says\nthings.", "bart": f"Summary {i}.", "pgn": "x"}
        path = folder / "articles-wmetrics-reference-json" / f"{digest}.json"
        path.write_text(json.dumps(article))
        for model, factuality in (("bart", [1.0, 0.5][i % 2]), ("pgn", 0.0)):
            split = "test" if i < 5 else "valid"
            annotations.append(
                {
                    "hash": digest,
                    "model_name": model,
                    "dataset": "bbc",
                    "Factuality": factuality,
                    "split": split,
                }
            )
    (folder / "human_annotations.json").write_text(json.dumps(annotations))
    return folder


def test_frank_rule_balance_and_loadable_file(tmp_path):
    frank = script("convert_frank")
    assert frank.human_factual(1.0) == "yes"
    assert frank.human_factual(0.6666666667) == "no" and frank.human_factual(0.0) == "no"
    rows = frank.convert(frank_folder(tmp_path), 6, seed=0)
    assert Counter(r["metadata"]["human_factual"] for r in rows) == {"yes": 3, "no": 3}
    assert all(r["metadata"]["system"] in ("bart", "pgn") for r in rows)
    assert not any(r["id"].startswith(f"frank-{5:040x}") for r in rows)  # valid split left out
    yes = next(r for r in rows if r["metadata"]["human_factual"] == "yes")
    number = yes["actual_output"].split()[1].rstrip(".")
    assert yes["retrieval_context"] == [f"Article {number} says things."]  # whitespace folded
    cases, labels = load_labels(write_jsonl(rows, tmp_path / "f.jsonl"), "human_factual")
    assert len(cases.cases) == 6 and set(labels.values()) == {"yes", "no"}


def test_frank_max_chars_drops_long_articles(tmp_path):
    assert script("convert_frank").convert(frank_folder(tmp_path), 6, max_chars=5) == []


def test_topical_chat_roles_grades_and_loadable_file(tmp_path):
    tc = script("convert_topical_chat")
    grades = ["Excellent", "Excellent", "Excellent", "Good", "Passable", ""]
    conversations = {
        f"t_{i}": {
            "config": "A",
            "content": [
                {"message": "Hi,  do you like jazz?", "agent": "agent_1"},
                {"message": "I do!", "agent": "agent_2"},
                {"message": "  ", "agent": "agent_1"},
            ],
            "conversation_rating": {"agent_1": grade, "agent_2": "Poor"},
        }
        for i, grade in enumerate(grades)
    }
    conversations["t_1"]["conversation_rating"] = str(conversations["t_1"]["conversation_rating"])
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(conversations))
    rows = tc.convert(path, 3, seed=0)
    assert sorted(r["metadata"]["human_rating"] for r in rows) == [3, 4, 5]  # one of each level
    assert rows[0]["turns"] == [
        {"role": "user", "content": "Hi, do you like jazz?"},
        {"role": "assistant", "content": "I do!"},
    ]
    assert len(tc.convert(path, 10)) == 5  # the unrated conversation is left out
    assert tc.convert(path, 10, max_turns=1) == []
    cases, labels = load_labels(write_jsonl(rows, tmp_path / "t.jsonl"), "human_rating")
    assert len(cases.cases) == 3 and cases.cases[0]["turns"][1]["role"] == "assistant"


def test_converters_on_the_shared_data(shared_data, tmp_path):
    rows = script("convert_frank").convert(shared_data / "frank", 20, seed=0)
    assert Counter(r["metadata"]["human_factual"] for r in rows) == {"yes": 10, "no": 10}
    conversations = shared_data / "topical_chat" / "conversations__test_freq.json"
    rows = script("convert_topical_chat").convert(conversations, 12, seed=0)
    assert len(rows) == 12 and len({r["metadata"]["human_rating"] for r in rows}) >= 3
    load_labels(write_jsonl(rows, tmp_path / "t.jsonl"), "human_rating")
