"""Retrieve latency against memory size: the slope of log latency over log records held, per strategy.

Plays each strategy over a synthetic corpus of long conversations with many
test points (``gen_corpus.py``), so retrieve calls are made with the memory
holding from a handful to thousands of records, buckets the calls by records
held (powers of two, as the store does) and fits the slope on log-log axes.
A search that reads every record has slope 1; an index, less.

    python bench/bench_latency_size.py                        # mneme, in memory and on SQLite
    python bench/bench_latency_size.py --strategies bm25,mneme --turns 4000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _suite import Context, benchmark  # noqa: E402
from bench_harness import cached_corpus  # noqa: E402

from evals.judge.metrics import latency_by_size, latency_slope  # noqa: E402
from evals.model.formatting import milliseconds  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402

CONFIGS = {
    "mneme": {"strategy": "mneme", "options": {"backend": "memory"}},
    "mneme-sqlite": {"strategy": "mneme", "options": {"backend": "sqlite"}},
    "bm25": {"strategy": "bm25"},
    "full_history": {"strategy": "full_history"},
}


@benchmark(slow=True)
def slopes(ctx: Context) -> dict[str, float]:
    """The slope of log retrieve latency over log records held, mneme in memory and on SQLite (1: reads every record)."""
    corpus = cached_corpus(*((2, 1000, 20) if ctx.quick else (4, 4000, 60)), 0, ctx.cache)
    figures = {}
    for name in ("mneme", "mneme-sqlite"):
        slope = latency_slope(latency_by_size(evaluate(RunConfig(corpus=corpus, cutoffs=(), **CONFIGS[name])).run.timings))
        if slope is not None:
            figures[f"{name}_slope"] = slope
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", default="mneme,mneme-sqlite", help=f"comma-separated from {', '.join(CONFIGS)}")
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--turns", type=int, default=4000)
    parser.add_argument("--test-points", type=int, default=60)
    args = parser.parse_args()
    corpus = cached_corpus(args.conversations, args.turns, args.test_points, 0)
    print(f"corpus: {args.conversations} conversations x {args.turns} turns, {args.test_points} test points each")
    for name in args.strategies.split(","):
        run = evaluate(RunConfig(corpus=corpus, cutoffs=(), **CONFIGS[name])).run
        buckets = latency_by_size(run.timings)
        slope = latency_slope(buckets)
        print(f"\n{name}: slope {'n/a' if slope is None else f'{slope:.2f}'} (1 = reads every record)")
        print(f"  {'records held':>14}  {'calls':>5}  {'p50':>9}  {'p95':>9}")
        for b in buckets:
            print(f"  {f'{b.held_low}-{b.held_high}':>14}  {b.n:>5}  {milliseconds(b.p50_s):>9}  {milliseconds(b.p95_s):>9}")


if __name__ == "__main__":
    main()
