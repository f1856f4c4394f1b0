"""Judge benchmarks by id, what each needs from the data, and the refusals."""

from __future__ import annotations

import difflib
from types import ModuleType
from typing import Any

from lasagna.errors import Problem
from lasagna.judges import (
    contextual_precision,
    contextual_recall,
    contextual_relevancy,
    conversation_completeness,
    correctness,
    faithfulness,
    hallucination,
    knowledge_retention,
    relevancy,
    role_adherence,
    summarization,
)
from lasagna.judges.params import JudgeParams
from lasagna.judges.prompts import prompt_versions

_MODULES = (
    faithfulness,
    relevancy,
    hallucination,
    correctness,
    summarization,
    conversation_completeness,
    role_adherence,
    knowledge_retention,
    contextual_precision,
    contextual_recall,
    contextual_relevancy,
)
BENCHMARKS: dict[str, ModuleType] = {m.ID: m for m in _MODULES}
SINGLE_TURN = tuple(m.ID for m in _MODULES if "turns" not in m.REQUIRED)
MULTI_TURN = tuple(m.ID for m in _MODULES if "turns" in m.REQUIRED)


def get_benchmark(benchmark_id: str) -> ModuleType:
    """The module of a benchmark id; KeyError with a suggestion otherwise."""
    if benchmark_id in BENCHMARKS:
        return BENCHMARKS[benchmark_id]
    guess = benchmark_id.replace("_", "-").lower()
    if guess in BENCHMARKS:
        return BENCHMARKS[guess]
    raise KeyError(unknown_benchmark(benchmark_id))


def unknown_benchmark(benchmark_id: str) -> str:
    close = difflib.get_close_matches(benchmark_id, list(BENCHMARKS), n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"unknown judge benchmark '{benchmark_id}' ({hint}known: {', '.join(BENCHMARKS)})"


def identity(benchmark_id: str, params: JudgeParams) -> dict[str, Any]:
    """What a judge's results depend on besides its model: the prompts and the parameters."""
    module = get_benchmark(benchmark_id)
    return {
        "benchmark": module.ID,
        "prompts": prompt_versions(module.PROMPTS),
        "parameters": params.as_dict(),
    }


def missing_by_row(
    benchmark_id: str, cases: list[dict[str, Any]], params: JudgeParams
) -> dict[str, list[str]]:
    """required column -> ids of rows without a value for it (role via parameter counts)."""
    module = get_benchmark(benchmark_id)
    out: dict[str, list[str]] = {}
    for column in module.REQUIRED:
        if column == "chatbot_role" and params.chatbot_role:
            continue
        lacking = [c["id"] for c in cases if not c.get(column)]
        if lacking:
            out[column] = lacking
    return out


def support_reason(
    benchmark_id: str, cases: list[dict[str, Any]], params: JudgeParams
) -> str | None:
    """Why the rows cannot run this benchmark, with the fix; None when they can."""
    missing = missing_by_row(benchmark_id, cases, params)
    if not missing:
        return None
    parts = []
    for column, ids in missing.items():
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        if len(ids) == len(cases):
            parts.append(f"no '{column}' column")
        else:
            parts.append(f"{len(ids)} row(s) have no '{column}': {shown}")
    reason = "; ".join(parts)
    if "chatbot_role" in missing:
        reason += (
            "; role-adherence requires a chatbot_role: add a chatbot_role column (per row) "
            "or pass the chatbot_role parameter (--param chatbot_role=...)"
        )
    return reason


def refusals(
    benchmark_ids: list[str], cases: list[dict[str, Any]], params: JudgeParams, file: str
) -> list[Problem]:
    """Every benchmark asked for that the file cannot support, before any model loads."""
    problems = []
    for benchmark_id in benchmark_ids:
        if benchmark_id not in BENCHMARKS:
            problems.append(
                Problem(unknown_benchmark(benchmark_id), field="--judge", fix="pick a known id")
            )
            continue
        reason = support_reason(benchmark_id, cases, params)
        if reason:
            problems.append(
                Problem(
                    f"cannot run the {benchmark_id} judge benchmark: {reason}",
                    file=file,
                    field=get_benchmark(benchmark_id).REQUIRED[-1],
                    fix=f"give every row {', '.join(get_benchmark(benchmark_id).REQUIRED)}",
                )
            )
    return problems
