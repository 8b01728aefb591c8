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
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data" / "memory_m"
sys.path.insert(0, str(BENCH_DIR))

from gen_longmemeval import GENERATOR_VERSION, generate  # noqa: E402

STRATEGIES = ("no_memory", "full_history", "mneme", "random_k", "recency", "bm25", "summary_buffer")
PEAK_MIB = 1500 * 1000**2 / 1024**2  # 1.5 GB
FLAT = 0.15  # the peak at the most questions at most 15% above the peak at the fewest
EVALS = [sys.executable, "-m", "evals"]


def measured(command: list[str], timeout: float) -> tuple[float, float, str]:
    """Run ``command``; return (peak RSS in MiB, wall seconds, the last line it printed)."""
    started = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=BENCH_DIR.parent) as child:
        try:
            output, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            raise SystemExit(f"timed out after {timeout:g} s: {' '.join(command)}") from None
    wall = time.perf_counter() - started
    text = output.decode(errors="replace").strip()
    if child.returncode != 0:
        raise SystemExit(f"failed ({child.returncode}): {' '.join(command)}\n{text[-2000:]}")
    return child.peak_kib / 1024, wall, text.splitlines()[-1] if text else ""


class _Popen(subprocess.Popen):
    """A Popen that keeps the child's own peak RSS (``os.wait4``) when it reaps it."""

    peak_kib = 0

    def _try_wait(self, wait_flags):  # type: ignore[override]
        try:
            pid, status, usage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            return self.pid, 0
        if pid == self.pid:
            self.peak_kib = usage.ru_maxrss
        return pid, status


subprocess.Popen = _Popen  # type: ignore[misc] - only this script's own children


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def source_file(questions: int, data: Path) -> Path:
    path = data / f"lme_m_q{questions}_g{GENERATOR_VERSION}.json"
    if not path.exists():
        partial = path.with_suffix(".partial")
        generate(partial, questions, shape="m", seed=0)
        partial.rename(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default="20,40,80,100", help="comma-separated question counts")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated, or 'none'")
    parser.add_argument("--no-site", action="store_true", help="skip build-site")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    counts = sorted(int(q) for q in args.questions.split(","))
    strategies = [] if args.strategies == "none" else args.strategies.split(",")
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"load average {_load()}; {os.cpu_count()} CPUs", flush=True)

    peaks: dict[str, dict[int, float]] = {}
    commands: dict[str, str] = {}
    for count in counts:
        source = source_file(count, args.data_dir)
        work = args.data_dir / f"q{count}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        corpus, store, site = work / "corpus", work / "results.duckdb", work / "site"
        steps = [("import", [*EVALS, "import-corpus", "longmemeval", str(source), "--out", str(corpus)])]
        steps += [
            (f"run {s}", [*EVALS, "run", "--runner", s, "--corpus", str(corpus), "--store", str(store), "--no-cache"])
            for s in strategies
        ]
        if not args.no_site:
            steps.append(("build-site", [*EVALS, "build-site", "--store", str(store), "--out", str(site)]))
        print(f"\n{count} questions: {source.name} ({source.stat().st_size / 1e6:,.1f} MB)", flush=True)
        for name, command in steps:
            peak, wall, last = measured(command, args.timeout)
            peaks.setdefault(name, {})[count] = peak
            commands[name] = " ".join(Path(c).name if c == sys.executable else c for c in command)
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
    print(f"\nload average {_load()}")
    verdict = "all targets met" if not failed else f"{failed} target(s) missed"
    print(f"{verdict} (≤ 1.5 GB; {last} q within {FLAT:.0%} of {first} q)")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
