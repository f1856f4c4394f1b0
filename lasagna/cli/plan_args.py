"""Turn `benchmark run/plan` arguments into a Plan: a data file with a profile (or judges),
or a sweep YAML. Bad input is refused here, before Ray or any model is imported."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from lasagna.errors import Problem, UserError


def _is_sweep(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


def parse_filters(items: list[str] | None) -> dict[str, object] | None:
    """`--filter key=value` (repeatable; `key=a,b` accepts either). Values are YAML 1.2
    scalars (lasagna.data.select.scalar_of), so `--filter year=2020` matches the number
    2020 and `--filter label=yes` the string "yes"."""
    from lasagna.data.select import scalar_of

    if not items:
        return None
    filters: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(
                Problem(
                    f"--filter {item!r} is not KEY=VALUE",
                    field="--filter",
                    fix="write e.g. --filter question_type=multihop",
                )
            )
        parts = [scalar_of(v.strip()) for v in value.split(",")]
        filters[key] = parts if len(parts) > 1 else parts[0]
    return filters


def positive_int(flag: str) -> Callable[[str], int]:
    """An argparse type: a whole number >= 1, refused naming the flag (exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a positive whole number (write e.g. {flag} 50, or leave it out)"
            )
        return value

    return parse


def non_negative(flag: str, kind: type = int, zero: str = "") -> Callable[[str], float]:
    """An argparse type: a number >= 0 (`kind`: int or float; `zero`: what 0 means), refused
    naming the flag (exit 2)."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = -1
        if not value >= 0:  # NaN too
            what = "whole number" if kind is int else "number"
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a {what} >= 0 (write e.g. {flag} {kind(5)}"
                + (f"; {zero}" if zero else "")
                + ")"
            )
        return value

    return parse


def plan_from_args(args: argparse.Namespace, capacity: dict[str, float] | None = None):
    """The plan of `run`/`plan`, or one UserError with every problem found: the data, the
    systems, every model (looked up), and with `capacity` (the cluster's resources) every
    trial's placement."""
    from lasagna.sweep import build_plan, load_sweep

    if getattr(args, "judge", None):
        return _judge_plan_from_args(args, capacity)
    if _is_sweep(args.target):
        for opt in ("split", "n_samples", "name", "filter", "corpus"):
            if getattr(args, opt, None):
                raise UserError(
                    Problem(
                        f"--{opt.replace('_', '-')} applies to a data file, not to a sweep",
                        file=args.target,
                        fix="set it on the benchmark entry in the sweep YAML",
                    )
                )
        sweep, base = load_sweep(args.target)
        updates = {
            k: v
            for k, v in (("profile", args.profile), ("trials", args.trials), ("seed", args.seed))
            if v is not None
        }
        if updates:
            sweep = sweep.model_copy(update=updates)
    else:
        if not os.path.exists(args.target):
            raise UserError(
                Problem(
                    "no such file or folder",
                    file=args.target,
                    fix=f"check the path; a relative path is read from the current folder "
                    f"({os.getcwd()})",
                )
            )
        sweep, base = _file_sweep(args, args.profile or "speed")
    if args.output:  # a relative --output is read from the current folder, like DATA
        out = args.output if "://" in args.output else os.path.abspath(args.output)
        sweep = sweep.model_copy(update={"output": out})
    if getattr(args, "no_cache", False):
        sweep = sweep.model_copy(update={"cache": False})
    try:
        plan = build_plan(sweep, base, check_models=True, capacity=capacity)
    except UserError as err:
        if _is_sweep(args.target):
            raise
        raise _for_one_file(err, args, args.profile or "speed") from err
    from lasagna.sweep.notes import repeat_notes, selection_notes

    notes = selection_notes(plan, single_file=not _is_sweep(args.target))
    notes += repeat_notes(plan, flag=getattr(args, "trials", None) is not None)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return plan


_FLAGS = {
    "n_samples": "--n-samples",
    "split": "--split",
    "filters": "--filter",
    "corpus": "--corpus",
}


def _file_sweep(args: argparse.Namespace, profile: str):
    """(sweep, base dir) of DATA run with `profile` and the data flags."""
    from lasagna.sweep import sweep_for_path

    return sweep_for_path(
        args.target,
        profile,
        split=args.split,
        n_samples=args.n_samples,
        name=args.name,
        filters=parse_filters(args.filter),
        seed=args.seed,
        trials=args.trials,
        corpus=getattr(args, "corpus", None),
    )


def _profiles_that_fit(args: argparse.Namespace, tried: str) -> list[str]:
    """The other profiles whose systems the data can run (planned, no model looked up)."""
    from lasagna.sweep import build_plan
    from lasagna.sweep.profiles import list_profiles

    fit = []
    for name in list_profiles():
        if name == tried:
            continue
        try:
            build_plan(*_file_sweep(args, name))
        except UserError:
            continue
        fit.append(name)
    return fit


def _for_one_file(err: UserError, args: argparse.Namespace, profile: str) -> UserError:
    """The plan speaks of a sweep's `benchmarks[0]`; a single data file has no sweep, so
    say the same thing about the file the user named. When the profile's systems are what
    the data cannot run, say which profiles it can."""
    import dataclasses

    target = args.target

    problems = [
        dataclasses.replace(
            p,
            where=None if p.where == "benchmarks[0]" else p.where,
            message=p.message.removeprefix("benchmarks[0] x "),
            field=_FLAGS.get(p.field or "", p.field)
            if not (p.field or "").startswith("filters.")
            else f"--filter {p.field.removeprefix('filters.')}",
        )
        for p in err.problems
    ]
    title = err.title
    if title and "the sweep's benchmarks" in title:
        title = f"{len(problems)} problem(s) with {target}"
    unsupported = any(p.field == "track" for p in problems)  # lasagna.tracks.registry
    fit = _profiles_that_fit(args, profile) if unsupported else []
    if fit:
        named = " or ".join(f"--profile {name}" for name in fit)
        problems.append(
            Problem(
                f"the data cannot run the systems of --profile {profile}; it can run {named}",
                file=target,
                field="--profile",
                fix=f"lasagna benchmark {getattr(args, 'command', 'run')} {target} "
                f"--profile {fit[0]}",
            )
        )
    return UserError(problems, title=title)


def _judge_plan_from_args(args: argparse.Namespace, capacity: dict[str, float] | None = None):
    """`run FILE --judge ID ...`: one judge file, the judges asked for, no profile."""
    from lasagna.sweep import build_plan, sweep_for_path
    from lasagna.sweep.judge_plan import judge_systems

    if _is_sweep(args.target) or args.profile or args.split:
        raise UserError(
            Problem(
                "--judge runs a judge file; --profile, --split and sweep files do not apply",
                field="--judge",
                fix="in a sweep, list the judges under judges: instead",
            )
        )
    judges = judge_systems(args.judge, args.judge_model, args.judge_backend, args.param)
    sweep, base = sweep_for_path(
        args.target,
        None,
        n_samples=args.n_samples,
        name=args.name,
        filters=parse_filters(args.filter),
        seed=args.seed,
        trials=args.trials,
    )
    update: dict = {"judges": judges}
    if args.output:
        update["output"] = str(args.output)
    if getattr(args, "no_cache", False):
        update["cache"] = False
    return build_plan(sweep.model_copy(update=update), base, check_models=True, capacity=capacity)


def cluster_address(args: argparse.Namespace) -> str | None:
    """The cluster `--address` / RAY_ADDRESS names (None: an in-process Ray)."""
    address = getattr(args, "address", None) or os.environ.get("RAY_ADDRESS") or None
    return None if address == "local" else address


def cluster_with_max_nodes(args: argparse.Namespace) -> str | None:
    """`cluster_address`, after `--max-nodes` (an autoscaling cluster's node groups) is
    checked and set as LASAGNA_MAX_NODES for the plan and every driver this run starts."""
    from lasagna.stages import autoscaling

    address = cluster_address(args)
    text = getattr(args, "max_nodes", None)
    if text is None:
        return address
    if not address:
        raise UserError(
            Problem(
                "names the nodes an autoscaling cluster can add, but no cluster is named: an "
                "in-process Ray never grows",
                field=autoscaling.FLAG,
                fix="add --address (or set RAY_ADDRESS), or leave --max-nodes out",
            )
        )
    autoscaling.parse_groups(text)  # a bad group is refused before anything connects
    os.environ[autoscaling.ENV] = text
    return address
