"""The statistics behind every interval and test the tool shows. Pure functions; exact arithmetic
except the bootstrap, which is deterministic for a given seed."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "bootstrap_mean_interval",
    "bootstrap_mean_intervals",
    "bootstrap_mean_of_means_interval",
    "holm",
    "mcnemar_exact",
    "wilson_interval",
]

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
    return bootstrap_mean_intervals([values], resamples=resamples, seed=seed, confidence=confidence)[0]


def bootstrap_mean_intervals(
    samples: Sequence[Sequence[float]], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> list[tuple[float, float] | None]:
    """:func:`bootstrap_mean_interval` of each sample, at a fraction of the cost.

    The draws depend only on a sample's size and the seed, so samples of one
    size (every metric over the same test points) share one set of draws,
    and a sample equal to an earlier one (a metric that no longer changes
    past some cutoff) is not resampled again. Each result is what
    :func:`bootstrap_mean_interval` gives for that sample alone.
    """
    import numpy as np

    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    out: list[tuple[float, float] | None] = [None] * len(samples)
    by_size: dict[int, dict[bytes, list[int]]] = {}
    arrays = [np.asarray(values, dtype=np.float64) for values in samples]
    for position, data in enumerate(arrays):
        if data.size:
            by_size.setdefault(data.size, {}).setdefault(data.tobytes(), []).append(position)
    tail = (1 - confidence) / 2 * 100
    for n, distinct in by_size.items():
        rows = [arrays[positions[0]] for positions in distinct.values()]
        means = np.empty((len(rows), resamples), dtype=np.float64)
        rng = np.random.default_rng(seed)
        block = max(1, _BOOTSTRAP_BLOCK // n)
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            drawn = rng.integers(0, n, size=(stop - start, n))
            for row, data in enumerate(rows):
                means[row, start:stop] = data[drawn].mean(axis=1)
        for row, (data, positions) in enumerate(zip(rows, distinct.values(), strict=True)):
            low, high = np.percentile(means[row], [tail, 100 - tail])
            smallest, largest = float(data.min()), float(data.max())
            interval = (min(max(float(low), smallest), largest), min(max(float(high), smallest), largest))
            for position in positions:
                out[position] = interval
    return out


def bootstrap_mean_of_means_interval(
    groups: Sequence[Sequence[float]], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float] | None:
    """A percentile-bootstrap interval of the mean of the groups' means (a task-averaged score: every
    question type weighs the same, whatever its size); ``None`` without a non-empty group.

    Stratified: each resample draws every group's own values with replacement, as many as it has, so each
    type keeps its size and its weight; groups are drawn in order from one ``default_rng(seed)``, so the same
    groups and seed always give the same interval. The bounds are kept within the smallest and largest value.
    """
    import numpy as np

    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    arrays = [np.asarray(values, dtype=np.float64) for values in groups if len(values)]
    if not arrays:
        return None
    rng = np.random.default_rng(seed)
    total = np.zeros(resamples, dtype=np.float64)
    for data in arrays:
        block = max(1, _BOOTSTRAP_BLOCK // data.size)
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            total[start:stop] += data[rng.integers(0, data.size, size=(stop - start, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(total / len(arrays), [tail, 100 - tail])
    smallest, largest = min(float(a.min()) for a in arrays), max(float(a.max()) for a in arrays)
    return min(max(float(low), smallest), largest), min(max(float(high), smallest), largest)
