"""The nodes an autoscaling cluster can still add, so the plan places trials on them too.

An autoscaler adds a node when an actor waits for resources no live node has, so on such a
cluster "no node has room" is not "Ray would wait forever". lasagna cannot read what the
autoscaler may add from Ray itself, so it is told, as worker groups of at most N nodes of
one shape (KubeRay's `maxReplicas`, the launcher's `max_workers`):

- `--max-nodes "4 x CPU=8,GPU=1"` (`plan`, `run`), which sets `LASAGNA_MAX_NODES` for the
  drivers it starts; set that variable yourself in a RayJob's environment;
- otherwise a cluster launcher's head has its config at `~/ray_bootstrap_config.yaml`
  (`available_node_types`: `resources`, `max_workers`), read when present.

The live nodes of a group's shape count against its N; the rest are the addable nodes,
appended to the capacity's nodes (lasagna.stages.node_packing.Capacity.addable).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lasagna.errors import Problem, UserError
from lasagna.stages.node_packing import EPS

ENV = "LASAGNA_MAX_NODES"
LAUNCHER_CONFIG = "~/ray_bootstrap_config.yaml"  # where Ray's launcher puts it on the head
FLAG = "--max-nodes"
EXAMPLE = '"4 x CPU=8,GPU=1" (several groups: "4 x CPU=8,GPU=1; 2 x CPU=32")'


@dataclass(frozen=True)
class NodeGroup:
    """At most `max_nodes` nodes with `resources` each (a worker group of the autoscaler)."""

    max_nodes: int
    resources: dict[str, float]


def parse_groups(text: str, source: str = FLAG) -> list[NodeGroup]:
    """`4 x CPU=8,GPU=1; 2 x CPU=32` as node groups; a clear error naming `source` else."""
    groups = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        count, sep, shape = part.partition("x")
        resources: dict[str, float] = {}
        try:
            n = int(count.strip())
            for item in shape.split(","):
                key, eq, value = item.partition("=")
                if not eq or not key.strip():
                    raise ValueError(item)
                resources[key.strip()] = float(value)
        except ValueError:
            n, sep = -1, ""
        if not sep or n < 0 or not resources or any(v < 0 for v in resources.values()):
            raise UserError(
                Problem(
                    f"{part!r} is not a node group: write N x RESOURCE=AMOUNT,...",
                    field=source,
                    fix=f"e.g. {EXAMPLE}: at most 4 nodes of 8 CPUs and 1 GPU each",
                )
            )
        groups.append(NodeGroup(n, resources))
    return groups


def launcher_groups(config: dict) -> list[NodeGroup]:
    """The worker node types of a Ray cluster launcher config that say their resources."""
    types = config.get("available_node_types") or {}
    head = config.get("head_node_type")
    cap = config.get("max_workers")
    groups = []
    for name, spec in types.items():
        resources = (spec or {}).get("resources") or {}
        most = int((spec or {}).get("max_workers", cap or 0))
        if name == head or not resources or most <= 0:
            continue
        most = min(most, int(cap)) if cap is not None else most
        groups.append(NodeGroup(most, {k: float(v) for k, v in resources.items()}))
    return groups


def declared_groups() -> list[NodeGroup]:
    """The groups `LASAGNA_MAX_NODES` names, else those of the launcher's config here."""
    text = os.environ.get(ENV)
    if text is not None:
        return parse_groups(text, ENV)
    path = Path(LAUNCHER_CONFIG).expanduser()
    if not path.is_file():
        return []
    import yaml

    try:
        return launcher_groups(yaml.safe_load(path.read_text()) or {})
    except (OSError, yaml.YAMLError, TypeError, ValueError, AttributeError):
        return []  # not a launcher config lasagna can read: the live nodes only


def addable(live: Sequence[dict[str, float]], groups: Sequence[NodeGroup]) -> list[dict]:
    """The nodes the autoscaler can still add: each group's N less its live nodes (a live
    node is of a group when it has exactly the group's amount of each resource it names)."""
    out: list[dict] = []
    for group in groups:
        up = sum(1 for node in live if _of(node, group))
        out += [dict(group.resources) for _ in range(max(0, group.max_nodes - up))]
    return out


def _of(node: dict[str, float], group: NodeGroup) -> bool:
    return all(abs(node.get(k, 0.0) - v) < EPS for k, v in group.resources.items())
