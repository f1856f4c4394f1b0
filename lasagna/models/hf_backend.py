"""transformers `generate` backend: the fallback when vLLM is not installed, on CPU or GPU.

Batched with left padding (decoder-only models continue from the right edge), the model's chat
template, greedy decoding at temperature 0. Structured output (json_schema) is not enforced
here: the schema is appended to the conversation as an instruction and the caller validates.
Asked for log-probabilities (G-Eval), each generated token comes with its top-k alternatives
from the model's raw logits, as the vLLM backend gives them.
"""

from __future__ import annotations

import time
from itertools import groupby
from typing import TYPE_CHECKING

from lasagna.models.base import (
    ChatRequest,
    Completion,
    Sampling,
    error_completion,
    resolve_sampling,
    with_schema_instruction,
)
from lasagna.models.packaged import resolve_generator_model
from lasagna.models.precision import check_bf16_gpu

if TYPE_CHECKING:
    from lasagna.models.spec import ModelSpec


def torch_dtype(name: str, on_gpu: bool):
    """'auto' -> float32 on CPU (fastest there), bfloat16 on GPU; else the named torch dtype."""
    import torch

    if name == "auto":
        return torch.bfloat16 if on_gpu else torch.float32
    return getattr(torch, name)


def cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """Truncate at the first stop string (vLLM semantics: the stop string is not returned)."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


class HfChatModel:
    """A ChatModel on transformers; one instance per actor holds the model."""

    def __init__(self, spec: ModelSpec):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.spec = spec
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cuda" and spec.dtype == "auto":
            check_bf16_gpu()
        path = resolve_generator_model(spec)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(
            path, dtype=torch_dtype(spec.dtype, self.device == "cuda")
        ).to(self.device)
        self.model.eval()

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        """Requests with equal sampling run as one padded batch; a failing batch fails its rows."""
        out: list[Completion | None] = [None] * len(requests)
        sampled = [(resolve_sampling(self.spec, r), i) for i, r in enumerate(requests)]
        key = lambda item: (  # noqa: E731
            item[0].temperature,
            item[0].max_tokens,
            item[0].stop,
            item[0].seed,
            item[0].logprobs or 0,
        )
        for _, group in groupby(sorted(sampled, key=key), key=key):
            members = list(group)
            indices = [i for _, i in members]
            start = time.perf_counter()
            try:
                done = self._generate_batch([requests[i] for i in indices], members[0][0])
            except Exception as exc:  # the pipeline records the failure per row
                done = [error_completion(exc, time.perf_counter() - start)] * len(indices)
            for i, completion in zip(indices, done, strict=True):
                out[i] = completion
        return [c for c in out if c is not None]

    def _generate_batch(self, requests: list[ChatRequest], sampling: Sampling) -> list[Completion]:
        import torch

        start = time.perf_counter()
        prompts = [
            self.tokenizer.apply_chat_template(
                with_schema_instruction(r), tokenize=False, add_generation_prompt=True
            )
            for r in requests
        ]
        enc = self.tokenizer(  # no token_type_ids: some tokenizers make them, which decoder
            # models' generate refuses (transformers 4.x: "model_kwargs are not used")
            prompts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
            return_token_type_ids=False,
        ).to(self.device)
        kwargs: dict = {
            "max_new_tokens": sampling.max_tokens,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if sampling.temperature > 0:
            torch.manual_seed(sampling.seed or 0)
            kwargs.update(do_sample=True, temperature=sampling.temperature)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if sampling.stop:
            kwargs.update(stop_strings=list(sampling.stop), tokenizer=self.tokenizer)
        if sampling.logprobs:
            kwargs.update(output_logits=True, return_dict_in_generate=True)
        with torch.inference_mode():
            output = self.model.generate(**enc, **kwargs)
        generated = output.sequences if sampling.logprobs else output
        latency = time.perf_counter() - start
        width = enc["input_ids"].shape[1]
        eos = self.tokenizer.eos_token_id
        results = []
        for b, (row, mask) in enumerate(zip(generated, enc["attention_mask"], strict=True)):
            new = row[width:].tolist()
            pad = self.tokenizer.pad_token_id
            while new and new[-1] == pad and pad != eos:
                new.pop()
            n_tokens = len(new)
            hit_eos = eos in new
            if hit_eos:
                new = new[: new.index(eos)]
                n_tokens = len(new) + 1
            text, hit_stop = cut_at_stop(
                self.tokenizer.decode(new, skip_special_tokens=True), sampling.stop
            )
            finish = "stop" if (hit_eos or hit_stop) else "length"
            top = {}
            if sampling.logprobs:
                top = self._token_logprobs(new, output.logits, b, sampling.logprobs)
            results.append(
                Completion(
                    text=text.strip(),
                    prompt_tokens=int(mask.sum()),
                    completion_tokens=n_tokens,
                    latency_s=latency,
                    finish_reason=finish,
                    **top,
                )
            )
        return results

    def _token_logprobs(self, new: list[int], logits: tuple, row: int, k: int) -> dict:
        """Each generated token of `row`, decoded, and its top-k alternatives {decoded token:
        log-probability} (log-softmax of the raw logits at that step)."""
        import torch

        decode = self.tokenizer.decode
        tokens, top = [], []
        for step, token in enumerate(new):
            logprobs = torch.log_softmax(logits[step][row].float(), dim=-1)
            values, ids = torch.topk(logprobs, k)
            tokens.append(decode([token]))
            pairs = zip(values.tolist(), ids.tolist(), strict=True)
            top.append({decode([i]): float(v) for v, i in pairs})
        return {"tokens": tuple(tokens), "top_logprobs": tuple(top)}
