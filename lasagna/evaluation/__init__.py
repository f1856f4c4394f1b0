"""lasagna.evaluation: `evaluate()` your own pipeline; datapoints, datasets, traces.

Attributes load lazily so `import lasagna` stays cheap (no Ray, no OpenTelemetry).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Datapoint": "lasagna.evaluation.datapoint",
    "Dataset": "lasagna.evaluation.datapoint",
    "evaluate": "lasagna.evaluation.api",
    "EvaluationResult": "lasagna.evaluation.result",
    "LLMJudge": "lasagna.evaluation.judge",
    "ModelSpec": "lasagna.models.spec",
    "answer_correctness": "lasagna.evaluation.judge",
    "g_eval": "lasagna.evaluation.judge",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'lasagna.evaluation' has no attribute {name!r}")
