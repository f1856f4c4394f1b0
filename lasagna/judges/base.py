"""The shared machinery of every judge benchmark: calls, replies, parsing, the batched runner.

A benchmark's `judge(case, params)` is a generator: it yields a list of `Call`s (one step:
e.g. "extract the claims"), receives one `Reply` per call, yields the next step's calls
("a verdict for each claim"), and finally returns the row's output metrics. `run_cases`
advances every row of a block together, so each step of a block is ONE engine call: all the
rows' claims go to the model as one batch (and share prefixes for vLLM's prefix cache).

A reply that does not match its schema is retried a bounded number of times on a backend
without constrained decoding; after that (or at once on a constrained backend) the row gets
an error, recorded and counted, never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from lasagna.common.digest import json_sha256
from lasagna.models.base import ChatModel, ChatRequest, Completion, Message
from lasagna.models.structured import Prompt, read_reply

MAX_RETRIES = 2  # extra attempts for an unparseable reply where decoding is not constrained
JUDGE_SEED = 0


@dataclass(frozen=True)
class Call:
    """One judge call: a prompt filled with fields; its reply must match prompt.schema."""

    prompt: Prompt
    fields: dict[str, str]
    logprobs: int | None = None  # top-k token log-probabilities wanted (G-Eval)
    once: bool = False  # the same call for every row (g-eval's steps): asked once a step

    def request(self, extra: list[Message] | None = None) -> ChatRequest:
        return self.prompt.request(
            self.fields, extra=extra, seed=JUDGE_SEED, logprobs=self.logprobs
        )


@dataclass
class Reply:
    """A parsed reply (`value`) or why there is none (`error`), with what it cost."""

    value: dict[str, Any] | None
    error: str | None = None
    completion: Completion | None = None
    invalid_outputs: int = 0  # replies that did not parse, retries included
    truncated_outputs: int = 0  # replies cut by max_tokens, closed and kept (see repair)
    shared: bool = False  # another row's identical call's reply: its cost is counted there


class JudgeFailed(Exception):
    """A row cannot be judged (a call failed); the runner records it as the row's error."""


Judgement = Generator[list[Call], list[Reply], dict[str, Any]]


class JudgeBenchmark(Protocol):
    """What every module of lasagna.judges provides (see faithfulness.py for one)."""

    ID: str
    NAME: str
    REQUIRED: tuple[str, ...]
    OPTIONAL: tuple[str, ...]
    OUTPUT_METRICS: tuple[str, ...]
    PRIMARY: str
    HIGHER_IS_BETTER: bool
    PROMPTS: tuple[Prompt, ...]

    def judge(self, case: dict[str, Any], params: Any) -> Judgement: ...


def values_of(replies: list[Reply]) -> list[dict[str, Any]]:
    """The parsed values of a step, or JudgeFailed naming the first failed call."""
    for reply in replies:
        if reply.value is None:
            raise JudgeFailed(reply.error or "the judge gave no reply")
    return [r.value for r in replies if r.value is not None]


def clean_items(items: list[str], limit: int) -> list[str]:
    """Extracted items stripped, without empty ones or repeats (small models loop), capped."""
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        text = item.strip()
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return out[:limit]


def ask(model: ChatModel, calls: list[Call], constrained: bool) -> list[Reply]:
    """Send calls as one batch; re-ask (bounded) the replies that do not parse."""
    replies: list[Reply | None] = [None] * len(calls)
    extra: list[list[Message]] = [[] for _ in calls]
    pending = list(range(len(calls)))
    invalid = [0] * len(calls)
    attempts = 1 if constrained else 1 + MAX_RETRIES
    for attempt in range(attempts):
        completions = model.generate([calls[i].request(extra[i]) for i in pending])
        still: list[int] = []
        for i, completion in zip(pending, completions, strict=True):
            if not completion.ok:
                replies[i] = Reply(None, completion.error, completion, invalid[i])
                continue
            try:
                value, cut = read_reply(completion, calls[i].prompt.schema, constrained)
            except ValueError as err:
                invalid[i] += 1
                replies[i] = Reply(None, f"invalid judge output: {err}", completion, invalid[i])
                if attempt + 1 < attempts:
                    extra[i] = [
                        Message(role="assistant", content=completion.text),
                        Message(
                            role="user",
                            content=f"That reply was not usable ({err}). Reply again with "
                            "only the JSON object.",
                        ),
                    ]
                    still.append(i)
                continue
            replies[i] = Reply(value, None, completion, invalid[i], int(cut))
        pending = still
        if not pending:
            break
    return [r if r is not None else Reply(None, "no reply") for r in replies]


def ask_once(model: ChatModel, calls: list[Call], constrained: bool) -> list[Reply]:
    """`ask`, with identical `once` calls of a step asked once (g-eval's steps, written from
    one criterion for every row): the first gets the reply, the others a shared copy."""
    first: dict[str | int, int] = {}
    unique: list[Call] = []
    where: list[int] = []
    for n, call in enumerate(calls):
        key = json_sha256([call.prompt.sha256, call.fields, call.logprobs]) if call.once else n
        if key not in first:
            first[key] = len(unique)
            unique.append(call)
        where.append(first[key])
    answered = ask(model, unique, constrained)
    seen: set[int] = set()
    out = []
    for at in where:
        reply = answered[at]
        out.append(reply if at not in seen else replace(reply, completion=None, shared=True))
        seen.add(at)
    return out


@dataclass
class RowResult:
    """The outcome of judging one row: output metrics, or an error; and what it cost."""

    metrics: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    invalid_outputs: int = 0
    truncated_outputs: int = 0
    cache_hits: int = 0  # calls answered by the model-call cache
    cache_misses: int = 0  # calls computed and stored in it


def run_cases(
    benchmark: JudgeBenchmark,
    cases: list[dict[str, Any]],
    model: ChatModel | None,
    params: Any,
    *,
    constrained: bool | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> list[RowResult]:
    """Judge a block of rows, one batched engine call per step; one RowResult per case."""
    if constrained is None:
        constrained = bool(getattr(model, "constrained_decoding", False))
    results = [RowResult() for _ in cases]
    live: dict[int, tuple[Judgement, list[Call]]] = {}
    for i, case in enumerate(cases):
        gen = benchmark.judge(case, params)
        _advance(gen, None, i, results, live)
    step = 0
    if model is None:  # a code judge (no prompts) that asks for a call anyway: its rows fail
        for i in live:
            results[i].error = "the judge asked for a model call, but it has no prompts"
        live.clear()
    while live:
        order = list(live)
        batch = [call for i in order for call in live[i][1]]
        replies = ask_once(model, batch, constrained)
        step += 1
        if on_step:
            on_step(step, len(batch))
        at = 0
        for i in order:
            gen, calls = live.pop(i)
            mine = replies[at : at + len(calls)]
            at += len(calls)
            _account(results[i], mine)
            _advance(gen, mine, i, results, live)
    return results


def _advance(
    gen: Judgement,
    replies: list[Reply] | None,
    i: int,
    results: list[RowResult],
    live: dict[int, tuple[Judgement, list[Call]]],
) -> None:
    """Feed replies into a row's judgement until it asks for calls, finishes or fails."""
    try:
        calls = gen.send(replies) if replies is not None else next(gen)
        while not calls:  # a step with nothing to ask (e.g. no claims): go straight on
            calls = gen.send([])
        live[i] = (gen, calls)
    except StopIteration as stop:
        results[i].metrics = stop.value or {}
    except JudgeFailed as err:
        results[i].error = str(err)
    except Exception as err:  # a bug or odd input must cost one row, not the block
        results[i].error = f"{type(err).__name__}: {err}"


def _account(result: RowResult, replies: list[Reply]) -> None:
    batch_latency = 0.0
    for reply in replies:
        if reply.shared:
            continue
        result.calls += 1
        result.invalid_outputs += reply.invalid_outputs
        result.truncated_outputs += reply.truncated_outputs
        if reply.completion is not None:
            result.cache_hits += reply.completion.cached is True
            result.cache_misses += reply.completion.cached is False
            result.prompt_tokens += reply.completion.prompt_tokens
            result.completion_tokens += reply.completion.completion_tokens
            batch_latency = max(batch_latency, reply.completion.latency_s)
    result.latency_s += batch_latency
