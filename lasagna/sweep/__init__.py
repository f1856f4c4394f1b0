"""lasagna.sweep: the sweep YAML (schema, profiles) and its plan of trials with stable keys.

sweep, base_dir = load_sweep("configs/sweeps/x.yaml")   # or sweep_for_path(DATA, "speed")
plan = build_plan(sweep, base_dir)                       # applies the profile, loads data
for trial in plan.pending(done_keys): ...
"""

from lasagna.sweep.keys import comparability_key, trial_key
from lasagna.sweep.plan import Plan, PlannedBenchmark, Trial, build_plan
from lasagna.sweep.profiles import list_profiles, load_profile, resolve, sweep_for_path
from lasagna.sweep.render import render_plan
from lasagna.sweep.schema import BenchmarkEntry, Sweep, load_sweep

__all__ = [
    "BenchmarkEntry",
    "Plan",
    "PlannedBenchmark",
    "Sweep",
    "Trial",
    "build_plan",
    "comparability_key",
    "list_profiles",
    "load_profile",
    "load_sweep",
    "render_plan",
    "resolve",
    "sweep_for_path",
    "trial_key",
]
