"""The base of every system config: strict pydantic, stage resources, identity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel

from lasagna.models.spec import StageResources, Strict

STAGES = ("retrieve", "encode", "search", "generate", "judge")


class Resources(Strict):
    """A sweep's defaults for the stages' actor pools; a system's own explicit values win."""

    retrieve: StageResources | None = None  # BM25 search actors
    encode: StageResources | None = None  # dense encoders (documents and questions)
    search: StageResources | None = None  # faiss search actors
    generate: StageResources | None = None  # generation model actors
    judge: StageResources | None = None  # judge model actors

    def for_stage(self, stage: str, own: StageResources | None = None) -> StageResources:
        """The resources of `stage`: sweep defaults, overlaid with `own`'s explicit keys."""
        if stage not in STAGES:
            raise KeyError(f"unknown stage '{stage}' (stages: {', '.join(STAGES)})")
        base = getattr(self, stage) or StageResources()
        if own is None:
            return base
        explicit = {k: getattr(own, k) for k in own.model_fields_set}
        return base.model_copy(update=explicit)

    def apply(self, stage: str, own: StageResources, written: bool) -> StageResources:
        """A system's resources for `stage` with the sweep's defaults applied: what the user
        wrote on the system (`written`) wins over the sweep's keys, which win over the
        system's built-in default (e.g. BM25's batch_size 256)."""
        sweep = getattr(self, stage)
        if sweep is None:
            return own
        merged = own.model_copy(update={k: getattr(sweep, k) for k in sweep.model_fields_set})
        if written:
            merged = merged.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})
        return merged

    def on(self, owner: BaseModel, field: str, stage: str) -> StageResources:
        """`owner.<field>` (a StageResources) with the sweep's `stage` defaults applied."""
        return self.apply(stage, getattr(owner, field), field in owner.model_fields_set)


def placement_free(value: Any) -> Any:
    """A config as plain JSON without stage placement (CPUs, GPUs, actors, batch sizes), so
    moving a sweep from a laptop to a cluster keeps its keys."""
    if isinstance(value, BaseModel):
        return {
            name: placement_free(getattr(value, name))
            for name in type(value).model_fields
            if not isinstance(getattr(value, name), StageResources)
        }
    if isinstance(value, list | tuple):
        return [placement_free(v) for v in value]
    if isinstance(value, dict):
        return {str(k): placement_free(v) for k, v in value.items()}
    return value


class SystemConfig(Strict):
    """What every system config provides; subclasses set `track` and override the rest."""

    track: ClassVar[str] = ""

    def display_name(self) -> str:
        """The name shown in tables: the configured name, else a short description."""
        return getattr(self, "name", None) or self.describe()

    def describe(self) -> str:
        return str(getattr(self, "kind", type(self).__name__))

    def model_identity(self) -> dict[str, Any] | None:
        """The identity of the models it runs (file hashes, prompt hash); None: no model."""
        return None

    def identity(self) -> dict[str, Any]:
        """What the trial key hashes: the placement-free config plus the model identity."""
        out = placement_free(self)
        model = self.model_identity()
        if model is not None:
            out["model_identity"] = model
        return out

    def with_resources(self, resources: Resources) -> SystemConfig:
        """The config with the sweep's stage defaults applied (explicit values win)."""
        return self

    def checks(self, prepare: bool = True) -> list[Callable[[], None]]:
        """Checks (model resolves, key set) that raise UserError; run before Ray.
        prepare=False: look a packaged model up without converting it."""
        return []


def display_name(system: BaseModel) -> str:
    """The name a system shows in tables (see SystemConfig.display_name)."""
    if isinstance(system, SystemConfig):
        return system.display_name()
    return getattr(system, "name", None) or str(getattr(system, "kind", type(system).__name__))
