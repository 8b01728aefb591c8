"""What timing every call into the strategy costs: the per-call clock reads against a whole run.

The play-through reads ``perf_counter_ns`` twice around every ``add`` and
``retrieve`` and appends the difference to a list; before every retrieve it
asks the memory how many records it holds (for latency against size), and at
the end of each conversation which texts it holds (the footprint). This
script plays mneme (hash embedder) over the 200 x 500 corpus of
``bench_harness.py``, counts the calls the run made, then times that many
clock-read pairs and appends alone, and that many ``held_count()`` calls and
one ``held_texts()`` per conversation on a memory holding a whole
conversation, and prints their share of the run. Target: under 3%.

It also plays the run measured at k only (``--cutoffs`` empty, as the
original CLI does) and prints what retrieving once at the deepest cutoff (50)
instead of at k costs: not instrumentation, but part of what a run now does.

    python bench/bench_timing.py [--conversations 200 --turns 500]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _suite import Context, benchmark  # noqa: E402
from bench_harness import cached_corpus  # noqa: E402

from evals.run.evaluate import RunConfig, evaluate  # noqa: E402

TARGET = 0.03


def timing_overhead_s(calls: int, repeat: int = 5) -> float:
    """Best-of wall time of ``calls`` clock-read pairs with an append, as the play-through does them."""
    best = float("inf")
    for _ in range(repeat):
        sink: list[int] = []
        clock = time.perf_counter()
        for _ in range(calls):
            started = time.perf_counter_ns()
            sink.append(time.perf_counter_ns() - started)
        best = min(best, time.perf_counter() - clock)
    return best


def footprint_overhead_s(retrieves: int, conversations: int, turns: int) -> float:
    """Wall time of ``retrieves`` held_count() calls and ``conversations`` held_texts() calls on a Mneme
    memory holding ``turns`` records: the worst case, a memory at the end of a conversation."""
    from evals.strategies.mneme import Mneme

    strategy = Mneme()
    for i in range(turns):
        strategy.add("user", f"filler turn {i} with a few words in it", turn=i)
    clock = time.perf_counter()
    for _ in range(retrieves):
        strategy.held_count()
    for _ in range(conversations):
        list(strategy.held_texts())
    return time.perf_counter() - clock


def instrumentation(corpus: Path, turns: int) -> dict[str, float]:
    """A mneme run on ``corpus`` and what its timing costs: run seconds, calls timed, clock-read and footprint
    seconds, their share of the run, and the run measured at k only (no cutoffs)."""
    clock = time.perf_counter()
    run = evaluate(RunConfig(strategy="mneme", corpus=corpus)).run
    seconds = time.perf_counter() - clock
    calls = len(run.timings.add_ns) + len(run.timings.retrieve_ns)
    clocks = timing_overhead_s(calls)
    footprint = footprint_overhead_s(len(run.timings.retrieve_ns), len(run.conversations), turns)
    clock = time.perf_counter()
    evaluate(RunConfig(strategy="mneme", corpus=corpus, cutoffs=()))
    at_k = time.perf_counter() - clock
    return {
        "run_s": seconds,
        "calls": calls,
        "clock_reads_s": clocks,
        "footprint_s": footprint,
        "instrumentation_share": (clocks + footprint) / seconds,
        "at_k_only_s": at_k,
    }


@benchmark(targets={"instrumentation_share": "<= 0.03"}, slow=True)
def timing_cost(ctx: Context) -> dict[str, float]:
    """What timing every call into mneme costs, as a share of a 200 x 500 run."""
    size = (20, 100, 5) if ctx.quick else (200, 500, 5)
    return instrumentation(cached_corpus(*size, 0, ctx.cache), size[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--test-points", type=int, default=5)
    args = parser.parse_args()
    f = instrumentation(cached_corpus(args.conversations, args.turns, args.test_points, 0), args.turns)
    overhead = f["clock_reads_s"] + f["footprint_s"]
    print(f"mneme-hash on {args.conversations} x {args.turns}: {f['run_s']:.2f} s, {f['calls']:,.0f} calls timed")
    print(f"  clock reads: {f['clock_reads_s'] * 1000:.1f} ms; held_count(), held_texts(): {f['footprint_s'] * 1000:.1f} ms")
    share = f["instrumentation_share"]
    verdict = "meets" if share < TARGET else "MISSES"
    print(f"instrumentation: {overhead * 1000:.1f} ms = {share:.2%} of the run (target < {TARGET:.0%}: {verdict})")
    extra = f["run_s"] - f["at_k_only_s"]
    print(f"measured at k only (no cutoffs): {f['at_k_only_s']:.2f} s; retrieving at 50 for every cutoff: {extra:+.2f} s")


if __name__ == "__main__":
    main()
