"""`lasagna benchmark synthesize`: a development set of questions from your documents."""

from __future__ import annotations

import argparse
import os
import sys

from lasagna.errors import Problem, UserError


def cmd_synthesize(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lasagna.knowledge_evaluation_sdk.synthesize import plan_synthesis, synthesize, write_jsonl
    from lasagna.synth.model_choice import MODEL_VARIABLE, check_synthesis_model, choose_model
    from lasagna.synth.output import refuse_existing
    from lasagna.synth.report import render_plan, render_summary

    if args.dry_run:
        if args.out:  # the run that follows would fail at its end
            refuse_existing(args.out, args.force)
        if args.model or os.environ.get(MODEL_VARIABLE):  # a model named: it must resolve
            check_synthesis_model(choose_model(args.model))
        render_plan(plan_synthesis(args.folder, args.n, args.mix, args.seed), Console())
        print("dry run: no model loaded, no LLM called, nothing written")
        return 0
    if not args.out:
        raise UserError(
            Problem(
                "--out is required", field="--out", fix="add --out my_bench.jsonl, or --dry-run"
            )
        )
    refuse_existing(args.out, args.force)
    result = synthesize(
        args.folder,
        args.n,
        args.mix,
        args.seed,
        args.model,
        address=args.address,
        cache=not args.no_cache,
    )
    render_plan(result.plan, Console(stderr=True))
    render_summary(result, Console())
    if not result:
        print(
            "error: no question passed the checks (reasons above); nothing written. Fix: a "
            "stronger model (--model a model folder or cached Hugging Face id, on GPUs, or an "
            "API model): the packaged 135M model keeps few questions",
            file=sys.stderr,
        )
        return 1
    write_jsonl(result, args.out, overwrite=args.force)
    print(f"wrote {len(result)} rows to {args.out}")
    return 0


def register(bsub) -> None:
    p = bsub.add_parser(
        "synthesize",
        help="write a development set of questions from your documents with an LLM",
        description="Read every .md, .txt, PDF, DOCX and HTML file under FOLDER, cut it into "
        "200-word passages, have an LLM write factoid, multihop and unanswerable questions, "
        "check each with a second call, and write the kept rows as JSONL. Local models run "
        "keyless on vLLM in Ray actors; API models need their key. Synthetic sets are for "
        "development, not for claims (docs/synthesis.md).",
    )
    p.add_argument("folder", help="the folder holding your documents (read recursively)")
    p.add_argument("--n", type=int, default=200, help="questions to ask for (default: 200)")
    p.add_argument("--out", help="the JSONL file to write (required unless --dry-run)")
    p.add_argument(
        "--mix",
        default="factoid=0.6,multihop=0.3,unanswerable=0.1",
        help="share of each question type, summing to 1 (default: %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the passage choice (default: 0)")
    p.add_argument(
        "--model",
        help="packaged:SmolLM2-135M-Instruct, a model folder, a cached Hugging Face id, or "
        "an API model (gpt-..., claude-..., openai:NAME); default: $MODEL_NAME",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan and a token estimate; load no model, write nothing",
    )
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument(
        "--no-cache",
        action="store_true",
        dest="no_cache",
        help="compute every model call again (default: reuse $LASAGNA_CACHE/model-calls)",
    )
    p.add_argument(
        "--address",
        help="Ray address to join (default: RAY_ADDRESS, else an in-process Ray on loopback)",
    )
    p.set_defaults(handler=cmd_synthesize)
