"""Registers a metric, then a judge benchmark whose PRIMARY is not one of its outputs: the
registry refuses the judge, and the metric registered before it is taken back."""

from types import SimpleNamespace

from lasagna.judges.registry import register_benchmark
from lasagna.metrics import catalog

catalog.register("broken_score", "judge", "a metric of a plugin that does not load")
register_benchmark(
    SimpleNamespace(
        ID="broken",
        NAME="Broken",
        REQUIRED=("actual_output",),
        OPTIONAL=(),
        OUTPUT_METRICS=("broken_score",),
        PRIMARY="missing_score",
        HIGHER_IS_BETTER=True,
        PROMPTS=(),
        judge=lambda case, params: iter(()),
    )
)
