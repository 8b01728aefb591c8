"""The statistics behind every interval and test the tool shows. Pure functions; exact arithmetic
except the bootstrap, which is deterministic for a given seed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["bootstrap_mean_interval", "holm", "interval_block", "mcnemar_exact", "wilson_interval"]

Z_95 = 1.959963984540054  # the 97.5th percentile of the standard normal: 95% two-sided


def wilson_interval(hits: int, total: int, z: float = Z_95) -> tuple[float, float] | None:
    """95% Wilson score interval for a proportion; ``None`` when there is no observation.

    Wilson rather than the normal approximation because recall sits near 0 or
    1 on small corpora, where the normal interval leaves [0, 1].
    """
    if total <= 0:
        return None
    p = hits / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    # At the ends the bound is exactly 0 (or 1); the arithmetic leaves 5.55e-17 (or 0.9999999999999999).
    low = 0.0 if hits == 0 else max(0.0, centre - half)
    high = 1.0 if hits == total else min(1.0, centre + half)
    return low, high


def interval_block(hits: int, total: int) -> dict[str, Any]:
    """A proportion's 95% Wilson interval as the JSON shows it (``low``/``high`` null without data)."""
    interval = wilson_interval(hits, total)
    return {
        "method": "wilson",
        "level": 0.95,
        "low": interval[0] if interval else None,
        "high": interval[1] if interval else None,
    }


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    ``only_a`` test points are hits in run A alone, ``only_b`` in run B alone.
    Under the null hypothesis each discordant point is a fair coin, so the
    p-value is twice the smaller binomial(n, 1/2) tail, capped at 1; with no
    discordant point there is no evidence of a difference (p = 1). Computed
    with exact integers, so large n neither overflows nor underflows.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts cannot be negative")
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, tail / 2 ** (n - 1))


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Comparing m configurations at once makes a p below alpha by chance alone
    likelier than alpha; Holm's adjustment keeps the chance of any false
    alarm among them at most alpha, with no assumption about how the tests
    depend on each other, and is never less powerful than Bonferroni. The
    i-th smallest p is multiplied by (m - i + 1), capped at 1, and made no
    smaller than the adjusted p before it.
    """
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


# Resampled values drawn at once by the bootstrap, so tens of thousands of test points stay within a few tens of MB.
_BOOTSTRAP_BLOCK = 4_000_000


def bootstrap_mean_interval(
    values: Sequence[float], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float] | None:
    """A percentile-bootstrap interval of the mean of ``values``; ``None`` when there is none.

    For means of fractional scores (token F1, recall_frac, NDCG), where
    Wilson's interval, which is for counts of successes, does not apply.
    Draws ``resamples`` samples of ``len(values)`` values with replacement
    from numpy's ``default_rng(seed)`` (so the same values and seed always
    give the same interval; drawn in blocks, which gives the same draws as
    one call), and returns the (1 - confidence)/2 and (1 + confidence)/2
    quantiles of their means (linear interpolation between order statistics,
    numpy's default), kept within the smallest and largest value, which
    rounding could otherwise leave by an ulp. One value gives
    ``(value, value)``.
    """
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    n = data.size
    if n == 0:
        return None
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    block = max(1, _BOOTSTRAP_BLOCK // n)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        means[start:stop] = data[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    smallest, largest = float(data.min()), float(data.max())
    return min(max(float(low), smallest), largest), min(max(float(high), smallest), largest)
