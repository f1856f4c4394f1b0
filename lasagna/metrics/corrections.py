"""Multiple-comparison corrections of p-values: pure functions of a list of numbers.

A family is the set of tests read together (the pairs of systems compared on one metric of
one group). `adjust` returns adjusted p-values in the input's order, each capped at 1; a test
is significant at level alpha when its adjusted p-value is below alpha.

- none: the p-values as they are.
- bonferroni: p * m (m: the tests of the family with a p-value).
- holm: Holm's step-down: sort ascending, p_(i) * (m - i + 1) for the i-th smallest, then a
  running maximum so adjusted values keep the order of the raw ones. Never above Bonferroni,
  and it controls the family-wise error rate under any dependence between the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

CORRECTIONS = ("none", "bonferroni", "holm")
DEFAULT_CORRECTION = "holm"
ALPHA = 0.05


def adjust(
    p_values: Sequence[float | None], method: str = DEFAULT_CORRECTION
) -> list[float | None]:
    """The adjusted p-values; a None (no test possible) stays None and is not counted in m."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r} (one of: {', '.join(CORRECTIONS)})")
    present = {i: float(p) for i, p in enumerate(p_values) if p is not None}
    out: list[float | None] = [None] * len(p_values)
    m = len(present)
    if method == "none":
        out = [present.get(i) for i in range(len(p_values))]
    elif method == "bonferroni":
        for i, p in present.items():
            out[i] = min(1.0, p * m)
    else:
        running = 0.0
        for rank, (i, p) in enumerate(sorted(present.items(), key=lambda item: item[1])):
            running = max(running, min(1.0, p * (m - rank)))
            out[i] = running
    return out


def describe(method: str, m: int | None = None) -> str:
    """How a caption says which correction was applied (to how many tests)."""
    if method == "none":
        return "not adjusted for multiple comparisons"
    name = "Holm" if method == "holm" else "Bonferroni"
    return f"{name}-adjusted" + ("" if m is None else f" over {m} comparison(s)")
