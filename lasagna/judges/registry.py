"""Judge benchmarks by id, what each needs from the data, and the refusals.

A benchmark is a module (see faithfulness.py) or any object with the same names
(lasagna.judges.base.JudgeBenchmark). The in-tree ones are listed below; a plugin's
registry module calls `register_benchmark` (entry point group `lasagna.judges`), which
checks it and puts its output metrics in the metric catalog. A benchmark without prompts
is a code judge: its `judge` returns the metrics without asking a model, and no model is
checked, hashed or loaded for it (`uses_model`).
"""

from __future__ import annotations

import difflib
from types import ModuleType
from typing import Any

from lasagna.common import plugins
from lasagna.errors import Problem
from lasagna.judges import (
    contextual_precision,
    contextual_recall,
    contextual_relevancy,
    conversation_completeness,
    correctness,
    faithfulness,
    g_eval,
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
    g_eval,
)
BENCHMARKS: dict[str, ModuleType] = {m.ID: m for m in _MODULES}  # plugins' are added
SINGLE_TURN = tuple(m.ID for m in _MODULES if "turns" not in m.REQUIRED)
MULTI_TURN = tuple(m.ID for m in _MODULES if "turns" in m.REQUIRED)
_NAMES = {"ID": str, "NAME": str, "REQUIRED": tuple, "OPTIONAL": tuple, "OUTPUT_METRICS": tuple}


def register_benchmark(module: Any) -> Any:
    """Add a judge benchmark (PluginError naming what is wrong with it); its output metrics
    not in the metric catalog yet are added (its PRIMARY one ranks its leaderboards)."""
    from lasagna.data.judge_cases import FIELDS
    from lasagna.metrics import catalog
    from lasagna.models.structured import Prompt

    label = f"judge benchmark {getattr(module, 'ID', module)!r}"
    for name, typ in _NAMES.items():
        if not isinstance(getattr(module, name, None), typ):
            raise plugins.PluginError(f"{label}: {name} must be a {typ.__name__}")
    if not callable(getattr(module, "judge", None)):
        raise plugins.PluginError(f"{label}: it needs judge(case, params), a generator")
    if getattr(module, "PRIMARY", None) not in module.OUTPUT_METRICS:
        raise plugins.PluginError(f"{label}: PRIMARY must be one of its OUTPUT_METRICS")
    prompts = getattr(module, "PROMPTS", ())
    if not isinstance(prompts, tuple) or not all(isinstance(p, Prompt) for p in prompts):
        raise plugins.PluginError(
            f"{label}: PROMPTS must be a tuple of lasagna.models.structured.Prompt"
        )
    columns = [c for c in FIELDS if c not in ("id", "metadata")]
    unknown = [c for c in module.REQUIRED + module.OPTIONAL if c not in columns]
    if unknown:
        raise plugins.PluginError(
            f"{label}: unknown test-case column(s) {', '.join(unknown)} "
            f"(columns: {', '.join(columns)})"
        )
    if module.ID in BENCHMARKS:
        if BENCHMARKS[module.ID] is module:
            return module
        raise plugins.PluginError(f"{label} is registered already (pick another ID)")
    lower = not bool(getattr(module, "HIGHER_IS_BETTER", True))
    for metric in module.OUTPUT_METRICS:
        if catalog.get(metric) is None:
            primary = metric == module.PRIMARY
            catalog.register(
                metric,
                "judge",
                f"{module.NAME}: {metric}" if not primary else f"{module.NAME} (judge score)",
                lower_is_better=lower and primary,
                level="main" if primary else "detail",
                primary=primary,
            )
    BENCHMARKS[module.ID] = module
    plugins.registered(f"judge {module.ID}", lambda: BENCHMARKS.pop(module.ID, None))
    return module


def benchmarks() -> dict[str, ModuleType]:
    """Every judge benchmark by id, plugins' included, in registration order."""
    plugins.load()
    return BENCHMARKS


def uses_model(benchmark_id: str) -> bool:
    """False for a code judge (no prompts): it runs without a judge model."""
    return bool(getattr(get_benchmark(benchmark_id), "PROMPTS", ()))


def get_benchmark(benchmark_id: str) -> ModuleType:
    """The module of a benchmark id; KeyError with a suggestion otherwise."""
    guess = benchmark_id.replace("_", "-").lower()
    found = plugins.lookup(lambda: BENCHMARKS.get(benchmark_id) or BENCHMARKS.get(guess))
    if found is None:
        raise KeyError(unknown_benchmark(benchmark_id))
    return found


def unknown_benchmark(benchmark_id: str) -> str:
    plugins.load()
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


def required_columns(benchmark_id: str, params: JudgeParams) -> tuple[str, ...]:
    """The columns a benchmark needs in every row: its REQUIRED, or what its `required(params)`
    says when that depends on the parameters (g-eval's `fields`)."""
    module = get_benchmark(benchmark_id)
    required = getattr(module, "required", None)
    return tuple(required(params)) if callable(required) else tuple(module.REQUIRED)


def parameter_problems(benchmark_id: str, params: JudgeParams) -> list[Problem]:
    """A benchmark-specific parameter given to a benchmark that does not read it, and what
    the benchmark's own `check_params` refuses (g-eval without a criterion)."""
    module = get_benchmark(benchmark_id)
    reads = getattr(module, "PARAMETERS", ())
    problems = []
    for name in params.own_set():
        if name not in reads:
            owners = [b for b, m in benchmarks().items() if name in getattr(m, "PARAMETERS", ())]
            problems.append(
                Problem(
                    f"the {module.ID} judge does not read the '{name}' parameter",
                    field=name,
                    fix=f"it is a parameter of {', '.join(owners) or 'no judge'}: remove it here",
                )
            )
    check = getattr(module, "check_params", None)
    return problems + (list(check(params)) if callable(check) else [])


def group_name(benchmark_id: str, params: JudgeParams) -> str:
    """The leaderboard group of a judge: its benchmark id, with the benchmark's `group(params)`
    where that says what is judged (g-eval's criterion)."""
    module = get_benchmark(benchmark_id)
    group = getattr(module, "group", None)
    return f"{module.ID}:{group(params)}" if callable(group) else module.ID


def missing_by_row(
    benchmark_id: str, cases: list[dict[str, Any]], params: JudgeParams
) -> dict[str, list[str]]:
    """required column -> ids of rows without a value for it (role via parameter counts)."""
    out: dict[str, list[str]] = {}
    for column in required_columns(benchmark_id, params):
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
        if plugins.lookup(lambda b=benchmark_id: BENCHMARKS.get(b)) is None:
            problems.append(
                Problem(unknown_benchmark(benchmark_id), field="--judge", fix="pick a known id")
            )
            continue
        problems += parameter_problems(benchmark_id, params)
        reason = support_reason(benchmark_id, cases, params)
        if reason:
            needs = required_columns(benchmark_id, params)
            lacking = list(missing_by_row(benchmark_id, cases, params))
            problems.append(
                Problem(
                    f"cannot run the {benchmark_id} judge benchmark: {reason}",
                    file=file,
                    field=", ".join(lacking) or needs[-1],
                    fix=f"give every row {', '.join(needs)}",
                )
            )
    return problems
