"""Question synthesis speed: questions kept per minute with the packaged model (vLLM in Ray).

Documents: the first --articles Wikipedia articles of the shared SQuAD v2 dev subset, one .md
file each (their paragraphs joined), written to a temporary folder. The run is the real
`synthesize()` (write + check calls, constrained JSON). Baseline, in the same actor right
after: the same write prompts with no JSON schema (free text, same max_tokens), so the
ratio shows what constrained decoding costs. Model load is excluded from the rates.

    HF_HUB_OFFLINE=1 python scripts/bench_synth.py --n 24 --articles 6

Measured, not asserted: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

SQUAD = Path(__file__).resolve().parents[1].parent / "shared/data/squad_v2_dev_subset/dev-v2.0.json"


def write_articles(folder: Path, articles: int) -> None:
    data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"][:articles]
    for article in data:
        body = "\n\n".join(p["context"] for p in article["paragraphs"])
        (folder / f"{article['title']}.md").write_text(f"# {article['title']}\n\n{body}\n")


def main() -> None:
    from lasagna.engine.ray_session import prefer_loopback

    prefer_loopback()
    from lasagna.synth.generate import run_plan
    from lasagna.synth.model_choice import choose_model, model_label
    from lasagna.synth.plan import build_plan
    from lasagna.synth.runner import ray_complete

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--articles", type=int, default=6)
    ap.add_argument("--mix", default="factoid=0.6,multihop=0.3,unanswerable=0.1")
    ap.add_argument("--model", default="packaged:SmolLM2-135M-Instruct")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        write_articles(Path(tmp), args.articles)
        plan = build_plan(tmp, args.n, args.mix, seed=0)
    spec = choose_model(args.model)
    t0 = time.perf_counter()
    with ray_complete(spec) as complete:
        complete([plan.generation_request(plan.questions[0])], "warm-up (model load)")
        load_s = time.perf_counter() - t0
        result = run_plan(plan, complete, model_label(spec))
        free = [replace(plan.generation_request(q), json_schema=None) for q in plan.questions]
        t1 = time.perf_counter()
        baseline = complete(free, "baseline: same prompts, no schema")
        base_s = time.perf_counter() - t1
    minutes = result.seconds / 60
    write_s = result.phase_seconds["write"]
    base_tokens = sum(c.completion_tokens for c in baseline)
    counts = result.counts()
    report = {
        "model": result.model,
        "documents": len(plan.extraction.documents),
        "passages": len(plan.passages),
        "asked": len(plan.questions),
        "kept": len(result),
        "kept_by_type": {t: c["kept"] for t, c in counts.items()},
        "kept_questions": [f"{r['question']} -> {r['answer']}" for r in result],
        "asked_by_type": {t: c["asked"] for t, c in counts.items()},
        "drop_reasons": {f"{t}: {r}": n for (t, r), n in result.drop_reasons().items()},
        "load_s": round(load_s, 1),
        "synth_s": round(result.seconds, 1),
        "llm_calls": result.calls,
        "kept_per_minute": round(len(result) / minutes, 2),
        "asked_per_minute": round(len(plan.questions) / minutes, 2),
        "write_s": round(result.phase_seconds["write"], 1),
        "check_s": round(result.phase_seconds["check"], 1),
        "write_tokens_per_s": round(result.completion_tokens["write"] / write_s, 1),
        "baseline_write_s": round(base_s, 1),
        "baseline_tokens_per_s": round(base_tokens / base_s, 1),
        "constrained_vs_free_tokens_per_s": round(
            (result.completion_tokens["write"] / write_s) / (base_tokens / base_s), 2
        ),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
