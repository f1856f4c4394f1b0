"""`lasagna results compare --questions N`: which questions a difference comes from.

A mean difference of +0.03 can be 30 questions a little better or 3 much better and 2
much worse; the paired tests say whether it is real, not where it is. For each compared
pair (two systems of a run, or a system before and after across two runs) this counts the
questions B scores higher, lower and the same as A, and lists the N questions B gains most
on and the N it loses most on, with the question's text, so the cases to read are found
without SQL. Per-question scores are the same means the paired tests use
(lasagna.results.pairwise.question_means: each question's mean over its repeats).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from lasagna.results.model import TrialMeta
    from lasagna.results.pairwise import Pair, SystemScores
    from lasagna.results.runs import Run

SAME = 1e-9  # closer than this: the same score (sums of floats differ in the last bits)
TEXT_COLUMNS = ("question", "input")  # what a row's question is called, by track
ANSWER = "prediction"  # a generation row's answer: shown beside its score


@dataclass(frozen=True)
class QuestionDiff:
    id: str
    question: str  # "" when the rows keep no text
    a: float
    b: float
    answer_a: str | None = None  # each side's answer, where the rows keep one (generation)
    answer_b: str | None = None

    @property
    def diff(self) -> float:
        return self.b - self.a


@dataclass
class Differences:
    """B against A question by question: how many are better, worse and the same, and the
    largest gains and losses (the largest first)."""

    better: int
    worse: int
    same: int
    gains: list[QuestionDiff] = field(default_factory=list)
    losses: list[QuestionDiff] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """The counts and lists as JSON-ready fields of a compared pair's record."""

        def items(xs: list[QuestionDiff]) -> list[dict[str, Any]]:
            return [
                {"id": x.id, "question": x.question, "a": x.a, "b": x.b}
                | (
                    {"answer_a": x.answer_a, "answer_b": x.answer_b}
                    if x.answer_a is not None
                    else {}
                )
                for x in xs
            ]

        return {
            "better": self.better,
            "worse": self.worse,
            "same": self.same,
            "gains": items(self.gains),
            "losses": items(self.losses),
        }


def differences(
    a: Mapping[str, float],
    b: Mapping[str, float],
    texts: Mapping[str, str],
    n: int,
    answers: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
) -> Differences:
    """B against A on the questions both scored; `n` gains and `n` losses, the largest
    first (ties by question id, so the lists are the same every time); `answers`: each
    side's answer by question, shown with the listed ones."""
    diffs = [(b[q] - a[q], q) for q in sorted(set(a) & set(b))]
    up = sorted((x for x in diffs if x[0] > SAME), key=lambda x: (-x[0], x[1]))
    down = sorted((x for x in diffs if x[0] < -SAME), key=lambda x: (x[0], x[1]))

    def item(q: str) -> QuestionDiff:
        said = (answers[0].get(q, ""), answers[1].get(q, "")) if answers else (None, None)
        return QuestionDiff(q, texts.get(q, ""), a[q], b[q], *said)

    return Differences(
        better=len(up),
        worse=len(down),
        same=len(diffs) - len(up) - len(down),
        gains=[item(q) for _, q in up[:n]],
        losses=[item(q) for _, q in down[:n]],
    )


def question_texts(parts: list[tuple[Run, TrialMeta]]) -> dict[str, str]:
    """question id -> its text, from the first trial's rows that keep one."""
    for run, trial in parts:
        rows = run.rows(trial.key)
        column = next((c for c in TEXT_COLUMNS if c in rows.column_names), None)
        if column is not None:
            ids = [str(i) for i in rows["id"].to_pylist()]
            return {i: str(t or "") for i, t in zip(ids, rows[column].to_pylist(), strict=True)}
    return {}


def system_answers(parts: list[tuple[Run, TrialMeta]]) -> dict[str, str] | None:
    """question id -> a system's answer (its first trial's), or None when its rows keep no
    answers (retrieval, judges)."""
    for run, trial in parts[:1]:
        rows = run.rows(trial.key)
        if ANSWER in rows.column_names:
            ids = [str(i) for i in rows["id"].to_pylist()]
            return {i: str(t or "") for i, t in zip(ids, rows[ANSWER].to_pylist(), strict=True)}
    return None


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())  # an answer's newlines would break the list
    return text if len(text) <= width else text[: width - 3] + "..."


def render_differences(console: Console, a: str, b: str, metric: str, d: Differences) -> None:
    """`B vs A on METRIC: better on 31, worse on 40, same on 29 of 100 question(s)`, then the
    gains and the losses, a line each: B - A, A's score, B's, the question (cut to fit the
    terminal) and its id, and under it each side's answer where the rows keep one."""
    total = d.better + d.worse + d.same
    console.print(
        f"{b} vs {a} on {metric}: better on {d.better}, worse on {d.worse}, same on {d.same} "
        f"of {total} question(s)",
        highlight=False,
        markup=False,
    )
    for title, xs in (("most gained", d.gains), ("most lost", d.losses)):
        if xs:
            console.print(f"  {title} (B - A, {a}, {b}):", highlight=False, markup=False)
        for x in xs:
            width = max(24, console.width - 34 - len(x.id))  # the line fits the terminal
            line = f"    {x.diff:+.4f}  {x.a:.4f}  {x.b:.4f}  {_cut(x.question, width)}  [{x.id}]"
            if x.answer_a is not None and x.answer_b is not None:
                half = max(12, (console.width - 16) // 2)
                line += f"\n      A: {_cut(x.answer_a, half)!r}  B: {_cut(x.answer_b, half)!r}"
            console.print(line, highlight=False, markup=False, soft_wrap=True)


def pair_differences(
    run: Run, systems: list[SystemScores], pairs: list[Pair], n: int
) -> list[Differences | None]:
    """The differences behind each pair of one run's group (aligned with `pairs`; None
    where a system has no per-question scores)."""
    by_label = {s.label: s for s in systems}
    texts = question_texts([(run, t) for s in systems for t in s.trials])
    said = {s.label: system_answers([(run, t) for t in s.trials]) for s in systems}
    out: list[Differences | None] = []
    for p in pairs:
        a, b = by_label[p.a].questions, by_label[p.b].questions
        answers = (said[p.a], said[p.b])
        both = answers if answers[0] is not None and answers[1] is not None else None
        out.append(None if a is None or b is None else differences(a, b, texts, n, both))
    return out


def runs_differences(
    a: tuple[Run, list[TrialMeta]],
    b: tuple[Run, list[TrialMeta]],
    metric: str,
    n: int,
    ids: set[str] | None = None,
) -> Differences | None:
    """A system before (run A) and after (run B) question by question; `ids`: a slice's
    questions only. None where a side has no per-question scores."""
    from lasagna.results.pairwise import system_scores

    sides = [
        system_scores("", [(run, t) for t in trials], metric).questions for run, trials in (a, b)
    ]
    if sides[0] is None or sides[1] is None:
        return None
    qa, qb = ({q: v for q, v in s.items() if ids is None or q in ids} for s in sides)
    texts = question_texts([(b[0], t) for t in b[1]] + [(a[0], t) for t in a[1]])
    said = [system_answers([(run, t) for t in trials]) for run, trials in (a, b)]
    both = (said[0], said[1]) if said[0] is not None and said[1] is not None else None
    return differences(qa, qb, texts, n, both)
