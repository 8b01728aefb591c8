"""Benchmarks for the results store, against its targets.

    python bench/suite.py run -b bench_store   # all three, in the suite, figure vs target
    python bench/bench_store.py --keep DIR     # the same by hand, keeping the generated stores in DIR

1. append: one full_history run with 10,000 test points over 200 conversations
   of 500 turns (2.5 M retrieved records), timed from open to close.   < 1 s
2. leaderboard: latest run per configuration on a store of 1,000 runs.   < 100 ms
3. size: a store holding one full_history run of 200 x 500-turn
   conversations with 1,000 test points (~250 k retrieved records).     < 20 MB

The data is synthetic and deterministic (seeded), made here so the bench
depends on nothing but the package.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from _suite import Context, benchmark

from evals.judge.scoring import Evaluation, score_run
from evals.model.corpus import Conversation, Corpus, corpus_digest
from evals.model.provenance import Provenance
from evals.model.tokens import TokenCounter
from evals.run.playthrough import play_corpus
from evals.store import RunRecord, Store, make_summary
from evals.strategies import FullHistory

WORDS = (
    "deploy staging port cache schema budget lisbon vim typescript monorepo pipeline friday "
    "review latency invoice coffee meeting flight oslo protein retry token embed vector index "
    "backlog sprint alert migrate rollback ticket laptop garden recipe allergy peanut dinner"
).split()

PROVENANCE = Provenance(commit="0" * 40, dirty=False, package_version="bench", mneme_version="1.0.0", python_version="3")


def synthetic_corpus(conversations: int, turns: int, test_points: int, seed: int = 0) -> Corpus:
    """``conversations`` conversations of ``turns`` turns, ``test_points`` of them tested, evenly spread."""
    rng = random.Random(seed)
    convs = []
    for c in range(conversations):
        tested = {round((i + 1) * turns / (test_points + 1)) for i in range(test_points)}
        rows = []
        for t in range(turns):
            text = f"[{c}:{t}] " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))
            turn = {"role": "user" if t % 2 == 0 else "assistant", "content": text}
            if t in tested:
                word = rng.choice(WORDS)
                turn["test_at"] = {"question": f"what about {word}?", "expected_fact": word, "expected_keywords": [word]}
            rows.append(turn)
        convs.append(Conversation(id=f"bench_{c:04d}", description=f"synthetic conversation {c}", turns=rows))
    return Corpus(directory=Path("bench-corpus"), conversations=convs, digest=corpus_digest(convs))


def full_history_evaluation(corpus: Corpus) -> Evaluation:
    run = play_corpus(corpus, FullHistory(), ignores_k=True)  # the oracle keeps its whole list, as a registered run does
    return Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter()))


def report(name: str, value: float, unit: str, target: float) -> float:
    ok = value < target
    print(f"{name:<14} {value:10.3f} {unit:<3} target < {target:g} {unit}   {'ok' if ok else 'MISSED'}", flush=True)
    return value


def bench_append(directory: Path) -> float:
    print("building 200 x 500-turn corpus, 10,000 test points, full_history ...", flush=True)
    evaluation = full_history_evaluation(synthetic_corpus(200, 500, 50))
    records = sum(len(p.retrieved_records) for c in evaluation.run.conversations for p in c.test_points)
    print(f"  {evaluation.scores.total} test points, {records:,} retrieved records", flush=True)
    times, parts = [], []
    for attempt in range(5):
        path = directory / f"append-{attempt}.duckdb"
        started = time.perf_counter()
        store = Store.open(path)
        opened = time.perf_counter()
        store.append(evaluation, PROVENANCE)  # encode + insert + commit (durable from here)
        appended = time.perf_counter()
        store.close()  # DuckDB checkpoints the write-ahead log into the file
        closed = time.perf_counter()
        times.append(closed - started)
        parts.append((opened - started, appended - opened, closed - appended))
        path.unlink()
    print(f"  open+append+close, 5 tries: {', '.join(f'{t:.3f}' for t in times)} s", flush=True)
    medians = [statistics.median(p[i] for p in parts) for i in range(3)]
    print(f"  medians: open {medians[0]:.3f} s, append {medians[1]:.3f} s, close {medians[2]:.3f} s", flush=True)
    return report("append", statistics.median(times), "s", 1.0)


def bench_leaderboard(directory: Path) -> float:
    path = directory / "leaderboard.duckdb"
    print("building a store of 1,000 runs (20 configurations x 50 commits) ...", flush=True)
    evaluation = full_history_evaluation(synthetic_corpus(10, 40, 2, seed=1))
    records = []
    for commit in range(50):
        for config in range(20):
            run = evaluation.run.model_copy(update={"strategy": {"name": f"strategy_{config % 5}", "variant": config}})
            provenance = replace(PROVENANCE, commit=f"{commit:040x}")
            summary = make_summary(
                run_id=f"{commit:04d}{config:04d}bench"[:12],
                run=run,
                scores=evaluation.scores,
                provenance=provenance,
                corpus_name="bench-corpus",
            )
            records.append(RunRecord(summary, run, evaluation.scores, evaluation.corpus.conversations))
    with Store.open(path) as store:
        for start in range(0, len(records), 100):
            store.write_records(records[start : start + 100])
        assert store.run_count() == 1000
    with Store.open(path, read_only=True) as store:
        store.latest_per_configuration()  # warm up
        times = []
        for _ in range(20):
            started = time.perf_counter()
            rows = store.latest_per_configuration()
            times.append(time.perf_counter() - started)
    assert len(rows) == 20
    opened = []
    for _ in range(5):
        started = time.perf_counter()
        with Store.open(path, read_only=True) as store:
            store.latest_per_configuration()
        opened.append(time.perf_counter() - started)
    print(
        f"  query median {statistics.median(times) * 1000:.1f} ms; "
        f"open+query+close median {statistics.median(opened) * 1000:.1f} ms"
    )
    return report("leaderboard", statistics.median(times) * 1000, "ms", 100)


def bench_size(directory: Path) -> float:
    path = directory / "size.duckdb"
    print("building 200 x 500-turn corpus, 1,000 test points, full_history ...", flush=True)
    evaluation = full_history_evaluation(synthetic_corpus(200, 500, 5, seed=2))
    records = sum(len(p.retrieved_records) for c in evaluation.run.conversations for p in c.test_points)
    text = sum(len(t.content.encode()) for c in evaluation.corpus.conversations for t in c.turns)
    print(f"  {evaluation.scores.total} test points, {records:,} retrieved records, {text / 1e6:.1f} MB of turn text")
    with Store.open(path) as store:
        store.append(evaluation, PROVENANCE)
    size = sum(p.stat().st_size for p in directory.glob("size.duckdb*"))
    return report("size", size / 1e6, "MB", 20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the generated stores in this directory.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        met = [bench_append(directory) < 1.0, bench_leaderboard(directory) < 100, bench_size(directory) < 20]
    return 0 if all(met) else 1


@benchmark(targets={"append_s": "<= 1.0"}, slow=True)
def append(ctx: Context) -> dict[str, float]:
    """One full_history run of 10,000 test points (2.5 M records) appended, open to close, median of 5."""
    return {"append_s": bench_append(ctx.work)}


@benchmark(targets={"leaderboard_ms": "<= 100"})
def leaderboard(ctx: Context) -> dict[str, float]:
    """The latest run per configuration on a store of 1,000 runs."""
    return {"leaderboard_ms": bench_leaderboard(ctx.work)}


@benchmark(targets={"store_mb": "<= 20"})
def size(ctx: Context) -> dict[str, float]:
    """The store's size holding one full_history run of 200 x 500 turns with 1,000 test points."""
    return {"store_mb": bench_size(ctx.work)}


if __name__ == "__main__":
    sys.exit(main())
