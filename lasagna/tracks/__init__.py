"""lasagna.tracks: the registry of the kinds of evaluation lasagna runs.

A track is data plus a few methods, read by the plan and the engine; none of them branches
on a track's name:
- what it reads (`reads`: QUESTIONS, or TEST_CASES for judge files) and what the data must
  hold (`needs()` / `refusals()`: the capability check and its refusal message);
- its pipeline: `input_columns()`, then `stages()` (a list of `lasagna.stages.stage.Stage`:
  callable, constructor kwargs, resources key, input and output columns), run with Ray
  Data by lasagna.engine.trials; `prepare()` does driver-side work first (an index, the
  run's pooled engine of `engine_field`);
- `asks()`: the actor pools a trial holds at once, summed against the cluster before Ray
  starts (lasagna.tracks.placement: refused, or run in two phases with `later_stages()`);
- `aggregate()`: the per-row table -> the trial's metrics, counts, timings and extras;
- its metrics' names, sort direction and format in lasagna.metrics.catalog, and its summary.

    retrieval.py    rows -> Search -> score            (retrievers:)
    generation.py   rows [-> Search -> attach] -> Generate [-> cases -> Judge ...] -> score
                                                       (generators:, judged by judges:)
    judge.py        test cases -> Judge                (judges: on judge files)
    sdk.py          datapoints x trials -> Executor -> evaluators   (evaluate(); no sweep key)
                    (runs its rows itself, `run_rows`, each batch checkpointed as it returns)

How a new kind of evaluation plugs in:
1. Data: a loader gives the rows; say which (`reads`) and teach lasagna.sweep.plan's loader
   choice that kind, if it is new; `refusals()` names what the rows lack.
2. System: a config in lasagna.systems with identity() (model file / prompt hashes),
   with_resources() on its stage's resources key, checks() and a display name.
3. Track: a module here with a `Track` subclass (name, systems_field, stages, aggregate)
   and one `register(...)` line in registry.py. Its stages add their own prefixed columns
   (`check_pipeline` refuses a stage that would overwrite another's); a heavy model is
   pooled by naming its field in `engine_field`.
4. Results: its columns in lasagna.results.schema, its metrics in the catalog; keys, resume,
   leaderboards, compare, export, SQL and the report then work unchanged.

May import: data, systems, the stage library (lasagna.stages), metrics, models,
judges, retrieval, common. Imported by sweep (plan), engine (runner) and cli; never by data,
systems, models, retrieval, judges or metrics.
"""

from lasagna.tracks.base import QUESTIONS, TEST_CASES, Aggregate, Prepared, Track, TrialSetup
from lasagna.tracks.registry import (
    get_track,
    register,
    require_track,
    track_names,
    track_problems,
    tracks,
)

__all__ = [
    "QUESTIONS",
    "TEST_CASES",
    "Aggregate",
    "Prepared",
    "Track",
    "TrialSetup",
    "get_track",
    "register",
    "require_track",
    "track_names",
    "track_problems",
    "tracks",
]
