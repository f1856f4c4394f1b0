"""The label a system shows in every table: short, and unique within its group.

A label is computed from the system configs of one comparability group (the JSON a trial
stores: the placement-free config, its model identity, its judges), so the plan, the run
summary, `results show`, leaderboards, compare and the report all say the same thing:

1. the base: the system's `name` when it has one, else its kind (`bm25`, `dense`,
   `hybrid`, `rag`, `closed_book`) or, for a judge, its benchmark (`faithfulness`; a
   g-eval judge with its criterion's label, `g-eval:politeness`);
2. then, among the group's systems with the same base, the settings whose value differs,
   each shown where it is not the common value (the one more of them hold than any
   other): `bm25`, `bm25 stemmer=none`, `bm25 k1=0.9 b=0.4` for three BM25 settings, and
   `rag top_k=3`, `rag top_k=5` for two (no common value). A setting is named by the
   shortest end of its path that no other differing setting shares (`retriever.top_k`
   -> `top_k`); a value loses `packaged:` and a path's folders, and a text over 24
   characters is `#` + 8 hex of its sha256. Where a part's kind differs the kind says it
   (`retriever=dense`), not every setting of the two kinds;
3. if two labels are still equal, every differing setting in full (whole paths and
   values, common ones too), and if even that leaves two equal (configs that differ only
   in a model file's hash), each gets ` #` + the start of its system id.

A label is never cut: tables fold a long one over lines instead. Labels depend on the
group: a leaderboard gathering several runs may show a setting that one run alone did not
need (`bm25` in one run, `bm25 k1=0.9` beside another run's `bm25 k1=1.2`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from lasagna.common.digest import canonical_json, json_sha256, text_sha256
from lasagna.systems.base import with_key_defaults

SKIPPED = ("name", "model_identity")  # said by the base, or derived from other settings
LONG = 24  # characters of a text value shown as is; longer: "#" + its hash


def base_label(config: dict[str, Any]) -> str:
    if config.get("name"):
        return str(config["name"])
    if config.get("kind") == "judge" and config.get("benchmark"):
        return _judge_label(config)
    return str(config.get("kind") or "system")


def _judge_label(config: dict[str, Any]) -> str:
    """A judge by its benchmark, and what it judges where the benchmark says (a g-eval
    criterion's label: `g-eval:politeness`)."""
    from lasagna.judges.params import parse_params
    from lasagna.judges.registry import get_benchmark, group_name

    benchmark = str(config["benchmark"])
    try:
        get_benchmark(benchmark)
    except KeyError:  # a plugin's judge that is not installed here
        return benchmark
    return group_name(benchmark, parse_params(config.get("parameters") or {})[0])


def settings(config: dict[str, Any]) -> dict[str, Any]:
    """The config as flat `path -> value` (dicts and lists of dicts opened; a list of plain
    values is one value; a judged generator's judges are their benchmarks)."""
    out: dict[str, Any] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for k, v in with_key_defaults(value).items():
                if k not in SKIPPED:
                    walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
            for i, v in enumerate(value):
                walk(v, f"{path}.{i}")
        else:
            out[path] = value

    for key, value in with_key_defaults(config).items():
        if key == "judges" and isinstance(value, list):
            out[key] = "+".join(str(j.get("benchmark", "?")) for j in value) or "none"
        elif key not in SKIPPED:
            walk(value, key)
    return out


def _value(value: Any, short: bool) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if not isinstance(value, str):
        return canonical_json(value)
    if not short:
        return value
    text = value.removeprefix("packaged:")
    if "/" in text.strip("/"):
        text = text.rstrip("/").rsplit("/", 1)[-1]
    return text if len(text) <= LONG else "#" + text_sha256(value)[:8]


def _short_paths(paths: list[str]) -> dict[str, str]:
    """Each path's shortest end (whole dotted parts) that no other path ends with."""
    out = {}
    for path in paths:
        parts = path.split(".")
        for n in range(1, len(parts) + 1):
            end = ".".join(parts[-n:])
            if not any(o != path and (o == end or o.endswith("." + end)) for o in paths):
                out[path] = end
                break
        else:
            out[path] = path
    return out


def _kind_paths(path: str, known: set[str]) -> list[str]:
    """The `kind` settings above `path` (`kind`, `retriever.kind`, ...) that some config has."""
    parts = path.split(".")
    above = [".".join([*parts[:n], "kind"]) for n in range(len(parts))]
    return [k for k in above if k != path and k in known]


def _differing(flat: list[dict[str, Any]], common: bool) -> dict[str, list[bool]]:
    """Per setting that differs between two configs of the same kinds above it (a
    retriever's k1 when two bm25 retrievers differ; not when one is dense: its
    `retriever.kind` says that), whether each config shows it. `common`: a config whose
    value is the common one (held by more of those configs than any other value) does not."""
    paths = list(dict.fromkeys(p for f in flat for p in f))
    known = set(paths)
    out: dict[str, list[bool]] = {}
    for path in paths:
        kinds = _kind_paths(path, known)
        groups: dict[str, list[int]] = {}
        for i, f in enumerate(flat):
            groups.setdefault(repr([f.get(k) for k in kinds]), []).append(i)
        shown = [False] * len(flat)
        for members in groups.values():
            counts = Counter(repr(flat[i].get(path)) for i in members)
            if len(counts) < 2:
                continue
            (top, n), *rest = counts.most_common()
            usual = top if common and n > rest[0][1] else None
            for i in members:
                shown[i] = repr(flat[i].get(path)) != usual
        if any(shown):
            out[path] = shown
    return out


def _labels(configs: list[dict[str, Any]], short: bool) -> list[str]:
    bases = [base_label(c) for c in configs]
    flat = [settings(c) for c in configs]
    out = list(bases)
    for base in dict.fromkeys(bases):
        members = [i for i, b in enumerate(bases) if b == base]
        if len(members) < 2:
            continue
        differ = _differing([flat[i] for i in members], common=short)
        shown = [p.removesuffix(".kind") if p.endswith(".kind") else p for p in differ]
        ends = _short_paths(shown) if short else {x: x for x in shown}
        names = {p: ends[x] for p, x in zip(differ, shown, strict=True)}
        for k, i in enumerate(members):
            parts = [
                f"{names[p]}={_value(flat[i].get(p), short)}" for p, on in differ.items() if on[k]
            ]
            out[i] = " ".join([base, *parts])
    return out


def system_labels(configs: list[dict[str, Any]]) -> list[str]:
    """A label per config (see the module docstring); equal configs get equal labels,
    distinct ones distinct labels."""
    distinct = list({canonical_json(c): c for c in configs}.values())
    labels = _labels(distinct, short=True)
    if len(set(labels)) < len(labels):
        labels = _labels(distinct, short=False)
    if len(set(labels)) < len(labels):
        labels = [
            f"{label} #{json_sha256(c)[:6]}" if labels.count(label) > 1 else label
            for label, c in zip(labels, distinct, strict=True)
        ]
    by_config = {canonical_json(c): label for c, label in zip(distinct, labels, strict=True)}
    return [by_config[canonical_json(c)] for c in configs]


def shared_settings(configs: list[dict[str, Any]]) -> list[str]:
    """The settings labels leave out because every config holds them, where they are not
    their kind's default (`b=0.3` for a grid over k1 at b 0.3; `model=Qwen2.5-0.5B` for
    RAG systems on one model): said once beside the table, so `bm25 k1=0.9` is not read
    as BM25 at its default b. Configs of one kind; empty when nothing is shared."""
    distinct = list({canonical_json(c): c for c in configs}.values())
    if not distinct or len({c.get("kind") for c in distinct}) != 1:
        return []
    defaults = _default_settings(str(distinct[0].get("kind")))
    flat = [settings(c) for c in distinct]
    shared = [
        p
        for p, v in flat[0].items()
        if p in defaults and p != "kind" and all(repr(f.get(p)) == repr(v) for f in flat[1:])
        and repr(defaults[p]) != repr(v) and defaults[p] != "auto"  # resolved per machine
    ]  # fmt: skip
    shown = [p.removesuffix(".kind") if p.endswith(".kind") else p for p in shared]
    ends = _short_paths(shown)
    return [f"{ends[x]}={_value(flat[0][p], True)}" for p, x in zip(shared, shown, strict=True)]


def _default_settings(kind: str) -> dict[str, Any]:
    """The flat settings of a system of `kind` at every default ({} for an unknown kind),
    built without validation: `auto` stays `auto` (not this machine's resolution)."""
    from lasagna.systems.base import systems_of_kind

    classes = systems_of_kind(kind)
    return settings(classes[0].model_construct().model_dump(mode="json")) if classes else {}


def shared_line(configs: list[dict[str, Any]]) -> str | None:
    """`shared_settings` of each kind as the line printed under a table of these systems
    (`every system: b=0.3 ...`, or per kind: `every rag: top_k=5 ...`), or None."""
    kinds = list(dict.fromkeys(str(c.get("kind")) for c in configs))
    parts = []
    for kind in kinds:
        shared = shared_settings([c for c in configs if str(c.get("kind")) == kind])
        if shared:
            parts.append(f"every {'system' if len(kinds) == 1 else kind}: {' '.join(shared)}")
    return f"{'; '.join(parts)} (not repeated in the labels)" if parts else None
