"""The model-call cache: keys, hits and misses, identical replies, concurrent writers, off."""

from __future__ import annotations

import argparse
import multiprocessing
from pathlib import Path

import pyarrow as pa
import pytest

from lasagna.cache import model_calls_location
from lasagna.cache.calls import CallStore
from lasagna.models.base import ChatRequest, Completion
from lasagna.models.call_cache import (
    CachedChatModel,
    ModelCalls,
    call_key,
    engine_identity,
    model_calls,
)
from lasagna.systems import ModelSpec

SPEC = ModelSpec(max_tokens=16)
MESSAGES = [{"role": "user", "content": "Capital of France?"}]


class Scripted:
    """A unit-test model: answers 'echo: <last message>' and records what it was asked."""

    constrained_decoding = True

    def __init__(self, fail_on: str | None = None):
        self.asked: list[str] = []
        self.fail_on = fail_on

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        out = []
        for r in requests:
            text = r.messages[-1]["content"]
            self.asked.append(text)
            if text == self.fail_on:
                out.append(Completion(text="", error="RuntimeError: boom"))
            else:
                out.append(
                    Completion(
                        f"echo: {text}", 7, 3, latency_s=0.5, finish_reason="stop", tokens=("a",)
                    )
                )
        return out


def calls_at(root: Path, backend: str = "vllm") -> ModelCalls:
    return ModelCalls(str(root), "e" * 64, backend)


def request(text: str = "Capital of France?", **kw) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": text}], **kw)


def test_the_key_changes_with_every_part_of_the_call(tmp_path):
    calls = calls_at(tmp_path)
    base = call_key(calls, SPEC, request())
    assert base == call_key(calls, SPEC, request())  # stable
    variants = [
        call_key(calls, SPEC, request("Capital of Spain?")),
        call_key(calls, SPEC, ChatRequest([{"role": "system", "content": "x"}, *MESSAGES])),
        call_key(calls, SPEC, request(max_tokens=17)),
        call_key(calls, SPEC, request(stop=("\n",))),
        call_key(calls, SPEC, request(json_schema={"type": "object"})),
        call_key(calls, SPEC, request(logprobs=5)),
        call_key(calls, SPEC, request(temperature=0.7)),
        call_key(ModelCalls(str(tmp_path), "f" * 64, "vllm"), SPEC, request()),  # engine
        call_key(calls, SPEC.model_copy(update={"max_tokens": 32}), request(max_tokens=None)),
    ]
    assert None not in variants and len({base, *variants}) == len(variants) + 1
    # greedy: the seed changes nothing, so it is not in the key; sampled: it is
    assert call_key(calls, SPEC, request(seed=5)) == base
    sampled = [call_key(calls, SPEC, request(temperature=0.7, seed=s)) for s in (1, 2)]
    assert sampled[0] != sampled[1]
    # sampled on a backend without reproducible seeded sampling: not cacheable
    assert call_key(calls_at(tmp_path, "transformers"), SPEC, request(temperature=0.7)) is None
    assert call_key(calls_at(tmp_path, "openai"), SPEC, request()) is not None


def test_engine_identity_has_weights_dtype_and_library():
    pytest.importorskip("vllm")  # the library version it records (the cpu or gpu extra)
    gpu, cpu = engine_identity(SPEC, gpu=True), engine_identity(SPEC, gpu=False)
    assert cpu["files_sha256"] and cpu["library"] and cpu["library"].startswith("vllm")
    assert gpu["dtype"] == "bfloat16" and cpu["dtype"] in ("float32", "bfloat16")
    fp32 = engine_identity(SPEC.model_copy(update={"dtype": "float32"}), gpu=False)
    bf16 = engine_identity(SPEC.model_copy(update={"dtype": "bfloat16"}), gpu=False)
    assert fp32["dtype"] == "float32" and fp32 != bf16
    assert model_calls(None, SPEC, gpu=False) is None  # off


def test_hits_misses_and_identical_replies(tmp_path):
    first_model = Scripted(fail_on="bad")
    cached = CachedChatModel(first_model, calls_at(tmp_path), SPEC)
    assert cached.constrained_decoding  # the wrapped model's attributes show through
    batch = [request("a"), request("b"), request("bad"), request("a", temperature=0.7, seed=1)]
    first = cached.generate(batch)
    assert [c.cached for c in first] == [False, False, None, False]
    assert first[2].error  # a failure is returned, never stored
    again_model = Scripted(fail_on="bad")
    again = CachedChatModel(again_model, calls_at(tmp_path), SPEC).generate(batch)
    assert [c.cached for c in again] == [True, True, None, True]
    assert again_model.asked == ["bad"]  # only the failed call ran again
    for a, b in zip(first, again, strict=True):
        if a.ok:
            assert (a.text, a.prompt_tokens, a.completion_tokens, a.finish_reason, a.tokens) == (
                b.text,
                b.prompt_tokens,
                b.completion_tokens,
                b.finish_reason,
                b.tokens,
            )
    files = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert len(files) == 3 and not any(n.startswith(".tmp") for n in files)


def test_a_damaged_entry_is_a_miss_and_an_unwritable_cache_is_skipped(tmp_path, caplog):
    calls = calls_at(tmp_path)
    CachedChatModel(Scripted(), calls, SPEC).generate([request("a")])
    (entry,) = [p for p in tmp_path.rglob("*.json")]
    entry.write_text("{not json")
    model = Scripted()
    assert CachedChatModel(model, calls, SPEC).generate([request("a")])[0].cached is False
    assert model.asked == ["a"]
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    out = CachedChatModel(Scripted(), calls_at(blocked / "cache"), SPEC).generate([request("z")])
    assert out[0].ok and out[0].text == "echo: z"  # the run goes on without the cache
    assert "cannot write" in caplog.text


def _write_same_keys(root: str, worker: int) -> None:
    store = CallStore(root)
    for _ in range(30):
        entries = {
            f"{k:02x}" + "0" * 62: {"key": f"{k:02x}" + "0" * 62, "text": "t" * 5000}
            for k in range(16)
        }
        store.put_many(entries)


def test_two_processes_writing_the_same_keys(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_same_keys, args=(str(tmp_path), w)) for w in range(2)]
    for p in procs:
        p.start()
    store = CallStore(str(tmp_path))
    keys = [f"{k:02x}" + "0" * 62 for k in range(16)]
    seen_damaged = False
    while any(p.is_alive() for p in procs):  # a reader meanwhile sees whole entries or none
        for path in tmp_path.rglob("*.json"):
            try:
                text = path.read_text()
            except FileNotFoundError:
                continue
            seen_damaged |= not text.endswith("}")
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    found = store.get_many(keys)
    assert sorted(found) == keys and all(len(e["text"]) == 5000 for e in found.values())
    assert not seen_damaged
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_an_fsspec_uri_holds_the_cache():
    calls = ModelCalls("memory://lasagna-test-calls", "e" * 64, "vllm")
    CachedChatModel(Scripted(), calls, SPEC).generate([request("a"), request("b")])
    model = Scripted()
    out = CachedChatModel(model, calls, SPEC).generate([request("a"), request("b")])
    assert [c.cached for c in out] == [True, True] and model.asked == []


def test_generation_counts_hits_and_keeps_them_out_of_the_speed_figures():
    from lasagna.stages.generation import batch_rows
    from lasagna.tracks.generation_metrics import generation_metrics

    done = [Completion("x", cached=True), Completion("y", cached=False), Completion("z")]
    assert batch_rows(done) == [1, 2, 2]
    table = pa.table(
        {
            "em": [1.0, 0.0],
            "f1": [1.0, 0.5],
            "unanswerable": [False, False],
            "error": pa.array([None, None], pa.string()),
            "latency_s": [0.001, 2.0],
            "batch_rows": [1, 1],
            "batch_started_at": [100.0, 100.0],
            "completion_tokens": [10, 20],
            "prompt_tokens": [5, 5],
            "cached": [True, False],
        }
    )
    metrics, counts = generation_metrics(table)
    assert counts["cache_hits"] == 1 and counts["cache_misses"] == 1
    assert counts["completion_tokens"] == 30  # what the rows hold
    assert metrics["tokens_per_s"] == pytest.approx(10.0)  # 20 computed tokens in 2 s


def _args(target: str, output: str, **kw) -> argparse.Namespace:
    base = dict(
        target=target,
        profile=None,
        split=None,
        n_samples=None,
        name=None,
        filter=None,
        trials=None,
        seed=None,
        output=output,
        judge=None,
        no_cache=False,
    )
    return argparse.Namespace(**(base | kw))


def test_the_cache_lives_under_the_output_unless_told_otherwise(tmp_path):
    from lasagna.cli.plan_args import plan_from_args
    from lasagna.sample import sample_path

    out = tmp_path / "out"
    plan = plan_from_args(_args(str(sample_path()), str(out)))
    assert plan.call_cache == f"{out}/.model-calls"
    assert plan_from_args(_args(str(sample_path()), str(out), no_cache=True)).call_cache is None
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - {{path: {sample_path()}}}\nretrievers:\n  - {{kind: bm25}}\n"
        "cache: shared/calls\n"
    )
    assert plan_from_args(_args(str(sweep), str(out))).call_cache == str(tmp_path / "shared/calls")
    sweep.write_text(sweep.read_text().replace("shared/calls", "s3://bucket/calls"))
    assert plan_from_args(_args(str(sweep), str(out))).call_cache == "s3://bucket/calls"


def test_callers_without_an_output_cache_calls_under_the_cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    assert model_calls_location(True) == str(tmp_path / "model-calls")  # synthesis, SDK
    assert model_calls_location(False, "out") is None
    assert model_calls_location("rel/calls") == "rel/calls"  # no base folder: as given
    assert model_calls_location("rel", "out", tmp_path) == str(tmp_path / "rel")


def test_a_second_judge_over_the_same_rows_reuses_every_call(tmp_path):
    import json

    from lasagna.stages.judging import CASE, JudgeStage, judge_metrics
    from lasagna.systems import JUDGE_MODEL
    from tests.test_judge_stage import scripted

    cases = [{"id": f"r{i}", "input": "q", "actual_output": f"a{i}"} for i in range(3)]
    for case in cases:
        case["retrieval_context"] = ["c"]
    table = pa.table({"id": [c["id"] for c in cases], CASE: [json.dumps(c) for c in cases]})
    calls = ModelCalls(str(tmp_path), "e" * 64, "vllm")
    runs, models = [], []
    for _ in range(2):
        models.append(scripted())
        stage = JudgeStage("faithfulness", JUDGE_MODEL, {}, model=models[-1], calls=calls)
        runs.append(judge_metrics(stage(table)))
    (m1, c1), (m2, c2) = runs
    assert models[1].batches == []  # the second judge never reached the model
    assert c1["judge_cache_misses"] == 9 and c1["judge_cache_hits"] == 0
    assert c2["judge_cache_hits"] == 9 and c2["judge_cache_misses"] == 0
    assert m1["faithfulness_score"] == m2["faithfulness_score"]
