"""What a plan is made of: `Trial`s (the unit the engine runs and resume skips) and the
`Plan` holding them. Built by lasagna.sweep.plan."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna.sweep.benchmarks import PlannedBenchmark
from lasagna.sweep.schema import Sweep
from lasagna.systems import SystemConfig


@dataclass(frozen=True)
class Trial:
    """One system on one benchmark, one repeat: the unit the engine runs and resume skips."""

    key: str
    comparability_key: str
    benchmark_index: int
    benchmark_name: str
    track: str  # a registered track's name ("retrieval", "generation", ...)
    system: SystemConfig  # a Retriever or Generator config from lasagna.systems
    system_name: str
    system_index: int  # position in the sweep's list of the track's systems
    seed: int
    repeat: int
    selection: dict[str, Any]  # split, n_samples, filters, sample_seed
    system_config: dict[str, Any]  # what the key hashed (placement-free config + identity)
    judges: tuple[Any, ...] = ()  # JudgeSystems scoring a generator's answers (judged generation)


@dataclass(frozen=True)
class Plan:
    sweep: Sweep  # with its profile applied
    base_dir: Path
    output: str  # a local folder (absolute) or a URI
    benchmarks: list[PlannedBenchmark]
    trials: list[Trial]

    @property
    def call_cache(self) -> str | None:
        """Where model calls are cached (lasagna.cache.roots); None: off."""
        from lasagna.cache import model_calls_location

        return model_calls_location(self.sweep.cache, self.output, self.base_dir)

    @property
    def keys(self) -> list[str]:
        return [t.key for t in self.trials]

    def pending(self, done_keys: Iterable[str]) -> list[Trial]:
        done = set(done_keys)
        return [t for t in self.trials if t.key not in done]

    def run_fields(self, trials: list[Any]) -> dict[str, Any]:
        """Manifest fields a plan adds beside the engine's (an evaluation's summary); a
        sweep's are all the engine's."""
        return {}

    def status_facts(self) -> dict[str, Any]:
        """What the run's status file says of it beside the engine's facts."""
        return {}
