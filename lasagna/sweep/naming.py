"""Display names of a sweep's systems, unique within the sweep."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from lasagna.systems import display_name
from lasagna.systems.base import placement_free


def unique_names(systems: list[BaseModel]) -> list[str]:
    """Display names, with the settings that differ appended where names collide
    (grid members): "rag:SmolLM2-135M-Instruct(passages=3)"."""
    base = [display_name(s) for s in systems]
    flat = [_flatten(placement_free(s)) for s in systems]
    out = list(base)
    for name in set(base):
        group = [i for i, b in enumerate(base) if b == name]
        if len(group) < 2:
            continue
        keys = sorted({k for i in group for k in flat[i]})
        differ = [k for k in keys if len({repr(flat[i].get(k)) for i in group}) > 1]
        for i in group:
            if differ:
                out[i] = name + "(" + ", ".join(f"{k}={flat[i].get(k)}" for k in differ) + ")"
    return out


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}
