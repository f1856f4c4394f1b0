"""What a track is: the data it needs, its pipeline of stages, its metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from lasagna.errors import Problem

if TYPE_CHECKING:
    import pyarrow as pa

    from lasagna.data.model import Benchmark
    from lasagna.stages.placement import Ask
    from lasagna.stages.pools import Pools
    from lasagna.stages.stage import Stage
    from lasagna.stages.stopwatch import Stopwatch
    from lasagna.systems import Resources

QUESTIONS = "questions"  # what a track's trials read: question data (lasagna.data.load_benchmark)
TEST_CASES = "test_cases"  # or judge test cases (lasagna.data.judge_cases)
DATAPOINTS = "datapoints"  # or an evaluate() call's datapoints (never a sweep's: no YAML field)


@dataclass
class TrialSetup:
    """What the engine hands a track's `prepare` for one trial."""

    benchmark: Benchmark
    system: Any  # the trial's system, the sweep's stage resources applied
    watch: Stopwatch  # times driver-side work ("index", "embedder_load", ...)
    pools: Pools | None = None  # the run's heavy pools; None: each stage loads its own model
    call_cache: str | None = None  # where model calls are cached (lasagna.cache); None: off
    resources: Resources | None = None  # the sweep's stage defaults (for the trial's judges)
    trial: Any = None  # the plan's Trial (lasagna.sweep.trial): its judges, seed, repeat
    # run in two phases (lasagna.stages.placement): `stages`, then the rows materialized, the
    # first phase's engines released, then `later_stages`
    phased: bool = False
    # the trial's checkpoint of finished rows (lasagna.results.partial.TrialParts), for a
    # track that runs its rows itself (`run_rows`) and saves each batch as it returns
    parts: Any = None


@dataclass
class Prepared:
    """What a track's `prepare` made for its stages and its aggregate. Each track subclasses
    it with its own fields (an index path, a pooled engine, ...)."""

    call_cache: str | None = None  # where its model stages cache calls; None: off


@dataclass
class Aggregate:
    """A trial's numbers from its rows: metrics (means), counts, extra timings (seconds),
    and small extras the result keeps (e.g. a judge's prompt hashes)."""

    metrics: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)  # the trial's other tables ("spans")


Column = tuple[str, str, str, str]  # (name, Arrow type as pyarrow spells it, stage, meaning)


class Track:
    """One kind of evaluation. Subclass it, set the class attributes, override the methods,
    and register an instance: one line in lasagna/tracks/registry.py, or in a plugin's
    registry module (lasagna.common.plugins). Everything that depends on the kinds is
    derived from what a track declares here: the sweep's system fields and grids
    (`systems_field`, `system_type`, `grid`), the data's capabilities (`needs`), the row
    columns of the result schema (`columns`), the report's order (registration order) and
    the export formats (`exports`)."""

    name: ClassVar[str]
    systems_field: ClassVar[str]  # the sweep key that lists its systems ("retrievers")
    grid: ClassVar[bool] = True  # a `grid:` entry of its systems field expands (sweep.grid)
    description: ClassVar[str] = ""
    # the row columns its stages write, for the result schema (lasagna.results.schema)
    columns: ClassVar[tuple[Column, ...]] = ()
    exports: ClassVar[tuple[str, ...]] = ()  # row export formats of its trials ("trec")
    kinds: ClassVar[tuple[str, ...]] = ()  # system kinds it accepts; () = any
    kind_label: ClassVar[str] = "kind"  # how refusals name a kind ("generator kind")
    run_timing: ClassVar[str] = "pipeline"  # the timings key of the pipeline's run
    internal_columns: ClassVar[tuple[str, ...]] = ()  # pipeline inputs not kept in the rows
    # the run summary's columns after the metrics: (header, "counts.<key>" | "metrics.<key>")
    summary_columns: ClassVar[tuple[tuple[str, str], ...]] = (("rows", "counts.rows"),)
    # the data its trials read (QUESTIONS or TEST_CASES); lasagna.sweep.plan loads each kind
    # with its loader
    reads: ClassVar[str] = QUESTIONS
    judgeable: ClassVar[bool] = False  # a sweep's judges: may score its rows (judged generation)
    # a trial whose every row failed fails (not checkpointed; lasagna.engine.row_failures)
    fails_when_every_row_fails: ClassVar[bool] = True
    # the system field holding the chat model (a ModelSpec) whose engines the run pools
    engine_field: ClassVar[str | None] = None
    # counts the run's manifest totals over its trials (e.g. judge replies that did not parse)
    run_totals: ClassVar[tuple[str, ...]] = ()
    # the stall watchdog (lasagna.engine.watchdog; None: its defaults): the quiet periods
    # after which it ends a trial (0: never, for rows that run the user's code, of any
    # length: only a wait that cannot fit ends them), and how its fix says to ask for less
    stall_quiet_periods: ClassVar[int | None] = None
    resources_fix: ClassVar[str | None] = None

    def system_type(self) -> Any:
        """The pydantic type of one entry of `systems_field` (a SystemConfig subclass, or an
        annotated union of them); imported here, when a sweep is read, not at import. A
        track a sweep cannot name (reads DATAPOINTS) needs none."""
        raise NotImplementedError

    # ------------------------------------------------------------ data
    def needs(self, kind: str | None) -> tuple[str, ...]:
        """The data needs (lasagna.data.capabilities.NEEDS) a system of `kind` has."""
        return ()

    def need_message(self, need: str, kind: str | None) -> tuple[str, str | None] | None:
        """This track's own wording of an unmet need (reason, fix); None: the data's."""
        return None

    def refusals(
        self, benchmark: Benchmark, kind: str | None = None, system: Any = None
    ) -> list[Problem]:
        """Why this track cannot run a system of `kind` (or `system` itself, when the
        planner knows it) on the data; [] when it can."""
        if self.kinds and kind is not None and kind not in self.kinds:
            return [
                refusal(
                    benchmark,
                    "this request",
                    f"unknown {self.kind_label} '{kind}'",
                    "use one of: " + ", ".join(self.kinds),
                    field=self.kind_label.replace(" ", "."),
                )
            ]
        caps = benchmark.capabilities
        for need in self.needs(kind):
            if not caps.has(need):
                reason, fix = self.need_message(need, kind) or caps.missing[need]
                return [refusal(benchmark, f"the {self.name} track", reason, fix)]
        return []

    # ------------------------------------------------------------ pipeline
    def input_columns(
        self, benchmark: Benchmark, system: Any, prepared: Prepared
    ) -> dict[str, list]:
        """The columns the pipeline starts from (one entry per row, in row order)."""
        raise NotImplementedError

    def block_rows(self, benchmark: Benchmark, system: Any) -> int:
        """Rows per input block (how the rows are split across actors)."""
        return 256

    def prepare(self, setup: TrialSetup) -> Prepared:
        """Driver-side work before the pipeline (build an index, take a pooled engine from
        `setup.pools`); returns what the stages and the aggregate need."""
        return Prepared(call_cache=setup.call_cache)

    def pool_keys(
        self, system: Any, trial: Any = None, resources: Resources | None = None
    ) -> list[str]:
        """The keys of the run's heavy pools a trial of this system uses (kept while trials
        need them); `trial` and `resources`: the plan's trial and the sweep's defaults, for
        what the trial adds to its system (judges)."""
        if self.engine_field is None:
            return []
        from lasagna.stages.pools import engine_pool_keys

        return engine_pool_keys(getattr(system, self.engine_field))

    def asks(
        self, system: Any, trial: Any = None, resources: Resources | None = None, gpus: float = 0
    ) -> list[Ask]:
        """The pools a trial of this system holds at once (lasagna.stages.placement: checked
        against the cluster before Ray starts, so what cannot be placed is refused instead
        of waiting forever); `gpus`: the cluster's. []: not checked. One actor stage:
        lasagna.stages.asks.actor_asks."""
        return []

    def pooled_engine(self, system: Any, pools: Pools | None) -> Any:
        """The run's pool of the system's chat-model engines (started on first use; each
        loads its model on its first call); None without pools, an engine field or a local
        model."""
        if self.engine_field is None:
            return None
        from lasagna.stages.pools import pooled_engine

        return pooled_engine(getattr(system, self.engine_field), pools)

    def prestart(self, system: Any, pools: Pools) -> None:
        """Start loading the light pools this system will use (embedders) without waiting,
        while the trial before it runs; heavy ones (chat engines) wait for their turn."""

    def stages(self, benchmark: Benchmark, system: Any, prepared: Prepared) -> list[Stage]:
        raise NotImplementedError

    def later_stages(self, setup: TrialSetup, prepared: Prepared) -> list[Stage]:
        """A phased trial's second phase (`TrialSetup.phased`): called once the first
        phase's rows are materialized; releases what that phase held, returns the rest."""
        return []

    @property
    def runs_own_rows(self) -> bool:
        """Whether the track runs its rows itself (`run_rows`), saving batches as it goes."""
        return type(self).run_rows is not Track.run_rows

    def run_rows(self, setup: TrialSetup, prepared: Prepared) -> pa.Table | None:
        """The trial's per-row table, for a track whose rows are not Ray Data stages (the
        sdk track: a user's executor on Ray tasks or an actor pool, each batch saved to
        `setup.parts` as it returns); None: the engine runs `stages()` over
        `input_columns()`."""
        return None

    def aggregate(self, rows: pa.Table, benchmark: Benchmark, prepared: Prepared) -> Aggregate:
        """Trial metrics from the per-row table (pure)."""
        raise NotImplementedError

    def catalog_metrics(self, rows: pa.Table, benchmark: Benchmark) -> dict[str, float]:
        """The metrics of this track that the catalog computes (a plugin's metric with a
        `compute`), added to every trial's metrics after `aggregate`."""
        from lasagna.metrics import catalog

        out = {}
        for metric in catalog.computed(self.name):
            try:
                value = metric.compute(rows, benchmark)  # type: ignore[misc]
            except Exception as err:
                raise RuntimeError(f"metric '{metric.name}' failed to compute: {err}") from err
            if value is not None:
                out[metric.name] = float(value)
        return out

    def group_track(self, system: Any) -> str:
        """The track as the comparability key names it (results of one group compare)."""
        return self.name

    # ------------------------------------------------------------ results
    def summary_trials(self, trials: list[Any]) -> list[Any]:
        """The trials of a run that this track's summary table lists."""
        return [t for t in trials if t.track == self.name]

    def summary_table(
        self, trials: list[Any], repeats: bool = True
    ) -> tuple[list[str], list[list[str]]]:
        """The run summary's table of these trials: (headers, rows of cells); a `rep` column
        when `repeats`. A summary metric no trial has (`no_ans_em` of a file without
        unanswerable questions) is left out rather than shown as a column of "-"."""
        import math

        from lasagna.metrics import catalog

        def has(value: Any) -> bool:
            return isinstance(value, int | float) and not math.isnan(value)

        columns = [
            c
            for c in catalog.summary_metrics(self.name)
            if any(has(t.metrics.get(c)) for t in trials)
        ]
        rep = ["rep"] if repeats else []
        heads = ["system", *rep, *columns, *(head for head, _ in self.summary_columns)]
        rows = []
        for t in trials:
            cells = [t.system, *([str(t.repeat)] if repeats else [])]
            cells += [catalog.show(c, t.metrics.get(c)) for c in columns]
            for _, source in self.summary_columns:
                kind, name = source.split(".", 1)
                value = t.metrics.get(name) if kind == "metrics" else t.counts.get(name)
                text = "" if value is None else str(value)
                cells.append(catalog.show(name, value) if kind == "metrics" else text)
            rows.append(cells)
        return heads, rows

    def summary_notes(self, trials: list[Any]) -> list[str]:
        """Lines printed under the run summary's table of these trials (warnings a reader
        must see next to the scores); none by default."""
        return []

    def main_metrics(self) -> list[str]:
        from lasagna.metrics import catalog

        return catalog.main_metrics(self.name)


def refusal(
    benchmark: Benchmark, label: str, reason: str, fix: str | None, field: str = "track"
) -> Problem:
    return Problem(
        f"{benchmark.name} cannot run {label}: {reason}",
        file=benchmark.source,
        field=field,
        fix=fix,
    )
