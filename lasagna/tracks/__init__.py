"""lasagna.tracks: the registry of the kinds of evaluation lasagna runs.

A track declares what data it needs (its `needs`, checked against the data's capabilities,
and the refusal message), the columns its pipeline starts from, its stages (a list of
`lasagna.engine.stage.Stage`: data, run with Ray Data), how its per-row table aggregates
into the trial's metrics, and its main metrics (from `lasagna.metrics.catalog`). The plan,
the engine, capabilities, summaries and leaderboards read the registry; none branches on a
track's name.

    retrieval.py    rows -> Search -> score            (retrievers:)
    generation.py   rows [-> Search -> attach] -> Generate -> score   (generators:)
    judge.py        test cases -> Judge -> formulas    (judges:; planned by sweep/judge_plan,
                    run by engine/judging through `Track.run`)

A new track is a module with a `Track` subclass and one `register(...)` line in
registry.py. How the judge track moves onto the stage layer (its next step):
1. `JudgeTrack`: name "judge", systems_field "judges" (`lasagna.systems.JudgeSystem`:
   identity() with the prompt hashes, with_resources() on the `judge` key, checks());
   `refusals()` / `needs()` say which test-case columns its benchmark needs.
2. `stages()` returns [Generate (when judging a generator's answers), Judge (an actor pool
   holding the judge model: one batched engine call per step of the metric), Score (the
   benchmark's pure formula)]; each stage adds its own prefixed columns ("judge_verdicts",
   "judge_latency_s"), and `check_pipeline` refuses a stage that would overwrite another's.
3. `aggregate()` turns the per-row scores into the trial's metrics, registered in the
   metric catalog (lasagna/metrics/judge_catalog.py; hallucination sorts ascending); the
   judge verdicts go in the trial's "verdicts" table (lasagna.results.schema.TABLES).
4. Drop `run()`: the engine then runs it like every other track, with pooled engines.

May import: data, systems, engine.stage and the engine's stage modules, metrics, models,
retrieval, common. Imported by sweep (plan), engine (runner) and cli; never by data,
systems, models, retrieval or metrics.
"""

from lasagna.tracks.base import Aggregate, Track
from lasagna.tracks.registry import (
    get_track,
    register,
    require_track,
    track_names,
    track_problems,
    tracks,
)

__all__ = [
    "Aggregate",
    "Track",
    "get_track",
    "register",
    "require_track",
    "track_names",
    "track_problems",
    "tracks",
]
