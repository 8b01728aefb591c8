"""Benchmark: build the site for a store of 50 runs x 1,000 test points.

The store is made through the store API from a deterministic synthetic corpus
(200 conversations x 40 turns, 5 test points each = 1,000 test points): five
strategies (no_memory, full_history, summary_buffer, mneme with the hash
embedder, recency) are each evaluated once, then appended at ten commits with
fixed timestamps and run ids; at every other commit some test points are
emptied and rescored, so history has drops and the compare page has flips.
That gives 50 runs, 10,000 drill-down pages and everything else the site has.

    python bench/bench_site.py              # reuses bench/.data/site-store-v1.duckdb if present
    python bench/bench_site.py --fresh      # regenerate the store first

Prints the build time and the site's size against the target (under 15 s).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _suite import Context, benchmark  # noqa: E402

from evals.judge.scoring import Evaluation, score_run  # noqa: E402
from evals.model.provenance import Provenance  # noqa: E402
from evals.model.tokens import EXACT, TokenCounter  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402
from evals.site import build_site  # noqa: E402
from evals.store import Store, StoreError  # noqa: E402
from evals.store._records import record_from_evaluation  # noqa: E402

VERSION = "1"  # bump when the generated store changes
CONVERSATIONS, TURNS, POINTS = 200, 40, 5
STRATEGIES = ("no_memory", "full_history", "summary_buffer", "mneme", "recency")
COMMITS = 10
TARGET_S = 15.0
DATA = Path(__file__).resolve().parent / ".data"

WORDS = (
    "report kitchen roadmap invoice garden budget meeting bicycle dashboard newsletter spreadsheet "
    "workshop permit contract menu playlist itinerary bookshelf team manager intern neighbour vendor "
    "client landlord designer accountant coach library moved reviewed postponed approved rewrote shipped "
    "fixed booked painted measured ordered cleaned priced tested before after during until weekend launch"
).split()


def write_corpus(directory: Path) -> None:
    """200 conversations; each plants 5 code words early and asks about them later."""
    directory.mkdir(parents=True, exist_ok=True)
    for c in range(CONVERSATIONS):
        rng = random.Random(f"site-bench-{c}")
        turns = [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))),
            }
            for i in range(TURNS)
        ]
        fact_turns = sorted(rng.sample(range(0, TURNS // 2, 2), POINTS))
        ask_turns = sorted(rng.sample(range(TURNS // 2, TURNS, 2), POINTS))
        for n, (fact, ask) in enumerate(zip(fact_turns, ask_turns, strict=True)):
            code = f"{rng.choice(['zorvex', 'quillon', 'marbek', 'tessaly'])}-{rng.randint(100, 999)}"
            turns[fact]["content"] = f"remember item {n}: the code is {code}"
            turns[ask]["test_at"] = {
                "question": f"what is the code of item {n}",
                "expected_fact": f"item {n} code is {code}",
                "expected_keywords": [code],
            }
        document = {"schema_version": "1", "id": f"conv_{c:03d}", "description": f"synthetic conversation {c}", "turns": turns}
        (directory / f"conv_{c:03d}.json").write_text(json.dumps(document), encoding="utf-8")


def perturbed(evaluation: Evaluation, commit_index: int) -> Evaluation:
    """At odd commits, empty the records of every 7th test point (shifted per commit) and rescore."""
    if commit_index % 2 == 0:
        return evaluation
    run = evaluation.run.model_copy(deep=True)
    n = 0
    for conversation in run.conversations:
        for point in conversation.test_points:
            if (n + commit_index) % 7 == 0:
                point.retrieved_records = []
            n += 1
    counter = TokenCounter(exact=evaluation.scores.tokenizer == EXACT)
    return Evaluation(evaluation.corpus, run, score_run(run, counter))


def make_store(path: Path) -> None:
    corpus = path.parent / "site-corpus"
    write_corpus(corpus)
    evaluations = {runner: evaluate(RunConfig(strategy=runner, corpus=corpus)) for runner in STRATEGIES}
    start = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
    with Store.open(path) as store:
        for i in range(COMMITS):
            commit = hashlib.sha1(f"commit {i}".encode()).hexdigest()
            provenance = Provenance(
                commit=commit, dirty=False, package_version="0.1.0", mneme_version="1.0.0", python_version="3.11.7"
            )
            records = []
            for n, runner in enumerate(STRATEGIES):
                evaluation = perturbed(evaluations[runner], i)
                moment = start + timedelta(days=i, minutes=n)
                stamped = evaluation.run.model_copy(update={"started_at": moment})
                evaluation = Evaluation(evaluation.corpus, stamped, evaluation.scores)
                run_id = hashlib.sha1(f"run {i} {runner}".encode()).hexdigest()[:12]
                records.append(record_from_evaluation(evaluation, provenance, run_id=run_id))
            store.write_records(records)


def cached_store(data: Path, fresh: bool = False) -> Path:
    """The 50-run store under ``data``, made on first use (and again when the store schema changed)."""
    store = data / f"site-store-v{VERSION}.duckdb"
    if store.exists() and not fresh:
        try:
            Store.open(store, read_only=True).close()
        except StoreError as exc:  # made by an older store schema: make it again
            print(f"regenerating: {exc}", file=sys.stderr)
            fresh = True
    if fresh or not store.exists():
        data.mkdir(parents=True, exist_ok=True)
        store.unlink(missing_ok=True)
        clock = time.perf_counter()
        make_store(store)
        print(f"generated store {store} in {time.perf_counter() - clock:.1f} s", file=sys.stderr)
    return store


@benchmark(targets={"build_s": f"<= {TARGET_S}"}, slow=True)
def fifty_runs(ctx: Context) -> dict[str, float]:
    """`build_site` on a store of 50 runs x 1,000 test points: seconds, pages, megabytes, the largest page."""
    store = cached_store(ctx.cache)
    clock = time.perf_counter()
    report = build_site(store, ctx.work / "site")
    return {"build_s": time.perf_counter() - clock, "pages": report.pages, "site_mb": report.bytes / 1e6,
            "largest_page_kb": report.largest_page_bytes / 1e3}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="regenerate the store even if a cached one exists")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: as `evals build-site`)")
    parser.add_argument("--keep", type=Path, default=None, help="build into this directory and keep it (default: a temp dir)")
    args = parser.parse_args()

    store = cached_store(DATA, args.fresh)
    with Store.open(store, read_only=True) as opened:
        runs = opened.runs()
    points = {s.total for s in runs}
    print(f"store: {len(runs)} runs x {'/'.join(map(str, sorted(points)))} test points, {store.stat().st_size / 1e6:.1f} MB")

    workdir = Path(tempfile.mkdtemp(prefix="bench-site-"))
    # Start from clean page cache write-back, so earlier runs' deleted sites do not slow this one's writes.
    os.sync()
    out = args.keep or workdir / "site"
    try:
        clock = time.perf_counter()
        report = build_site(store, out, workers=args.jobs)
        elapsed = time.perf_counter() - clock
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    verdict = "meets" if elapsed < TARGET_S else "MISSES"
    print(
        f"build-site: {elapsed:.2f} s (target < {TARGET_S:.0f} s: {verdict}); {report.pages} pages, {report.files} files, "
        f"{report.bytes / 1e6:.1f} MB in all; largest page {report.largest_page} {report.largest_page_bytes / 1e3:.0f} kB"
    )
    return 0 if elapsed < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
