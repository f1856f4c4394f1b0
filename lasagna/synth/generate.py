"""Two calls per question: one writes it, a second checks it; failing rows are dropped and counted.

`run_plan` takes a `complete` function (a batch of ChatRequests -> one Completion each,
in order), so the same logic runs on vLLM actors, an API client, or a unit test's scripted
replies. Nothing here raises on a bad model output: every failure is a `Dropped` row.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lasagna.data.chunk import content_words
from lasagna.metrics.qa import compute_f1, is_abstention
from lasagna.models.base import ChatRequest, Completion
from lasagna.models.structured import ReplyError, read_reply
from lasagna.synth.mix import QUESTION_TYPES
from lasagna.synth.plan import PlannedQuestion, SynthPlan
from lasagna.synth.prompts import GENERATION_PROMPTS, VERIFY_ANSWER, prompt_id

Complete = Callable[[list[ChatRequest], str], list[Completion]]  # (requests, phase label)
ROUNDTRIP_F1 = 0.5  # the check's answer vs the proposed one, SQuAD token F1
GROUNDED = 0.5  # the share of an answer's words that its passages must hold
ABSTAIN_PHRASES = (
    "unanswerable",
    "not answerable",
    "cannot be answered",
    "no answer",
    "unknown",
    "not stated",
    "not mentioned",
    "none",
)


@dataclass(frozen=True)
class Dropped:
    row_id: str
    qtype: str
    stage: str  # "write" or "check"
    reason: str


class SynthesisResult(list):
    """The kept rows (a list of dicts, ready for `write_jsonl`) and how they were made."""

    def __init__(self, rows: list[dict], plan: SynthPlan, model: str, dropped: list[Dropped]):
        super().__init__(rows)
        self.plan, self.model, self.dropped = plan, model, dropped
        self.calls = 0
        self.cached_calls = 0  # answered by the model-call cache, not the model
        self.seconds = 0.0
        self.phase_seconds: dict[str, float] = {}  # "write", "check": wall time of each phase
        self.completion_tokens: dict[str, int] = {}

    def counts(self) -> dict[str, dict[str, int]]:
        """Per type: asked, kept, dropped."""
        kept = Counter(r["metadata"]["question_type"] for r in self)
        lost = Counter(d.qtype for d in self.dropped)
        return {
            t: {"asked": self.plan.asked(t), "kept": kept[t], "dropped": lost[t]}
            for t in QUESTION_TYPES
        }

    def drop_reasons(self) -> Counter[tuple[str, str]]:
        return Counter((d.qtype, d.reason) for d in self.dropped)


def parse_reply(completion: Completion, schema: dict[str, Any]) -> tuple[dict | None, str | None]:
    """The reply as a dict valid against the schema, or (None, the short reason it is
    dropped for: grouped in the counts, so without the reply's text)."""
    try:
        value, _ = read_reply(completion, schema, constrained=False)
    except ReplyError as err:
        if err.kind == "model error":
            return None, f"model error: {completion.error}"
        return None, f"unparseable output: {err.kind}"
    return value, None


def _norm(question: str) -> str:
    return re.sub(r"\s+", " ", question.casefold()).strip(" ?.!")


@dataclass
class _Draft:
    q: PlannedQuestion
    question: str
    answer: str


def _draft(
    q: PlannedQuestion, completion: Completion, sources: frozenset[str]
) -> tuple[_Draft | None, str | None]:
    """The reply as a draft, or why it is dropped. `sources`: its passages' content words.

    The word rules follow the prompts: a question is about its passage (so it names
    something the passage names; "What is the answer to the question?" names nothing), an
    answer is copied from it (so most of its words are the passage's) and tells something
    the question does not (an answer whose words are all the question's tells nothing).
    """
    value, reason = parse_reply(completion, GENERATION_PROMPTS[q.qtype].schema)
    if value is None:
        return None, reason
    question = " ".join(value["question"].split())
    answer = " ".join(str(value.get("answer", "")).split())
    if len(question) < 8:
        return None, "empty or too short question"
    if not content_words(question) & sources:
        return None, "question names nothing in its passages"
    if q.qtype != "unanswerable":
        if not answer:
            return None, "empty answer"
        words = content_words(answer)
        if _norm(answer) == _norm(question) or (words and words <= content_words(question)):
            return None, "answer repeats the question"
        if words and len(words & sources) < GROUNDED * len(words):
            return None, "answer not from its passages (under half its words are theirs)"
    return _Draft(q, question, answer), None


def _check(d: _Draft, completion: Completion) -> str | None:
    """None when the second call agrees with the draft, else the reason it is dropped.

    The check answers the question from the passages. An answerable draft is kept when that
    answer matches the proposed one (SQuAD token F1 >= ROUNDTRIP_F1); an unanswerable one
    when the check abstains (its passage and three neighbours give no answer).
    """
    value, reason = parse_reply(completion, VERIFY_ANSWER.schema)
    if value is None:
        return f"check failed: {reason}"
    answer = value["answer"]
    if d.q.qtype == "unanswerable":
        if is_abstention(answer, ABSTAIN_PHRASES):
            return None
        return "answered from its passage or its 3 word-sharing neighbours"
    if compute_f1(d.answer, answer) >= ROUNDTRIP_F1:
        return None
    return f"not supported: the check's answer from the passages differs (F1 < {ROUNDTRIP_F1})"


def _row(d: _Draft, plan: SynthPlan, model: str) -> dict[str, Any]:
    sources = [plan.passages[i] for i in d.q.sources]
    prompt = GENERATION_PROMPTS[d.q.qtype]
    unanswerable = d.q.qtype == "unanswerable"
    return {
        "id": d.q.row_id,
        "question": d.question,
        "answer": "" if unanswerable else d.answer,
        "contexts": [p.text for p in sources],
        "metadata": {
            "question_type": d.q.qtype,
            "source_doc_ids": list(dict.fromkeys(p.doc_id for p in sources)),
            "prompt_id": prompt_id(prompt),
            "prompt_sha256": prompt.sha256,
            "model": model,
            "seed": plan.seed,
            "synthetic": True,
            "unanswerable": unanswerable,
        },
    }


def run_plan(plan: SynthPlan, complete: Complete, model: str) -> SynthesisResult:
    """Write every planned question, check each draft, keep what passes (in plan order)."""
    start = time.perf_counter()
    dropped: list[Dropped] = []
    written = complete([plan.generation_request(q) for q in plan.questions], "writing questions")
    wrote_at = time.perf_counter()
    drafts: list[_Draft] = []
    for q, completion in zip(plan.questions, written, strict=True):
        sources = frozenset().union(*(plan.passages[i].words for i in q.sources))
        draft, reason = _draft(q, completion, sources)
        if draft is None:
            dropped.append(Dropped(q.row_id, q.qtype, "write", reason or "unknown"))
        else:
            drafts.append(draft)
    checks = complete(
        [plan.verification_request(d.q, d.question, d.answer) for d in drafts],
        "checking questions",
    )
    checked_at = time.perf_counter()
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for d, completion in zip(drafts, checks, strict=True):
        reason = _check(d, completion)
        if reason is None and _norm(d.question) in seen:
            reason = "duplicate question"
        if reason is not None:
            dropped.append(Dropped(d.q.row_id, d.q.qtype, "check", reason))
            continue
        seen[_norm(d.question)] = d.q.row_id
        rows.append(_row(d, plan, model))
    result = SynthesisResult(rows, plan, model, dropped)
    result.calls = len(written) + len(checks)
    result.cached_calls = sum(c.cached is True for c in [*written, *checks])
    result.seconds = time.perf_counter() - start
    result.phase_seconds = {"write": wrote_at - start, "check": checked_at - wrote_at}
    result.completion_tokens = {
        "write": sum(c.completion_tokens for c in written),
        "check": sum(c.completion_tokens for c in checks),
    }
    return result
