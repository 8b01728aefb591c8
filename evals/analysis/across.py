"""Where the order of two systems flips between benchmarks: the rule the across-benchmarks page states.

An order counts when the paired test over the test points both runs of a benchmark hold (McNemar's exact
test, as the compare pages use) gives p < :data:`FLIP_P`; a flip is two benchmarks with opposite orders that
each count. One pair can flip on several pairs of benchmarks, and each is said.
"""

from __future__ import annotations

from evals.model.formatting import p_value_text

__all__ = ["FLIP_P", "flip_notes"]

FLIP_P = 0.05  # a flip is noted when each benchmark's order has a paired p below this


def flip_notes(orders: dict[tuple[str, str], dict[str, tuple[int, float]]], titles: dict[str, str]) -> list[str]:
    """From each pair of systems' order on each benchmark (1: the first ahead, -1: behind, 0: level; and the paired
    p), a note for every two benchmarks on which the pair's order is reversed with p < FLIP_P on both."""
    notes = []
    for (x, y), by_benchmark in orders.items():
        ahead = [(b, p) for b, (sign, p) in by_benchmark.items() if sign > 0 and p < FLIP_P]
        behind = [(b, p) for b, (sign, p) in by_benchmark.items() if sign < 0 and p < FLIP_P]
        for (b1, p1), (b2, p2) in ((a, b) for a in ahead for b in behind):
            notes.append(
                f"{x} is ahead of {y} on {titles[b1]} (paired p = {p_value_text(p1)}) and behind it on {titles[b2]} "
                f"(p = {p_value_text(p2)})."
            )
    return notes
