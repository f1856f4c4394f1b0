"""Judge speed: judgments/s on N faithfulness rows, lasagna end to end vs the same prompts
sent straight to vLLM in a fresh process.

Rows: the first N answerable SQuAD v2 questions, the reference answer as actual_output, the
paragraph as retrieval_context. lasagna: `run_plan` of a faithfulness judge (Ray Data actor
pool, JudgeStage, one engine call per step per block). Direct: a fresh Python process that
builds `vllm.LLM` itself and sends the identical chat prompts (same texts, schemas,
constrained decoding with the same bounded grammar, temperature 0, same block size),
parsing replies with json.loads.
Both exclude engine start-up. Prints judgments/s of each and lasagna's overhead.

    HF_HUB_OFFLINE=1 python scripts/bench_judges.py            # 40 rows, <= 4 claims: ~3-5 min
    HF_HUB_OFFLINE=1 python scripts/bench_judges.py --rows 200 --max-claims 8   # the full run

Measured, not asserted. On a machine with a GPU the same command gives the GPU figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SQUAD = Path(__file__).resolve().parents[1].parent / "shared/data/squad_v2_dev_subset/dev-v2.0.json"


def faithfulness_rows(path: Path, n: int) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    rows = []
    for article in data:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                if qa.get("is_impossible") or not qa["answers"]:
                    continue
                rows.append(
                    {
                        "id": f"r{len(rows)}",
                        "input": qa["question"],
                        "actual_output": qa["answers"][0]["text"],
                        "retrieval_context": para["context"],
                    }
                )
                if len(rows) == n:
                    return rows
    return rows


def run_lasagna(path: Path, block: int, out: str, max_claims: int) -> dict:
    from lasagna.engine.driver import run_plan
    from lasagna.sweep import build_plan, sweep_for_path
    from lasagna.sweep.judge_plan import judge_systems

    (judge,) = judge_systems(["faithfulness"], params=[f"max_claims={max_claims}"])
    spec = judge.model.model_copy(
        update={"resources": judge.model.resources.model_copy(update={"batch_size": block})}
    )
    judge = judge.model_copy(update={"model": spec})
    sweep, base = sweep_for_path(path, None, output=out)
    t0 = time.perf_counter()
    # no model-call cache: it would answer repeated prompts the direct run computes again
    sweep = sweep.model_copy(update={"judges": [judge], "cache": False})
    (trial,) = run_plan(build_plan(sweep, base)).trials
    wall = time.perf_counter() - t0
    rows = trial.rows.to_pylist()
    busy = sum(r["block_s"] / r["block_rows"] for r in rows)
    span = max(r["block_started_at"] + r["block_s"] for r in rows) - min(
        r["block_started_at"] for r in rows
    )
    return {
        "rows": len(rows),
        "judged": trial.counts["judged"],
        "calls": trial.counts["judge_calls"],
        "invalid": trial.counts["judge_invalid_outputs"],
        "engine_load_s": round(trial.timings["engine_load"], 1),
        "judge_stage_s": round(trial.timings["judge"], 1),
        "busy_s": round(busy, 1),
        "wall_s": round(wall, 1),
        "pipeline_s": round(span, 1),
        "judgments_per_s": trial.counts["judged"] / busy,
        "pipeline_judgments_per_s": trial.counts["judged"] / span,
        "mean_score": trial.metrics.get("faithfulness_score"),
    }


def run_direct(path: Path, block: int, max_claims: int) -> dict:
    """The bare engine, in this (fresh) process: no Ray, no lasagna runner."""
    import os

    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    from vllm import LLM

    from lasagna.judges.base import clean_items
    from lasagna.judges.faithfulness import CLAIMS, VERDICT
    from lasagna.judges.prompts import passages_text
    from lasagna.models.base import ChatRequest, Sampling, with_schema_instruction
    from lasagna.models.packaged import resolve_generator_model
    from lasagna.models.vllm_backend import engine_kwargs, on_gpu, sampling_params
    from lasagna.systems import JUDGE_MODEL

    rows = [json.loads(line) for line in path.read_text().splitlines()]
    gpu = on_gpu()
    t0 = time.perf_counter()
    llm = LLM(**engine_kwargs(JUDGE_MODEL, resolve_generator_model(JUDGE_MODEL), gpu))
    load_s = time.perf_counter() - t0
    tokenizer = llm.get_tokenizer()

    def ask(prompt, fields_list):
        prompts = []
        for fields in fields_list:
            request = ChatRequest(prompt.messages(**fields), json_schema=prompt.schema)
            ids = tokenizer.apply_chat_template(
                with_schema_instruction(request), tokenize=True, add_generation_prompt=True
            )
            prompts.append(
                {"prompt_token_ids": list(ids["input_ids"] if hasattr(ids, "keys") else ids)}
            )
        # lasagna's own translation (the same bounded grammar), not its engine or runner
        params = sampling_params(
            Sampling(temperature=0.0, max_tokens=prompt.max_tokens, json_schema=prompt.schema)
        )
        outputs = llm.generate(prompts, params, use_tqdm=False)
        return [json.loads(o.outputs[0].text) for o in outputs]

    limit = max_claims
    t1 = time.perf_counter()
    judged = 0
    for i in range(0, len(rows), block):
        part = rows[i : i + block]
        claims = [
            clean_items(r["claims"], limit)
            for r in ask(CLAIMS, [{"text": r["actual_output"]} for r in part])
        ]
        fields = [
            {"context": passages_text([row["retrieval_context"]]), "claim": c}
            for row, cs in zip(part, claims, strict=True)
            for c in cs
        ]
        if fields:
            ask(VERDICT, fields)
        judged += len(part)
    busy = time.perf_counter() - t1
    return {
        "rows": judged,
        "engine_load_s": round(load_s, 1),
        "busy_s": round(busy, 1),
        "judgments_per_s": judged / busy,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SQUAD)
    parser.add_argument("--rows", type=int, default=40, help="faithfulness rows (default 40)")
    parser.add_argument("--block", type=int, default=16, help="rows per engine block")
    parser.add_argument(
        "--max-claims", type=int, default=4, help="claims judged per row (default 4; judge's: 8)"
    )
    parser.add_argument("--direct-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.direct_only:
        print(json.dumps(run_direct(args.direct_only, args.block, args.max_claims)))
        return
    from lasagna.models.vllm_backend import on_gpu

    with tempfile.TemporaryDirectory() as tmp:
        cases = Path(tmp) / "faith.jsonl"
        cases.write_text(
            "".join(json.dumps(r) + "\n" for r in faithfulness_rows(args.data, args.rows))
        )
        lasagna = run_lasagna(cases, args.block, str(Path(tmp) / "out"), args.max_claims)
        print("lasagna:", json.dumps(lasagna), flush=True)
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--direct-only",
                str(cases),
                "--block",
                str(args.block),
                "--max-claims",
                str(args.max_claims),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        direct = json.loads(proc.stdout.strip().splitlines()[-1])
        print("direct: ", json.dumps(direct), flush=True)
    overhead = direct["judgments_per_s"] / lasagna["judgments_per_s"] - 1
    pipeline = direct["judgments_per_s"] / lasagna["pipeline_judgments_per_s"] - 1
    from lasagna.models.vllm_backend import vllm_dtype

    device = "GPU" if on_gpu() else f"CPU (vLLM-CPU, {vllm_dtype('auto', gpu=False)})"
    print(
        f"device: {device}; rows {lasagna['rows']}, block {args.block}, "
        f"<= {args.max_claims} claims a row; {lasagna['calls']} lasagna judge calls"
    )
    print(
        f"lasagna {lasagna['judgments_per_s']:.3f} judgments/s (engine busy time), "
        f"direct {direct['judgments_per_s']:.3f}/s: lasagna overhead {overhead:+.1%}"
    )
    print(
        f"lasagna pipeline (first block start to last block end, Ray gaps included) "
        f"{lasagna['pipeline_judgments_per_s']:.3f}/s: overhead {pipeline:+.1%}"
    )
    if not on_gpu():
        print("GPU figure: missing (no GPU on this machine; run the same command on one)")


if __name__ == "__main__":
    main()
