"""What a stalled trial waits for and what holds it, read from Ray's control store (GCS).

Ray's pending resource demands (`autoscaler.v2.sdk.get_cluster_resource_state`: the
shapes the raylets cannot place yet, the ones `ray status` lists), the actors still waiting
to be created, the live actors and the resources each one holds, every node's capacity,
and the nodes the autoscaler can still add (lasagna.stages.autoscaling).
Reading needs no dashboard (lasagna's in-process Ray has none). Every read is best effort:
a Ray without one of these gives an empty part, never an error.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lasagna.errors import UserError
from lasagna.stages.autoscaling import addable, declared_groups

Shape = dict[str, float]
IGNORED = ("memory", "object_store_memory")  # Ray Data asks none; every node has some


@dataclass
class ClusterView:
    capacity: list[Shape] = field(default_factory=list)  # per node: its total resources
    held: list[Shape] = field(default_factory=list)  # per node: held by live actors
    demand: list[tuple[Shape, int]] = field(default_factory=list)  # Ray's pending shapes
    waiting: list[tuple[str, Shape]] = field(default_factory=list)  # actors not yet created
    holders: list[tuple[str, Shape]] = field(default_factory=list)  # live actors
    addable: list[Shape] = field(default_factory=list)  # nodes the autoscaler can add

    def signature(self) -> tuple:
        """Changes when an actor starts or ends or a demand is placed: progress."""
        live = sorted((n, tuple(sorted(s.items()))) for n, s in self.holders)
        wait = sorted((tuple(sorted(s.items())), c) for s, c in self.demand)
        return tuple(live), tuple(wait), len(self.waiting)

    def free(self) -> list[Shape]:
        """Per node: its capacity less what the live actors hold."""
        out = []
        for total, held in zip(self.capacity, self.held, strict=False):
            out.append({k: v - held.get(k, 0.0) for k, v in total.items()})
        return out

    def unplaceable(self) -> list[Shape]:
        """The waited-for shapes that fit no node even once every task has ended, nor a
        node the autoscaler can add."""
        free = self.free() + self.addable
        return [s for s in self._waited() if not any(fits(s, f) for f in free)]

    def for_new_nodes(self) -> list[Shape]:
        """The waited-for shapes only a node the autoscaler can add has room for."""
        free = self.free()
        return [
            s
            for s in self._waited()
            if not any(fits(s, f) for f in free) and any(fits(s, a) for a in self.addable)
        ]

    def _waited(self) -> list[Shape]:
        return [s for s in [s for s, _ in self.demand] or [s for _, s in self.waiting] if s]

    def totals(self, which: str) -> Shape:
        rows = self.capacity if which == "capacity" else self.free()
        out: Shape = {}
        for row in rows:
            for k, v in row.items():
                if k in ("CPU", "GPU"):
                    out[k] = out.get(k, 0.0) + v
        return out


def fits(shape: Shape, free: Shape) -> bool:
    return all(free.get(k, 0.0) + 1e-9 >= v for k, v in shape.items() if k not in IGNORED and v > 0)


def shown(shape: Shape) -> str:
    """`{CPU: 0.5}`: the resources a person sets (memory omitted, numbers short)."""
    parts = [
        f"{k}: {max(v, 0.0):g}"
        for k, v in sorted(shape.items())
        if k not in IGNORED and (v or k in ("CPU", "GPU"))
    ]
    return "{" + ", ".join(parts) + "}"


def counted(items: list[tuple[str, Shape]]) -> str:
    """`2 ModelServer {CPU: 1}, MapWorker(MapBatches(Judge)) {CPU: 0.5}`."""
    counts = Counter((name, shown(s)) for name, s in items)
    return ", ".join(
        f"{n} {name} {s}" if n > 1 else f"{name} {s}" for (name, s), n in counts.items()
    )


def read_view() -> ClusterView:
    """The cluster now, as far as this Ray tells it."""
    view = ClusterView()
    _read_resource_state(view)
    _read_actors(view)
    try:
        view.addable = addable(view.capacity, declared_groups())
    except UserError:  # a bad LASAGNA_MAX_NODES was refused before the run started
        pass
    return view


def _read_resource_state(view: ClusterView) -> None:
    try:
        import ray
        from ray._raylet import GcsClient
        from ray.autoscaler.v2.sdk import get_cluster_resource_state

        state = get_cluster_resource_state(GcsClient(ray.get_runtime_context().gcs_address))
    except Exception:  # noqa: BLE001 - best effort: an older or newer Ray
        return
    view.demand = [
        (_shape(r.request.resources_bundle), int(r.count)) for r in state.pending_resource_requests
    ]
    view.capacity = [_shape(n.total_resources) for n in state.node_states if _alive(n)]
    view._node_ids = [n.node_id for n in state.node_states if _alive(n)]  # type: ignore[attr-defined]


def _alive(node: Any) -> bool:
    return getattr(node, "status", 0) in (0, 1, 2)  # RUNNING, IDLE (autoscaler's enum)


def _read_actors(view: ClusterView) -> None:
    try:
        from ray._private.state import state
        from ray.core.generated import gcs_pb2

        accessor = state._connect_and_get_accessor()
        rows = [
            gcs_pb2.ActorTableData.FromString(raw) for raw in accessor.get_actor_table(None, None)
        ]
    except Exception:  # noqa: BLE001 - best effort
        return
    names = gcs_pb2.ActorTableData.ActorState.Name
    node_ids = list(getattr(view, "_node_ids", []))
    view.held = [{} for _ in view.capacity]
    for row in rows:
        state_name = names(row.state)
        shape = _shape(row.required_resources)
        if not any(v > 0 for k, v in shape.items() if k not in IGNORED):
            continue  # asks for nothing (Ray Data's coordinators): neither waits nor holds
        name = row.class_name.rsplit(".", 1)[-1]  # `test.<locals>.Holder`: `Holder`
        if state_name == "ALIVE":
            view.holders.append((name, shape))
            node = bytes(row.address.node_id)
            i = node_ids.index(node) if node in node_ids else 0
            if i < len(view.held):
                for k, v in shape.items():
                    view.held[i][k] = view.held[i].get(k, 0.0) + v
        elif state_name in ("PENDING_CREATION", "DEPENDENCIES_UNREADY"):
            view.waiting.append((name, shape))


def _shape(resources: Any) -> Shape:
    return {
        str(k): float(v)
        for k, v in dict(resources).items()
        if not str(k).startswith("node:") and "_group_" not in str(k)
    }
