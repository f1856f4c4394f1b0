"""An autoscaling cluster: the nodes it can still add (`--max-nodes`, LASAGNA_MAX_NODES, or a
launcher's ~/ray_bootstrap_config.yaml) count in the plan, and a trial waiting for one is
not ended as one that cannot fit. The run on a real cluster: tests/test_gpu_sharing.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_run_watch_units import held_view, run_dog

from lasagna.errors import UserError
from lasagna.stages import autoscaling
from lasagna.stages.autoscaling import NodeGroup, addable, launcher_groups, parse_groups
from lasagna.stages.node_packing import Capacity, described_capacity
from lasagna.stages.placement import Ask
from lasagna.stages.trial_placement import place_trial

HEAD = {"CPU": 8.0}
GPU_NODE = {"CPU": 2.0, "GPU": 1.0}


def test_node_groups_are_read_from_the_flag_and_a_bad_one_is_refused() -> None:
    assert parse_groups("4 x CPU=8,GPU=1; 2x CPU=32, encoder=1") == [
        NodeGroup(4, {"CPU": 8.0, "GPU": 1.0}),
        NodeGroup(2, {"CPU": 32.0, "encoder": 1.0}),
    ]
    for bad in ("4 CPU=8", "x CPU=8", "4 x CPU", "4 x CPU=eight", "-1 x CPU=1", "4 x "):
        with pytest.raises(UserError) as caught:
            parse_groups(bad)
        said = caught.value.render()
        assert "field '--max-nodes'" in said and "N x RESOURCE=AMOUNT" in said, said
        assert '"4 x CPU=8,GPU=1"' in said


def test_a_launchers_worker_types_with_resources_are_its_groups() -> None:
    config = {
        "max_workers": 3,
        "head_node_type": "head",
        "available_node_types": {
            "head": {"resources": {"CPU": 4}, "max_workers": 0},
            "gpu": {"resources": {"CPU": 8, "GPU": 1}, "min_workers": 1, "max_workers": 4},
            "cpu": {"resources": {"CPU": 16}},  # the cluster's max_workers
            "unknown": {"node_config": {}, "max_workers": 2},  # resources not said: skipped
        },
    }
    assert launcher_groups(config) == [
        NodeGroup(3, {"CPU": 8.0, "GPU": 1.0}),  # at most the cluster's max_workers
        NodeGroup(3, {"CPU": 16.0}),
    ]


def test_the_live_nodes_of_a_group_count_against_its_most(tmp_path, monkeypatch) -> None:
    groups = [NodeGroup(3, GPU_NODE)]
    assert addable([HEAD, GPU_NODE], groups) == [GPU_NODE, GPU_NODE]
    assert addable([HEAD, GPU_NODE, GPU_NODE, GPU_NODE], groups) == []
    monkeypatch.setenv(autoscaling.ENV, "2 x CPU=2,GPU=1")
    assert autoscaling.declared_groups() == [NodeGroup(2, GPU_NODE)]
    monkeypatch.delenv(autoscaling.ENV)
    monkeypatch.setenv("HOME", str(tmp_path))  # no launcher config: nothing to add
    assert autoscaling.declared_groups() == []
    (tmp_path / "ray_bootstrap_config.yaml").write_text(
        "max_workers: 4\navailable_node_types:\n  gpu: {resources: {CPU: 2, GPU: 1}}\n"
    )
    assert autoscaling.declared_groups() == [NodeGroup(4, GPU_NODE)]


def engines(n: int) -> list[Ask]:
    return [Ask("generator engine", "generate", n, {"CPU": 1.0, "GPU": 1.0}, engine="g")]


def test_a_trial_is_placed_on_the_nodes_the_autoscaler_can_add() -> None:
    live = [HEAD, GPU_NODE]
    now = Capacity({"CPU": 10.0, "GPU": 1.0}, live, cluster=True)
    (problem,) = place_trial(engines(3), now).problems
    assert "(an autoscaling cluster: name what it can add, --max-nodes)" in (problem.fix or "")
    grows = Capacity({"CPU": 10.0, "GPU": 1.0}, live, addable(live, [NodeGroup(3, GPU_NODE)]), True)
    assert grows["GPU"] == 3.0 and len(grows.nodes) == 4
    assert not place_trial(engines(3), grows).problems
    (problem,) = place_trial(engines(4), grows).problems  # more than it can grow to
    assert "the cluster has 14 CPU, 3 GPU with the nodes its autoscaler can add" in (
        problem.message
    )
    assert described_capacity(grows, ["CPU", "GPU"]) == (
        "1 node with 2 CPU, 1 GPU; 1 node with 8 CPU, no GPU; "
        "the autoscaler can add 2 nodes with 2 CPU, 1 GPU"
    )


def test_a_trial_waiting_for_a_node_the_autoscaler_can_add_is_not_ended_as_unfit() -> None:
    view = held_view()  # a judge actor asking half a CPU waits on a full node
    assert view.unplaceable() and not view.for_new_nodes()
    view.addable = [{"CPU": 2.0}]
    assert not view.unplaceable() and view.for_new_nodes() == [{"CPU": 0.5}, {"CPU": 0.1}]
    said = run_dog(view, quiet_periods=3)
    reports = [s for s in said if "it fits a node the autoscaler can add" in s]
    assert len(reports) == 2 and "ending the trial" in said[2], said
    assert "--stall-timeout" in said[-1]


def test_max_nodes_without_a_cluster_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lasagna", "benchmark", "plan", "sample"]
        + ["--max-nodes", "2 x CPU=8", "--address", "local", "--output", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 2, said
    assert "field '--max-nodes'" in said and "no cluster is named" in said
    assert "add --address" in said and "Traceback" not in said


def test_an_in_process_ray_never_grows(monkeypatch) -> None:
    from lasagna.engine.ray_session import _never_grows

    monkeypatch.setenv(autoscaling.ENV, "2 x CPU=2")
    with _never_grows(True):  # what the run's in-process Ray (and its drivers) then read
        assert autoscaling.declared_groups() == []
    assert autoscaling.declared_groups() == [NodeGroup(2, {"CPU": 2.0})]
    with _never_grows(False):  # a cluster: as declared
        assert autoscaling.declared_groups() == [NodeGroup(2, {"CPU": 2.0})]
