"""Resource planning before Ray starts (lasagna.stages.placement, lasagna.tracks.placement):
which pools of a trial coexist, two phases for judged generation, the refusal and its fix,
and what the driver keeps loaded between trials. Pure functions: no Ray, no model."""

from __future__ import annotations

from lasagna.sample import sample_path
from lasagna.stages.capacity import local_capacity
from lasagna.stages.node_packing import Capacity, amounts, nodes_of, num
from lasagna.stages.placement import (
    GENERATE,
    JUDGE,
    Ask,
    fits,
    light_ask,
    on_nodes,
    shortfall,
    summed,
)
from lasagna.stages.run_decisions import run_decisions
from lasagna.stages.trial_placement import place_trial
from lasagna.sweep.plan import build_plan
from lasagna.sweep.schema import load_sweep
from lasagna.tracks.placement import placement_lines
from lasagna.tracks.placement import run_decisions as plan_decisions

TWO = {"CPU": 2.0, "GPU": 0.0}
SAMPLE = sample_path()


def _judged(gen_cpus: float = 1.0, judge_cpus: float = 1.0, shared: bool = False) -> list[Ask]:
    """The pools of the judged RAG trial that hung on 2 CPUs (issue's reproducer)."""
    judge_engine = "generate:g" if shared else "generate:j"
    return [
        Ask("search actors", "retrieve", 1, {"CPU": 0.5}, GENERATE),
        Ask("attach actor", None, 1, {"CPU": 0.1}, GENERATE),
        Ask("generator engine", "generate", 1, {"CPU": gen_cpus}, GENERATE, engine="generate:g"),
        Ask("generator stage clients", "generate", 1, {"CPU": 0.1}, GENERATE),
        Ask("judge engine", "judge", 1, {"CPU": judge_cpus}, JUDGE, engine=judge_engine),
        Ask("judge stage clients", "judge", 1, {"CPU": 0.1}, JUDGE),
        Ask("light tasks", None, 1, {"CPU": 0.1}),
    ]


def test_amounts_read_as_numbers():
    assert [num(x) for x in (2, 0.5, 1 / 3, 16.0, 0.0, 1000000)] == [
        "2",
        "0.5",
        "0.33",
        "16",
        "0",
        "1000000",
    ]
    need = {"CPU": 0.6 + 0.7 + 0.7, "GPU": 0.0}  # 1.9999999999999998
    assert amounts(need) == "2 CPU"  # it said "2. CPU at once"


def test_pools_that_fit_run_as_one_pipeline():
    placed = place_trial(_judged(0.5, 0.5), TWO)
    assert not placed.phased and not placed.problems
    assert round(placed.need["CPU"], 6) == 1.9


def test_judged_generation_that_does_not_fit_runs_in_two_phases():
    asks = _judged()  # 2.9 CPU together: Ray would wait forever
    assert round(shortfall(asks, TWO)["CPU"], 6) == 0.9
    placed = place_trial(asks, TWO)
    assert placed.phased and not placed.problems
    assert round(placed.need["CPU"], 6) == 1.8  # the generate phase, the larger one


def test_a_judge_on_the_generators_engine_counts_once_and_cannot_be_split():
    asks = _judged(shared=True)
    assert round(summed(asks)["CPU"], 6) == 1.9  # one engine serves both
    assert not place_trial(asks, TWO).phased
    placed = place_trial(_judged(2.0, shared=True), TWO)
    assert not placed.phased and placed.problems  # the shared engine is needed in both


def test_refusal_names_each_pool_the_capacity_and_a_fix_that_fits():
    (problem,) = place_trial(_judged(2.0), TWO, "generation system 'rag'").problems
    text = problem.render()
    assert "generation system 'rag' needs 2.8 CPU at once, the cluster has 2 CPU" in text
    for pool in ("search actors (resources.retrieve): 1 x 0.5 CPU", "generator engine"):
        assert pool in text
    assert problem.field == "resources.generate"
    assert "resources: {generate: {num_cpus: 1.2}}" in (problem.fix or "")
    fixed = [a if a.pool != "generator engine" else Ask(a.pool, a.key, 1, {"CPU": 1.2},
             a.phase, a.engine) for a in _judged(2.0)]  # fmt: skip
    assert not place_trial(fixed, TWO).problems  # the fix it names is enough


def test_too_many_actors_get_fewer_actors_as_the_fix():
    asks = [Ask("search actors", "retrieve", 8, {"CPU": 0.5}), Ask("light", None, 1, {"CPU": 0.1})]
    (problem,) = place_trial(asks, TWO).problems
    assert "resources: {retrieve: {num_cpus: 0.2}}" in (problem.fix or "")
    gpu = [Ask("generator engine", "generate", 2, {"CPU": 0.5, "GPU": 1.0})]
    (problem,) = place_trial(gpu, {"CPU": 8.0, "GPU": 1.0}).problems
    assert "needs 1 CPU, 2 GPU at once, the cluster has 8 CPU, 1 GPU" in problem.message
    assert "actors: 1" in (problem.fix or "")


def test_custom_resources_the_cluster_lacks_are_refused():
    asks = [Ask("embedder", "encode", 1, {"CPU": 0.5, "big_memory": 1.0})]
    (problem,) = place_trial(asks, TWO).problems
    assert "1 big_memory" in problem.message and "0 big_memory" not in problem.message


def test_run_decisions_release_what_does_not_fit_beside_the_next_trial():
    embed = Ask("embedder", "encode", 1, {"CPU": 0.5}, engine="embed:e")
    gen_a = Ask("generator engine", "generate", 1, {"CPU": 1.0}, engine="generate:a")
    gen_b = Ask("generator engine", "generate", 1, {"CPU": 1.0}, engine="generate:b")
    light = Ask("light", None, 1, {"CPU": 0.1})
    # A, B, A: A is needed again after B, but A and B do not fit together on 2 CPUs
    decisions = run_decisions([[gen_a, light], [gen_b, light], [gen_a, light]], TWO)
    assert [d.keep_later for d in decisions] == [True, False, True]
    # the next trial's embedder starts early only where it fits beside this trial
    decisions = run_decisions([[gen_a, light], [embed, light]], TWO)
    assert decisions[0].prestart_next
    decisions = run_decisions([[gen_a, gen_b, light], [embed, light]], {"CPU": 2.1})
    assert not decisions[0].prestart_next
    # a phased trial closes its judge's engine, loaded by the trial before, first
    decisions = run_decisions([_judged(), _judged()], TWO)
    assert [d.phased for d in decisions] == [True, True]
    assert decisions[0].release == () and decisions[1].release == ("generate:j",)


def test_local_capacity_counts_this_machines_cpus():
    capacity = local_capacity()
    assert 1 <= capacity["CPU"] <= 4096 and capacity["GPU"] >= 0


REPRO = """\
benchmarks: [{name: sample, n_samples: 4}]
generators:
  - {kind: rag, retriever: {kind: bm25, top_k: 5}}
judges:
  - {benchmark: faithfulness}
resources:
  generate: {num_cpus: 1}
  judge: {num_cpus: 1}
"""


def test_the_sweep_that_hung_is_planned_in_two_phases(tmp_path):
    """The tracks' asks for the reproducer: generator and judge engines of 1 CPU each,
    BM25 search 0.5, clients and tasks 0.1."""
    path = tmp_path / "s.yaml"
    path.write_text(REPRO)
    sweep, base = load_sweep(path)
    plan = build_plan(sweep, base, capacity=TWO)  # not refused
    (decision,) = plan_decisions(plan.trials, plan.sweep.resources, TWO)
    assert decision.phased
    lines = placement_lines(plan.trials, plan.sweep.resources, TWO)
    assert "in-process Ray on this machine (2 CPU)" in lines[0]
    assert "two phases (generate, release, judge), 1.8 CPU at most" in lines[1]
    assert not plan_decisions(plan.trials, plan.sweep.resources, {"CPU": 4.0})[0].phased


def test_a_cpu_only_cluster_is_planned(tmp_path):
    """Ray's totals of a cluster without GPUs have no "GPU" key at all (an in-process plan
    says 0): `benchmark plan --address` printed a KeyError there."""
    path = tmp_path / "s.yaml"
    path.write_text(REPRO)
    sweep, base = load_sweep(path)
    cpus = Capacity({"CPU": 4.0, "memory": 8e9}, [{"CPU": 2.0}, {"CPU": 2.0}], cluster=True)
    plan = build_plan(sweep, base, capacity=cpus)
    lines = placement_lines(plan.trials, plan.sweep.resources, cpus, "ray://head:10001")
    assert lines[0] == "placement on the cluster at ray://head:10001 (4 CPU on 2 nodes):"


def test_a_grids_systems_placed_alike_are_one_line(tmp_path):
    """Eight BM25 settings (each repeated) and a dense system: two lines, not sixteen."""
    path = tmp_path / "s.yaml"
    path.write_text(
        f"benchmarks:\n  - {{path: {SAMPLE}}}\n"
        "retrievers:\n  - grid: {kind: bm25, k1: [0.9, 1.2], b: [0.4, 0.75], "
        "stemmer: [none, english]}\n  - {kind: dense}\ntrials: 2\n"
    )
    sweep, base = load_sweep(path)
    plan = build_plan(sweep, base, capacity=TWO)
    lines = placement_lines(plan.trials, plan.sweep.resources, TWO)
    assert len(lines) == 3, lines
    first = plan.trials[0].system_name
    assert lines[1].startswith(f"  {first} and 7 more: one pipeline, ") and "dense" not in lines[1]
    assert lines[2].startswith("  dense: one pipeline, ")


def test_a_code_judge_asks_light_cpu_and_no_engine():
    from types import SimpleNamespace

    from lasagna.stages.asks import judge_asks
    from lasagna.systems import JUDGE_MODEL

    spec = JUDGE_MODEL.model_copy(
        update={"resources": JUDGE_MODEL.resources.model_copy(update={"num_cpus": 1.0})}
    )
    code = SimpleNamespace(uses_model=False, benchmark="answer-length", model=spec)
    (ask,) = judge_asks(code, cluster_gpus=1.0, phase=JUDGE)
    assert ask.engine is None and ask.each == {"CPU": 0.25, "GPU": 0.0}
    model = SimpleNamespace(uses_model=True, benchmark="faithfulness", model=spec)
    engine, clients = judge_asks(model, cluster_gpus=1.0, phase=JUDGE)
    assert engine.engine and engine.each["CPU"] == 1.0 and engine.each["GPU"] == 1.0
    assert clients.each == {"CPU": 0.1, "GPU": 0.0}


def _executor_system(executor, evaluators, **kw):
    from lasagna.systems.executor import ExecutorSystem

    return ExecutorSystem(executor, evaluators, **kw)


class _Model:  # a class executor: one actor each
    def __call__(self, data):
        return data


def test_evaluate_calls_are_placed_like_sweeps_actors_tasks_and_judge_engines():
    from lasagna.evaluation.judge import LLMJudge
    from lasagna.models.spec import ModelSpec, StageResources
    from lasagna.stages.asks import executor_asks

    def exact(output, target):
        return output == target

    judge = LLMJudge("correctness", ModelSpec(resources=StageResources(num_cpus=1.0)))
    fn = _executor_system(lambda d: d, {"exact": exact, "judge": judge}, concurrency=16)
    asks = executor_asks(fn, 0.0)
    assert [(a.pool, a.actors, a.each["CPU"]) for a in asks[:2]] == [
        ("executor tasks", 1, 1.0),  # Ray queues the other tasks: one must fit
        ("evaluator 'judge' engine", 1, 1.0),  # no stage clients: the executor calls it
    ]
    assert not place_trial(asks, TWO).problems  # 2 CPU: the other tasks wait their turn

    cls = _executor_system(_Model, {"judge": judge}, actors=2, resources={"num_cpus": 1.0})
    (problem,) = place_trial(executor_asks(cls, 0.0), TWO, "sdk system '_Model'").problems
    assert "needs 3 CPU at once, the cluster has 2 CPU" in problem.message
    assert "executor actors (resources=): 2 x 1 CPU" in problem.message
    assert problem.field == "resources"
    assert "evaluate(..., resources={'num_cpus': 0.5}), or fewer actors" in problem.fix

    gpu = _executor_system(lambda d: d, {"exact": exact}, resources={"num_gpus": 1.0})
    (problem,) = place_trial(executor_asks(gpu, 0.0), TWO).problems
    assert "needs 1 CPU, 1 GPU at once, the cluster has 2 CPU, no GPU" in problem.message
    assert problem.fix == (
        "ask for no GPU (take num_gpus out of evaluate()'s resources=), "
        "or run on a machine or cluster with a GPU"
    )


def test_a_field_path_reads_back_as_written():
    from lasagna.errors import dotted, undotted

    for path in [("resources", "generate"), ("generators", 1, "grid", "retriever", "retrieve")]:
        assert undotted(dotted(path)) == path
    assert dotted(("judges", 0, "model", "resources")) == "judges[0].model.resources"


# ---------------------------------------------------------------- the nodes, not the sum
TWO_ONE_GPU_NODES = Capacity(
    {"CPU": 12.0, "GPU": 2.0},
    [{"CPU": 8.0}, {"CPU": 2.0, "GPU": 1.0}, {"CPU": 2.0, "GPU": 1.0}],
)


def test_an_actor_bigger_than_every_node_is_refused_although_the_totals_fit():
    """Ray places an actor on one node: a 2-GPU engine on two 1-GPU nodes waits forever."""
    engine = Ask("generator engine", "generate", 1, {"CPU": 1.0, "GPU": 2.0}, engine="g")
    assert not shortfall([engine], TWO_ONE_GPU_NODES)  # the sum says it fits
    (problem,) = place_trial([engine], TWO_ONE_GPU_NODES, "system 'big'").problems
    assert "one actor of the generator engine asks 1 CPU, 2 GPU" in problem.message
    assert "(2 nodes with 2 CPU, 1 GPU; 1 node with 8 CPU, no GPU)" in problem.message
    assert problem.field == "resources.generate"
    assert "at most 1 GPU (num_gpus in resources.generate" in problem.fix
    one_each = Ask("generator engine", "generate", 2, {"CPU": 1.0, "GPU": 1.0}, engine="g")
    assert place_trial([one_each], TWO_ONE_GPU_NODES).problems == ()
    on_one = Capacity({"CPU": 4.0, "GPU": 2.0}, [{"CPU": 4.0, "GPU": 2.0}])
    assert place_trial([engine], on_one).problems == ()
    # CPUs on one node, the GPU on another: each is there, never both on one node
    apart = Capacity({"CPU": 5.0, "GPU": 1.0}, [{"CPU": 4.0}, {"CPU": 1.0, "GPU": 1.0}])
    gpu_engine = Ask("generator engine", "generate", 1, {"CPU": 2.0, "GPU": 1.0}, engine="g")
    (problem,) = place_trial([gpu_engine], apart, "system 'g'").problems
    assert "asks 2 CPU, 1 GPU, and no node has all of it (1 node with 1 CPU, 1 GPU; " in (
        problem.message
    )
    assert problem.fix.startswith("ask for what one node has, or add a node with 2 CPU, 1 GPU")


def test_actors_that_do_not_pack_onto_the_nodes_are_refused_with_a_size_that_packs():
    """3 x 1.2 CPU is less than 4 CPU, but one per 2-CPU node: the third never starts."""
    nodes = Capacity({"CPU": 4.0}, [{"CPU": 2.0}, {"CPU": 2.0}])
    search = Ask("search actors", "retrieve", 3, {"CPU": 1.2})
    asks = [search, light_ask()]
    assert not shortfall(asks, nodes) and on_nodes(asks, nodes) is search
    (problem,) = place_trial(asks, nodes, "system 'x'").problems
    assert "fits the cluster's totals (3.7 CPU) but not its nodes (2 nodes with 2 CPU)" in (
        problem.message
    )
    assert "e.g. resources: {retrieve: {num_cpus: 1}}" in problem.fix
    smaller = Ask("search actors", "retrieve", 3, {"CPU": 1.0})
    assert fits([smaller, light_ask()], nodes)  # the fix it gives does pack
    # the totals' own fix is checked against the nodes too: 1.3 each would not pack
    (problem,) = place_trial([Ask("s", "retrieve", 3, {"CPU": 3.0})], nodes).problems
    assert "num_cpus: 1}}" in problem.fix
    assert (
        "num_cpus: 1.3"
        in place_trial([Ask("s", "retrieve", 3, {"CPU": 3.0})], {"CPU": 4.0}).problems[0].fix
    )


def test_gpu_shares_pack_per_node_and_a_plain_capacity_is_one_node():
    shares = Ask("generator engine", "generate", 2, {"CPU": 0.5, "GPU": 0.6}, engine="g")
    assert fits([shares], TWO_ONE_GPU_NODES)  # one share on each node's GPU
    three = Ask("generator engine", "generate", 3, {"CPU": 0.5, "GPU": 0.6}, engine="g")
    assert not fits([three], TWO_ONE_GPU_NODES)
    assert nodes_of({"CPU": 2.0}) == ({"CPU": 2.0},)
    assert nodes_of(local_capacity()) == (dict(local_capacity()),)
    # an engine kept for a later trial must fit beside the next one on the nodes too
    nodes = Capacity({"CPU": 4.0, "GPU": 2.0}, [{"CPU": 2.0, "GPU": 1.0}] * 2)
    first = [Ask("generator engine", "generate", 1, {"CPU": 1.5, "GPU": 0.5}, engine="a")]
    second = [
        Ask("generator engine", "generate", 1, {"CPU": 1.5, "GPU": 0.5}, engine="b"),
        Ask("search actors", "retrieve", 1, {"CPU": 1.0}),
    ]
    trials = [first, second, first]
    assert [d.keep_later for d in run_decisions(trials, dict(nodes))][1] is True  # the sum
    assert [d.keep_later for d in run_decisions(trials, nodes)][1] is False  # 0.5 CPU a node
