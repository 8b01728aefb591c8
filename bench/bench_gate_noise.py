"""Does ``evals gate`` cry wolf on a busy machine, and does it still catch a real slowdown?

The base is one run made now (on whatever load the machine has: say it is quiet); each head is a run of the
same code and configuration made while ``--load`` processes spin on the machine's cores (load 10 on 2 cores
by default, as when the base comes from the published store, made on another runner at another time).
``evals gate --base BASE --head HEAD`` judges each pair. Then a head with a real slowdown (the same work plus
a sleep as long as that work: about ×2 per retrieve, a strategy waiting on I/O) is judged, once on the busy
machine and once after the load is gone.

The strategy is bench/_gate_plugin.py's: recency after a fixed amount of CPU work per retrieve, so its
latency is milliseconds, well above the gate's floor (1 ms).

Targets: identical code passes every time (10 of 10); the ×2 slowdown fails, busy or quiet.

    python bench/bench_gate_noise.py                  # 10 heads at load 10
    python bench/bench_gate_noise.py --repeat 3 --load 6
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH_DIR, EVALS, load_average, print_table, run_child  # noqa: E402
from _suite import Context, benchmark  # noqa: E402
from bench_harness import cached_corpus  # noqa: E402

SPINS = 60_000  # the plug-in's CPU work per retrieve: a few milliseconds on these machines
RUN_ID = re.compile(r"\brun ([0-9a-f]{12})\b")


@contextlib.contextmanager
def spinning(processes: int) -> Iterator[None]:
    """``processes`` busy loops on the machine's cores while the block runs."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        time.sleep(1.0 if processes else 0.0)  # let the scheduler see them before the run starts
        yield
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


def calibrated_sleep_ms(spins: int = SPINS, rounds: int = 20) -> float:
    """How long the plug-in's work takes here, in milliseconds (the best of ``rounds``): the sleep that doubles it."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        total = 0
        for i in range(spins):
            total += i * i % 7
        best = min(best, time.perf_counter() - start)
    return best * 1000


def play(corpus: Path, store: Path, sleep_ms: float = 0.0) -> str:
    """One run of the plug-in into ``store`` (always a new one: --force); its run id."""
    command = [
        *EVALS, "run", "--runner", "_gate_plugin:SPEC", "--option", f"spins={SPINS}", "--option", f"sleep_ms={sleep_ms:g}",
        "--corpus", str(corpus), "--store", str(store), "--force", "--no-cache",
    ]  # fmt: skip
    child = run_child(command, merged=True)
    found = RUN_ID.search(child.stdout)
    if child.returncode != 0 or found is None:
        raise RuntimeError(f"evals run failed ({child.returncode}): {child.stdout[-2000:]}")
    return found.group(1)


def judged(store: Path, base: str, head: str) -> tuple[int, float | None]:
    """The gate's exit code for ``head`` against ``base``, and the latency ratio it judged."""
    child = run_child([*EVALS, "gate", "--base", base, "--head", head, "--store", str(store), "--format", "json"])
    if child.returncode not in (0, 1):
        raise RuntimeError(f"evals gate could not compare {base} and {head}: {child.stderr[-2000:]}")
    rows = json.loads(child.stdout)["rows"]
    return child.returncode, rows[0]["latency"]["ratio"] if rows else None


def measure(corpus: Path, work: Path, repeat: int, load: int) -> dict[str, float]:
    # The plug-in is found as `_gate_plugin:SPEC` by every evals process started from here.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH_DIR), os.environ.get("PYTHONPATH")]))
    store = work / "gate.duckdb"
    slow_ms = calibrated_sleep_ms()
    quiet_at = load_average()
    base = play(corpus, store)
    ratios: list[float] = []
    passed = 0
    with spinning(load):
        for _ in range(repeat):
            code, ratio = judged(store, base, play(corpus, store))
            passed += code == 0
            ratios.append(ratio if ratio is not None else float("nan"))
        slow_busy, ratio_busy = judged(store, base, play(corpus, store, slow_ms))
        busy_at = load_average()  # at the end of the busy heads: the load average lags a minute behind
    slow_quiet, ratio_quiet = judged(store, base, play(corpus, store, slow_ms))
    return {
        "identical_passed": passed,
        "identical_runs": repeat,
        "identical_ratio_max": max(ratios),
        "slowdown_busy_failed": float(slow_busy == 1),
        "slowdown_busy_ratio": ratio_busy if ratio_busy is not None else float("nan"),
        "slowdown_quiet_failed": float(slow_quiet == 1),
        "slowdown_quiet_ratio": ratio_quiet if ratio_quiet is not None else float("nan"),
        "sleep_ms": slow_ms,
        "_loads": f"base at load {quiet_at}; at the end of the busy heads {busy_at} ({load} spinning)",  # type: ignore[dict-item]
    }


@benchmark(targets={"identical_passed_share": ">= 1", "slowdown_failed_share": ">= 1"}, slow=True)
def gate_noise(ctx: Context) -> dict[str, float]:
    """evals gate on identical code under load 10 (must pass) and on a ×2 slowdown (must fail)"""
    corpus = cached_corpus(10 if ctx.quick else 40, 100, 5, 0, ctx.cache)
    figures = measure(corpus, ctx.work, 2 if ctx.quick else 10, 10)
    return {
        "identical_passed_share": figures["identical_passed"] / figures["identical_runs"],
        "slowdown_failed_share": (figures["slowdown_busy_failed"] + figures["slowdown_quiet_failed"]) / 2,
        "identical_ratio_max": figures["identical_ratio_max"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10, help="heads of identical code judged under load (default 10)")
    parser.add_argument("--load", type=int, default=10, help="busy loops spinning while the heads run (default 10)")
    parser.add_argument("--conversations", type=int, default=40, help="corpus size: 40 x 100 turns, 5 test points each")
    args = parser.parse_args(argv)
    corpus = cached_corpus(args.conversations, 100, 5, 0)
    with tempfile.TemporaryDirectory(prefix="evals-gate-") as work:
        f = measure(corpus, Path(work), args.repeat, args.load)
    ok_identical = f["identical_passed"] == f["identical_runs"]
    ok_slow = f["slowdown_busy_failed"] == 1 and f["slowdown_quiet_failed"] == 1
    print_table(
        ["case", "gate", "latency ratio", "target", "verdict"],
        [
            ["identical code, heads busy", f"passed {f['identical_passed']:g} of {f['identical_runs']:g}",
             f"at most x{f['identical_ratio_max']:.2f}", "pass every time", "met" if ok_identical else "MISSED"],
            [f"x2 slowdown (+{f['sleep_ms']:.1f} ms sleep), busy", "failed" if f["slowdown_busy_failed"] else "passed",
             f"x{f['slowdown_busy_ratio']:.2f}", "fail", "met" if f["slowdown_busy_failed"] else "MISSED"],
            [f"x2 slowdown (+{f['sleep_ms']:.1f} ms sleep), quiet", "failed" if f["slowdown_quiet_failed"] else "passed",
             f"x{f['slowdown_quiet_ratio']:.2f}", "fail", "met" if f["slowdown_quiet_failed"] else "MISSED"],
        ],
    )  # fmt: skip
    print(f"  {f['_loads']}; load average (1/5/15 min) at the end {load_average()}")
    return 0 if ok_identical and ok_slow else 1


if __name__ == "__main__":
    sys.exit(main())
