"""lasagna.results: the result store, leaderboard, comparisons, TREC export and SQL.

Each CLI command has a function returning data and a `render_*` function printing it.
"""

from lasagna.results.compare import Comparison, ComparisonLine, compare
from lasagna.results.compare_render import render_comparison
from lasagna.results.export import export_trec
from lasagna.results.leaderboard import Group, LeaderboardLine, leaderboard
from lasagna.results.leaderboard_render import render_leaderboard
from lasagna.results.model import SCHEMA_VERSION, TrialMeta, TrialResult, system_id
from lasagna.results.show import render_run, render_runs
from lasagna.results.sql import sql
from lasagna.results.sql_output import render_table
from lasagna.results.store import (
    Run,
    RunSummary,
    list_runs,
    load_trial,
    new_run_id,
    open_run,
    remove_stale_temps,
    save_trial,
    write_run,
)

__all__ = [
    "SCHEMA_VERSION",
    "Comparison",
    "ComparisonLine",
    "Group",
    "LeaderboardLine",
    "Run",
    "RunSummary",
    "TrialMeta",
    "TrialResult",
    "compare",
    "export_trec",
    "leaderboard",
    "list_runs",
    "load_trial",
    "new_run_id",
    "open_run",
    "remove_stale_temps",
    "render_comparison",
    "render_leaderboard",
    "render_run",
    "render_runs",
    "render_table",
    "save_trial",
    "sql",
    "system_id",
    "write_run",
]
