"""The strategy under test at run time: the latency of its calls (and against memory size), its prefetch, and
what its memory holds at the end of each conversation."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from evals.judge.metrics._registry import COUNT, SECONDS, TOKENS, MetricValue, ScoredRun, metric
from evals.model.results import CallTimings

# -- latency of the strategy under test --------------------------------------------------------


def _percentile(values: list[int], q: float) -> float:
    """The q-th percentile (nearest rank on the sorted values: a time some call really took), in seconds."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1] / 1e9


def _latency(calls: str, q: float) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        timings = run.run.timings
        if timings is None:
            return None  # read back or imported: the stored value stands
        values = getattr(timings, calls)
        return MetricValue(_percentile(values, q) if values else None, len(values))

    return compute


for _calls, _label in (("retrieve_ns", "retrieve"), ("add_ns", "add")):
    for _q in (50, 95, 99):
        metric(
            f"{_label}_latency_p{_q}_s",
            label=f"{_label} p{_q}",
            kind=SECONDS,
            higher_is_better=False,
            optional=True,
            leaderboard=_label == "retrieve" and _q in (50, 95),
            description=f"{_q}th percentile of the wall-clock time of one {_label} call into the strategy"
            + (
                " at the run's k (a deeper ranking for other cutoffs is asked apart and not timed)."
                if _label == "retrieve"
                else " (a memory that buffers its writes makes them in flush(), not counted here: see ingest CPU)."
            ),
        )(_latency(_calls, _q))


def _unqueued(q: float) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        timings = run.run.timings
        if timings is None or not timings.retrieve_queued_ns:
            return None  # read back or imported (the stored value stands), or the system did not say
        values = [max(0, ns - queued) for ns, queued in zip(timings.retrieve_ns, timings.retrieve_queued_ns, strict=True)]
        return MetricValue(_percentile(values, q), len(values))

    return compute


for _q in (50, 95):
    metric(
        f"retrieve_latency_unqueued_p{_q}_s",
        label=f"retrieve p{_q} (unqueued)",
        kind=SECONDS,
        higher_is_better=False,
        optional=True,
        leaderboard=False,  # the gate's figure; the leaderboard keeps the wall-clock p95 it always showed
        description=f"{_q}th percentile of one retrieve call's wall-clock time less the time its thread waited for "
        "a processor: what the call takes on an idle machine, whatever else the machine ran (the gate's latency).",
    )(_unqueued(_q))


@dataclass(frozen=True)
class LatencyBucket:
    """Retrieve calls made while the memory held from ``held_low`` to ``held_high`` records."""

    held_low: int
    held_high: int
    n: int
    p50_s: float
    p95_s: float
    mean_s: float


def latency_by_size(timings: CallTimings) -> list[LatencyBucket]:
    """Retrieve latency bucketed by the records held at each call, in powers of two (0, 1, 2-3, 4-7, ...).

    On log-log axes an O(n) search is a line of slope 1 through these buckets; a flat line is an index."""
    buckets: dict[int, list[int]] = {}
    for held, ns in zip(timings.retrieve_held, timings.retrieve_ns, strict=False):
        buckets.setdefault(held.bit_length(), []).append(ns)
    out = []
    for bits, values in sorted(buckets.items()):
        low, high = (0, 0) if bits == 0 else (1 << (bits - 1), (1 << bits) - 1)
        out.append(
            LatencyBucket(
                low, high, len(values), _percentile(values, 50), _percentile(values, 95), sum(values) / len(values) / 1e9
            )
        )
    return out


SLOPE_SIZES = 3  # memory sizes (buckets of records held) a latency slope needs: two points always make a line


def latency_sizes(buckets: list[LatencyBucket]) -> int:
    """How many distinct memory sizes (buckets of non-empty memory with a latency) the run retrieved at."""
    return len({(b.held_low, b.held_high) for b in buckets if b.held_low > 0 and b.p50_s > 0})


def latency_slope(buckets: list[LatencyBucket]) -> float | None:
    """The least-squares slope of log p50 against log records held (the buckets' geometric middles),
    weighted by calls; None with fewer than :data:`SLOPE_SIZES` buckets of non-empty memory.

    A line through two sizes is exact whatever the latency does (on LoCoMo every question comes after the
    whole history, so each conversation is one size, and ten conversations make two buckets): it would
    print a slope the data cannot support."""
    points = [
        (math.log((b.held_low * b.held_high) ** 0.5), math.log(b.p50_s), b.n) for b in buckets if b.held_low > 0 and b.p50_s > 0
    ]
    if latency_sizes(buckets) < SLOPE_SIZES:
        return None
    weight = sum(w for _, _, w in points)
    mx = sum(x * w for x, _, w in points) / weight
    my = sum(y * w for _, y, w in points) / weight
    return sum(w * (x - mx) * (y - my) for x, y, w in points) / sum(w * (x - mx) ** 2 for x, _, w in points)


@metric(
    "prefetch_s",
    label="prefetch",
    kind=SECONDS,
    higher_is_better=False,
    optional=True,
    leaderboard=False,
    description=(
        "Wall-clock time of embedding every text up front (Prefetching strategies), kept apart from the per-call latencies."
    ),
)
def prefetch_s(run: ScoredRun) -> MetricValue | None:
    timings = run.run.timings
    if timings is None or timings.prefetch_ns is None:
        return None
    return MetricValue(timings.prefetch_ns / 1e9, 1)


# -- what ingestion and the memory cost -----------------------------------------------------------


@metric(
    "ingest_cpu_s_per_1k_turns",
    label="ingest CPU / 1k turns",
    kind=SECONDS,
    higher_is_better=False,
    optional=True,
    description="CPU seconds of ingestion per 1,000 turns added: the CPU time of every add call and of every buffered "
    "write the memory makes before the next test point (flush()), on the thread playing the memory, summed over every "
    "player of the run. Work a library hands to threads of its own, and embedding up front (prefetch), are not in it.",
)
def ingest_cpu_s_per_1k_turns(run: ScoredRun) -> MetricValue | None:
    timings = run.run.timings if run.run is not None else None
    if timings is None or timings.ingest_cpu_ns is None or not timings.turns_added:
        return None  # read back or imported (the stored value stands), measured before, or no turn added
    return MetricValue(timings.ingest_cpu_ns / 1e9 / timings.turns_added * 1000, timings.turns_added)


@metric(
    "peak_rss_mb",
    label="peak RSS (MB)",
    kind=COUNT,
    higher_is_better=False,
    optional=True,
    description="Peak resident memory, in MB (10^6 bytes), of the process playing the memory, from the start of the "
    "play-through to its end (Linux's VmHWM, reset as the play-through starts): the memory's library and what it "
    "holds, and also the harness's own resident memory (the Python interpreter, the corpus, every module loaded, "
    "the embedder lent). The largest over a run's players; absent where the system allows no reset.",
)
def peak_rss_mb(run: ScoredRun) -> MetricValue | None:
    timings = run.run.timings if run.run is not None else None
    if timings is None or timings.peak_rss_kib is None:
        return None
    return MetricValue(round(timings.peak_rss_kib * 1024 / 1e6), 1)


# -- what the memory holds at the end of each conversation --------------------------------------


def _held(attribute: str, aggregate: Callable[[list[int]], float]) -> Callable[[ScoredRun], MetricValue | None]:
    def compute(run: ScoredRun) -> MetricValue | None:
        if run.run.timings is None:
            return None  # read back or imported: the stored value stands
        values = [getattr(c, attribute) for c in run.run.conversations]
        if not values or any(v is None for v in values):
            return None  # the strategy does not say what it holds (evals.strategies.Footprint)
        return MetricValue(aggregate(values), len(values))

    return compute


for _attribute, _what, _kind in (("held_records", "records", COUNT), ("held_tokens", "tokens", TOKENS)):
    for _aggregate, _fn, _said in (
        ("mean", lambda v: sum(v) / len(v), "Mean over conversations of the"),
        ("max", max, "Largest"),
    ):
        metric(
            f"{_what}_held_{_aggregate}",
            label=f"{_what} held ({_aggregate})",
            kind=_kind,
            higher_is_better=False,
            optional=True,
            leaderboard=False,
            description=f"{_said} {_what} the memory held when a conversation ended (its footprint).",
        )(_held(_attribute, _fn))
