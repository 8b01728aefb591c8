"""Benchmark: the site of a LongMemEval-sized store against issue 14's targets.

Makes (or reuses) a store holding one run of each of the seven built-in strategies
(hash embedder) over a corpus, builds the site from it with ``evals build-site`` in
a child process, then adds one more run to a copy of the store and rebuilds over
the first site, and prints every figure next to its target:

- the whole site at most 300 MB, no file over 25 MB;
- the further run adds at most 25 MB (not counting the store copy, which the site
  carries only while the store is at most 25 MB);
- the build at most 90 s and 1.5 GB of memory (the peak of the summed RSS of
  ``evals build-site`` and every process it starts, sampled every 0.1 s from /proc;
  the biggest single process is printed too);
- the rebuild after one more run at most 20 s;
- and, with ``--verify``, that rebuild gives the same bytes as a full build.

    python bench/gen_longmemeval.py /tmp/lme500.json --questions 500 --seed 0
    evals import-corpus longmemeval /tmp/lme500.json --out /tmp/lme500
    python bench/bench_site_scale.py --corpus /tmp/lme500 --data-dir /tmp/site-bench [--verify]

The runs take a few minutes each on two cores; they are made once and kept in
``--data-dir`` (delete its ``results.duckdb`` to make them again). The exit code
is 0 when every target is met.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import EVALS, load_average, run_checked  # noqa: E402

STRATEGIES = ("no_memory", "full_history", "summary_buffer", "mneme", "random_k", "recency", "bm25")
SITE_MB, FILE_MB, RUN_MB = 300, 25, 25
BUILD_S, BUILD_MB, INCREMENTAL_S = 90, 1500, 20


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(x) for x in handle.read().split()]
    except OSError:
        pass
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measured(command: list[str]) -> tuple[float, int, int, str]:
    """Run ``command``; its wall time, the peak of its process tree's summed RSS, the peak single RSS, and its output."""
    peaks = [0, 0]

    def sample(root: int) -> None:
        pids, todo = [], [root]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo += _children(pid)
        sizes = [_rss(pid) for pid in pids]
        peaks[:] = max(peaks[0], sum(sizes)), max(peaks[1], max(sizes))

    child = run_checked(command, error=SystemExit, merged=True, cwd=None, poll=0.1, watch=sample)
    return child.wall_s, peaks[0], peaks[1], child.stdout


def site_size(root: Path) -> tuple[int, int, str, int]:
    """Total bytes, the largest file's bytes and its path, and the bytes of the store copy (data/)."""
    total, largest, store = 0, (0, ""), 0
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            size = path.stat().st_size
            total += size
            largest = max(largest, (size, str(path.relative_to(root))))
            if path.relative_to(root).parts[0] == "data":
                store += size
    return total, largest[0], largest[1], store


def same_bytes(a: Path, b: Path) -> bool:
    files = lambda root: sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())  # noqa: E731
    if files(a) != files(b):
        return False
    return all((a / rel).read_bytes() == (b / rel).read_bytes() for rel in files(a))


def make_store(corpus: Path, store: Path) -> None:
    for strategy in STRATEGIES:
        clock = time.perf_counter()
        command = [*EVALS, "run", "--runner", strategy, "--corpus", str(corpus), "--store", str(store)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        print(f"  made the {strategy} run in {time.perf_counter() - clock:.0f} s", file=sys.stderr)


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, required=True, help="the corpus the runs are over (evals import-corpus longmemeval ...)"
    )
    parser.add_argument("--data-dir", type=Path, required=True, help="where the store, its copy and the sites go")
    parser.add_argument("--extra", default="recency --k 10", help="the further run's options (default: %(default)s)")
    parser.add_argument("--verify", action="store_true", help="also build the bigger store afresh and compare bytes")
    args = parser.parse_args()
    data = args.data_dir.absolute()
    data.mkdir(parents=True, exist_ok=True)
    store, bigger = data / "results.duckdb", data / "plus-one.duckdb"
    if not store.exists():
        print(f"making the seven runs in {store}", file=sys.stderr)
        make_store(args.corpus, store)
    print(f"load average at the start: {load_average()} (2 cores)")

    site = data / "site"
    shutil.rmtree(site, ignore_errors=True)
    seconds, peak, single, output = measured([*EVALS, "build-site", "--store", str(store), "--out", str(site)])
    total, largest, largest_path, store_copy = site_size(site)
    print(output.strip())
    print(f"build-site: {seconds:.1f} s (target <= {BUILD_S} s: {verdict(seconds <= BUILD_S)}); peak memory {peak / 1e6:.0f} MB "
          f"summed over its processes (target <= {BUILD_MB} MB: {verdict(peak / 1e6 <= BUILD_MB)}), "
          f"biggest process {single / 1e6:.0f} MB")  # fmt: skip
    print(f"site: {total / 1e6:.1f} MB (target <= {SITE_MB} MB: {verdict(total / 1e6 <= SITE_MB)}); largest file {largest_path} "
          f"{largest / 1e6:.1f} MB (target <= {FILE_MB} MB: {verdict(largest / 1e6 <= FILE_MB)})")  # fmt: skip

    shutil.copyfile(store, bigger)
    command = [*EVALS, "run", "--corpus", str(args.corpus), "--store", str(bigger), "--runner", *args.extra.split()]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    again = data / "site-plus-one"
    shutil.rmtree(again, ignore_errors=True)
    subprocess.run(["cp", "-al", str(site), str(again)], check=True)  # the first site, as the next build finds it
    seconds2, peak2, single2, output2 = measured([*EVALS, "build-site", "--store", str(bigger), "--out", str(again)])
    total2, largest2, largest_path2, store_copy2 = site_size(again)
    added = (total2 - store_copy2) - (total - store_copy)  # the store copy comes and goes with the store's size
    print(output2.strip())
    print(f"rebuild after one more run ({args.extra}): {seconds2:.1f} s "
          f"(target <= {INCREMENTAL_S} s: {verdict(seconds2 <= INCREMENTAL_S)}); "
          f"peak memory {peak2 / 1e6:.0f} MB summed, biggest process {single2 / 1e6:.0f} MB")  # fmt: skip
    print(f"the run added {added / 1e6:.1f} MB (target <= {RUN_MB} MB: {verdict(added / 1e6 <= RUN_MB)}); "
          f"site now {total2 / 1e6:.1f} MB, "
          f"largest file {largest_path2} {largest2 / 1e6:.1f} MB")  # fmt: skip
    ok = seconds <= BUILD_S and peak / 1e6 <= BUILD_MB and total / 1e6 <= SITE_MB and largest / 1e6 <= FILE_MB
    ok = ok and seconds2 <= INCREMENTAL_S and added / 1e6 <= RUN_MB and largest2 / 1e6 <= FILE_MB
    if args.verify:
        fresh = data / "site-fresh"
        shutil.rmtree(fresh, ignore_errors=True)
        command = [*EVALS, "build-site", "--store", str(bigger), "--out", str(fresh), "--full"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        same = same_bytes(again, fresh)
        print(f"incremental and full builds give the same bytes: {'yes' if same else 'NO'}")
        ok = ok and same
    print(f"load average at the end: {load_average()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
