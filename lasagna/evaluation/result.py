"""What `evaluate()` returns (lasagna.evaluation.api): the evaluation's ids, averages,
counts, run folder and its trials, with the averages per slice of the metadata (`by`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class EvaluationResult:
    """What `evaluate()` returns: ids, per-dimension averages, counts and the run folder."""

    evaluation_id: str
    name: str
    group_name: str | None
    averages: dict[str, float]
    n_trials: int
    n_errors: int
    run_dir: str
    # each trial's evaluation_trials record, plus `judgements`: what each LLM judge said
    trials: list[dict[str, Any]] = field(repr=False, default_factory=list)
    # a line per LLM judge whose rows were scored without being judged (no claims found,
    # every row alike): its average says little (lasagna.judges.degenerate)
    warnings: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [t for t in self.trials if t["error"]]

    def by(self, key: str) -> dict[str, dict[str, float]]:
        """Averages per slice of the datapoints' metadata `key` (as `lasagna results show
        EVAL --by KEY`; `KEY:N` cuts its numbers into N bins, lasagna.data.slicing):
        {slice: {"n": trials, dimension: mean, ...}}, the largest slice (or lowest bin)
        first. `n` counts the slice's trials with a score (as the CLI's n): a failed trial
        has none, so it is in no mean."""
        from lasagna.data.select import metadata_value
        from lasagna.data.slicing import SliceKey, slices

        by = SliceKey.parse(key)
        values = {
            str(i): metadata_value(json.loads(t.get("metadata") or "{}"), by.key)
            for i, t in enumerate(self.trials)
        }
        out = {}
        for value, ids in slices(values, by).items():
            scores = [self.trials[int(i)].get("scores") or {} for i in ids]
            dims = {d: [v for s in scores if _scored(v := s.get(d))] for d in self.averages}
            n = sum(any(_scored(s.get(d)) for d in self.averages) for s in scores)
            out[value] = {"n": n} | {d: sum(v) / len(v) for d, v in dims.items() if v}
        return out


def _scored(value: Any) -> bool:
    """A score an evaluator gave (not missing, not NaN)."""
    return value is not None and value == value
