"""Judge configs: a judge benchmark (lasagna/judges) run by a judge model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, field_validator

from lasagna.models.registry import check_model
from lasagna.models.spec import ModelSpec, StageResources
from lasagna.systems.base import ResourcesBase, SystemConfig, register_stage

register_stage("judge", "judge model actors")

JUDGE_MODEL = ModelSpec(max_tokens=256, max_model_len=4096, resources=StageResources(batch_size=16))


class JudgeSystem(SystemConfig):
    """A judge benchmark run by a judge model: `{benchmark: faithfulness, model: {...},
    parameters: {threshold: 0.7}}` (the judge run's parameters)."""

    track = "judge"
    kind: Literal["judge"] = "judge"
    name: str | None = None
    benchmark: str  # a judge benchmark id (see lasagna.judges.registry)
    model: ModelSpec = JUDGE_MODEL
    parameters: dict[str, str | int | float | bool | list[str]] = Field(default_factory=dict)

    @field_validator("benchmark")
    @classmethod
    def _known_benchmark(cls, value: str) -> str:
        from lasagna.judges.registry import get_benchmark

        try:
            return get_benchmark(value).ID
        except KeyError as err:
            raise ValueError(err.args[0]) from None

    @field_validator("parameters")
    @classmethod
    def _known_parameters(cls, value: dict) -> dict:
        from lasagna.judges.params import parse_params

        _, problems = parse_params(value)
        if problems:
            raise ValueError("; ".join(f"{p.message} ({p.fix})" for p in problems))
        return value

    @property
    def params(self):
        from lasagna.judges.params import parse_params

        return parse_params(self.parameters)[0]

    @property
    def uses_model(self) -> bool:
        """False for a code judge (a benchmark without prompts): no model is checked,
        hashed into its key or loaded."""
        from lasagna.judges.registry import uses_model

        return uses_model(self.benchmark)

    def describe(self) -> str:
        if not self.uses_model:
            return self.benchmark
        return f"{self.benchmark}:{self.model.model.removeprefix('packaged:')}"

    def identity(self) -> dict[str, Any]:
        out = super().identity()
        if not self.uses_model:
            out.pop("model", None)  # a code judge's results do not depend on a model
        return out

    def model_identity(self) -> dict[str, Any] | None:
        """The judge model's identity (files, backend, sampling) + prompts and parameters."""
        from lasagna.judges.registry import identity
        from lasagna.models.identity import model_identity

        judge = identity(self.benchmark, self.params)
        if not self.uses_model:
            return {"judge": judge}
        prompts = json.dumps(judge["prompts"], sort_keys=True)
        return {"model": model_identity(self.model, prompts), "judge": judge}

    def with_resources(self, resources: ResourcesBase) -> JudgeSystem:
        return self.model_copy(update={"model": self.model.with_resources(resources, "judge")})

    def repeats_differ(self) -> bool:
        """Judges answer greedily (a sampled judge model is refused)."""
        return False

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        if not self.uses_model:
            return []
        from lasagna.models.structured import check_structured_sampling

        return [
            lambda: check_structured_sampling(self.model),
            lambda: check_model(self.model, prepare=prepare),
        ]

    def checks_at(self, prepare: bool = True) -> list[tuple[tuple[str, ...], Callable[[], None]]]:
        return [(("model",), check) for check in self.checks(prepare)]
