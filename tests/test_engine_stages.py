"""The stage layer: a track's pipeline is a list of stages (data) whose columns fit together,
and every stage gets the resources its sweep key names (no Ray needed to build them)."""

from __future__ import annotations

import pytest

from lasagna.data import load_benchmark
from lasagna.results.schema import columns
from lasagna.sample import sample_path
from lasagna.stages.stage import PipelineError, Stage, check_pipeline, map_kwargs
from lasagna.systems import (
    BM25Retriever,
    ClosedBookGenerator,
    DenseRetriever,
    HybridRetriever,
    RagGenerator,
    Resources,
    StageResources,
)
from lasagna.tracks import get_track
from lasagna.tracks.generation import GenerationPrepared

RETRIEVE = StageResources(num_cpus=0.25, actors=2, batch_size=32)
SEARCH = StageResources(num_cpus=0.3, actors=3, batch_size=16)
GENERATE = StageResources(num_cpus=0.4, actors=2, batch_size=4)
SWEEP = Resources(retrieve=RETRIEVE, search=SEARCH, generate=GENERATE)


def _stages(track_name: str, system) -> tuple[list[Stage], list[str]]:
    bench = load_benchmark(sample_path())
    track = get_track(track_name)
    system = system.with_resources(SWEEP)
    prepared = GenerationPrepared(index_path="unused")  # every field a stage may read
    if track_name == "generation" and system.kind == "rag":
        prepared.retriever = system.retriever.model_copy(update={"top_k": system.passages})
    stages = track.stages(bench, system, prepared)
    return stages, list(track.input_columns(bench, system, prepared))


@pytest.mark.parametrize(
    ("system", "key", "expected"),
    [
        (BM25Retriever(), "retrieve", RETRIEVE),
        (DenseRetriever(), "search", SEARCH),
        (HybridRetriever(retrievers=(BM25Retriever(), DenseRetriever())), "search", SEARCH),
    ],
)
def test_search_stage_gets_the_resources_its_key_names(system, key, expected) -> None:
    stages, _ = _stages("retrieval", system)
    search = stages[0]
    assert (search.name, search.resources_key, search.resources) == ("search", key, expected)
    kwargs = map_kwargs(search)
    assert kwargs["num_cpus"] == expected.num_cpus
    assert kwargs["batch_size"] == expected.batch_size
    assert kwargs["compute"].min_size == expected.actors == kwargs["compute"].max_size


def test_rag_pipeline_stages_and_their_resources() -> None:
    stages, columns = _stages("generation", RagGenerator(retriever=BM25Retriever()))
    assert [s.name for s in stages] == ["search", "attach", "generate", "score"]
    assert stages[0].resources == RETRIEVE  # the rag's BM25 gets `retrieve`
    assert stages[2].resources_key == "generate" and stages[2].resources == GENERATE
    have = check_pipeline(stages, columns)
    assert {"doc_ids", "passages", "prediction", "latency_s", "em", "f1"} <= set(have)


def test_closed_book_pipeline_has_no_retrieval() -> None:
    stages, columns = _stages("generation", ClosedBookGenerator())
    assert [s.name for s in stages] == ["generate", "score"]
    assert "passages" not in check_pipeline(stages, columns)


def test_every_stage_output_is_declared_in_the_result_schema() -> None:
    for track, system in [("retrieval", DenseRetriever()), ("generation", RagGenerator())]:
        stages, _ = _stages(track, system)
        for stage in stages:
            if stage.name != "score" or track == "generation":
                assert set(stage.outputs) <= set(columns()), stage.name


def test_check_pipeline_refuses_overwrites_and_missing_inputs() -> None:
    def f(batch):
        return batch

    one = Stage("one", f, inputs=("question",), outputs=("latency_s",))
    two = Stage("two", f, inputs=("question",), outputs=("latency_s",))
    with pytest.raises(PipelineError, match="'two' would overwrite column"):
        check_pipeline([one, two], ["id", "question"])
    with pytest.raises(PipelineError, match="'one' needs column"):
        check_pipeline([one], ["id"])
    prefixed = Stage("judge", f, inputs=("question",), outputs=("judge_latency_s",))
    assert check_pipeline([one, prefixed], ["id", "question"])[-2:] == [
        "latency_s",
        "judge_latency_s",
    ]


def test_small_inputs_are_spread_over_every_actor_of_the_largest_pool() -> None:
    """Ray Data gives a block (bundled up to a stage's batch_size) to one actor: 5 RAG rows
    in batches of 32 reached the 2 model servers as one input, and one stayed idle."""
    from lasagna.stages.stage import spread_over_actors

    stages, _ = _stages("generation", RagGenerator())
    cap, spread = spread_over_actors(stages, 5)
    assert cap == 3  # the largest pool (2 actors) gets 2 blocks of at most 3 rows
    sizes = {s.name: s.resources.batch_size for s in spread if s.stateful}
    assert sizes == {"search": 3, "attach": 3, "generate": 3}, sizes  # were 32, 64, 4
    big_cap, same = spread_over_actors(stages, 10_000)  # large inputs: untouched
    assert big_cap == 5_000 and same == stages
    assert spread_over_actors([], 7) == (7, [])
