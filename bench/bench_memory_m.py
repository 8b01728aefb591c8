"""Peak memory against the number of questions on LongMemEval_m-shaped files (issue 26).

For each question count (default 20, 40, 80, 100) it generates the file with
``bench/gen_longmemeval.py --shape m`` (500 sessions, 5,000 turns, about 1.2 M
tokens a question; cached under ``bench/.data/memory_m/``), then runs, each in a
child process, exactly what a user runs:

    evals import-corpus longmemeval FILE --out DIR
    evals run --runner R --corpus DIR --store STORE --no-cache      (each offline strategy, one store)
    evals build-site --store STORE --out SITE

and prints each step's peak resident memory (``ru_maxrss`` from ``os.wait4``: that
child's own peak) against the question count, then the targets: every step at
most 1.5 GB, and the peak at the largest count within 15% of the peak at the
smallest. The first run into the store also writes the corpus; the others
compare it by digest.

    python bench/bench_memory_m.py                                   # 20/40/80/100, 7 strategies, build-site
    python bench/bench_memory_m.py --questions 20,100 --strategies bm25,summary_buffer --no-site
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, import_and_runs, load_average, longmemeval_file, run_checked, shown  # noqa: E402

STRATEGIES = ("no_memory", "full_history", "mneme", "random_k", "recency", "bm25", "summary_buffer")
PEAK_MIB = 1500 * 1000**2 / 1024**2  # 1.5 GB
FLAT = 0.15  # the peak at the most questions at most 15% above the peak at the fewest


def measured(command: list[str], timeout: float) -> tuple[float, float, str]:
    """Run ``command``; return (peak RSS in MiB, wall seconds, the last line it printed)."""
    child = run_checked(command, error=SystemExit, timeout=timeout, merged=True)
    return child.peak_mib, child.wall_s, child.last_line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default="20,40,80,100", help="comma-separated question counts")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated, or 'none'")
    parser.add_argument("--no-site", action="store_true", help="skip build-site")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR / "memory_m")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    counts = sorted(int(q) for q in args.questions.split(","))
    strategies = [] if args.strategies == "none" else args.strategies.split(",")
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"load average {load_average()}; {os.cpu_count()} CPUs", flush=True)

    peaks: dict[str, dict[int, float]] = {}
    commands: dict[str, str] = {}
    for count in counts:
        source = longmemeval_file(count, args.data_dir, "m")
        work = args.data_dir / f"q{count}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        corpus, store, site = work / "corpus", work / "results.duckdb", work / "site"
        steps = import_and_runs(source, corpus, store, strategies)
        if not args.no_site:
            steps.append(("build-site", [*EVALS, "build-site", "--store", str(store), "--out", str(site)]))
        print(f"\n{count} questions: {source.name} ({source.stat().st_size / 1e6:,.1f} MB)", flush=True)
        for name, command in steps:
            peak, wall, last = measured(command, args.timeout)
            peaks.setdefault(name, {})[count] = peak
            commands[name] = shown(command)
            print(f"  {name:<22} {peak:8,.0f} MiB {wall:8.1f} s  {last[:100]}", flush=True)
        shutil.rmtree(work, ignore_errors=True)  # the next count needs the room

    first, last = counts[0], counts[-1]
    header = f"| step | {' | '.join(f'{c} q' for c in counts)} | {last}/{first} | ≤ 1.5 GB |"
    print("\npeak RSS, MiB, against questions (LongMemEval_m shape)\n")
    print(header)
    print("|" + "---|" * (len(counts) + 3))
    failed = 0
    for name, by_count in peaks.items():
        ratio = by_count[last] / by_count[first] if first in by_count and last in by_count else float("nan")
        within = all(p <= PEAK_MIB for p in by_count.values())
        flat = ratio <= 1 + FLAT
        failed += (not within) + (not flat)
        cells = " | ".join(f"{by_count[c]:,.0f}" if c in by_count else "—" for c in counts)
        print(f"| {name} | {cells} | {ratio:.2f}{'' if flat else ' ✗'} | {'yes' if within else 'no ✗'} |")
    print("\ncommands (per question count; FILE, DIR, STORE under the data folder):")
    for name, command in commands.items():
        print(f"  {name}: {command}")
    print(f"\nload average {load_average()}")
    verdict = "all targets met" if not failed else f"{failed} target(s) missed"
    print(f"{verdict} (≤ 1.5 GB; {last} q within {FLAT:.0%} of {first} q)")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
