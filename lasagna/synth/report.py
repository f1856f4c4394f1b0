"""What `benchmark synthesize` prints: the plan (also for --dry-run) and the summary."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lasagna.synth.generate import SynthesisResult
from lasagna.synth.mix import QUESTION_TYPES
from lasagna.synth.plan import CHARS_PER_TOKEN, SynthPlan

MAX_LISTED = 20  # skipped / unreadable files listed by name; the rest are counted


def _files(console: Console, label: str, issues) -> None:
    for issue in issues[:MAX_LISTED]:
        console.print(f"  {label} {escape(issue.doc_id)}: {escape(issue.reason)}")
    if len(issues) > MAX_LISTED:
        console.print(f"  ... and {len(issues) - MAX_LISTED} more {label} file(s)")


def render_plan(plan: SynthPlan, console: Console) -> None:
    ex = plan.extraction
    console.print(
        f"[bold]Documents[/] under {escape(plan.folder)}: {len(ex.documents)} read, "
        f"{len(ex.skipped)} skipped (unsupported), {len(ex.failed)} unreadable"
    )
    _files(console, "skipped", ex.skipped)
    _files(console, "unreadable", ex.failed)
    console.print(f"[bold]Passages[/]: {len(plan.passages)} (fixed 200-word chunks)")
    table = Table(title=f"Plan: n={plan.n}, seed={plan.seed}", title_justify="left")
    for col in ("type", "share", "requested", "asked", "LLM calls"):
        table.add_column(col, justify="left" if col == "type" else "right")
    for t in QUESTION_TYPES:
        asked = plan.asked(t)
        table.add_row(t, f"{plan.mix[t]:g}", str(plan.requested[t]), str(asked), str(2 * asked))
    total = len(plan.questions)
    table.add_row("total", "1", str(plan.n), str(total), str(2 * total), style="bold")
    console.print(table)
    for note in plan.notes:
        console.print(f"[yellow]note[/]: {escape(note)}")
    prompt_tokens, output_tokens = plan.estimate_tokens()
    console.print(
        f"LLM calls: {2 * total} (one writes each question, one checks it). Token estimate: "
        f"~{prompt_tokens:,} prompt + at most {output_tokens:,} output tokens. Estimated as "
        f"the characters of each exact prompt / {CHARS_PER_TOKEN} (check prompts with a "
        "typical draft in place of the question); output is each call's max_tokens budget."
    )


def render_summary(result: SynthesisResult, console: Console) -> None:
    console.print(f"[bold]Synthesized[/] with {escape(result.model)}")
    table = Table()
    for col in ("type", "asked", "kept", "dropped"):
        table.add_column(col, justify="left" if col == "type" else "right")
    counts = result.counts()
    for t in QUESTION_TYPES:
        c = counts[t]
        table.add_row(t, str(c["asked"]), str(c["kept"]), str(c["dropped"]))
    table.add_row(
        "total",
        str(sum(c["asked"] for c in counts.values())),
        str(len(result)),
        str(len(result.dropped)),
        style="bold",
    )
    console.print(table)
    reasons = result.drop_reasons()
    if reasons:
        why = Table(title="Dropped, by reason", title_justify="left")
        why.add_column("type")
        why.add_column("reason", overflow="fold", max_width=70)
        why.add_column("rows", justify="right")
        for (qtype, reason), count in sorted(reasons.items(), key=lambda kv: (kv[0][0], -kv[1])):
            why.add_row(qtype, escape(reason), str(count))
        console.print(why)
    minutes = result.seconds / 60
    # a rate only for calls the model made: cached replies would make it read thousands
    rate = f", {len(result) / minutes:.1f} kept per minute" if minutes > 0 else ""
    reused = ""
    if result.cached_calls:
        rate, reused = "", f" ({result.cached_calls} from the model-call cache)"
    console.print(f"{result.calls} LLM calls{reused} in {result.seconds:.0f} s{rate}")
    console.print(
        "[dim]A synthetic set is for comparing configurations while you build; report results "
        "on human-written questions (docs/synthesis.md).[/]"
    )
