"""The path a user takes first, against the original harness: compatibility, speed, overhead and
start-up, each printed against its target.

"The original" is found the way the compatibility checks find it: ``bench_harness.py --_reference``,
the stand-in that plays a corpus as the original harness did (same strategy semantics and Mneme
calls, the corpus read with ``json``, every record encoded with cl100k at every test point).
Every figure is whole processes, interpreter start-up included, run in alternation (harness,
original, harness, ...) so the machine's other load falls on both alike; medians count.

1. **Compatibility**: the five configurations (no_memory, full_history, summary_buffer, mneme on
   memory, mneme on sqlite), each run as ``python -m evals --runner R --backend B --embedder hash``
   (the same flags for every runner, as scripts written for the original pass them) on the
   starter corpus: exit 0, and the metrics the original writes and every retrieved record equal.
2. **Speed** on the 200 × 500 synthetic corpus (``gen_corpus.py``): original / harness for
   full_history and summary_buffer (target ≥ 3×) and mneme (target ≥ 1.5×: the original uses one core,
   the harness every core).
3. **Overhead**: the harness's mneme run against a bare serial loop of the same Mneme calls
   (``bench_overhead.py --_bare``), in CPU seconds of all its processes (target ≤ 1.10×).
4. **Start-up**: ``python -m evals --runner no_memory`` on the original's 5-conversation corpus
   (the first five conversations of the starter corpus) against the original (target ≤ 1.25×),
   and ``evals --help`` (target ≤ 0.3 s).

    python bench/suite.py run -b bench_first_path     # in the suite: each section a benchmark, 5 rounds
    python bench/bench_first_path.py                 # by hand: 5 paired rounds of each
    python bench/bench_first_path.py --repeat 9 --only startup,compat
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from _suite import Context, benchmark  # noqa: E402
from bench_harness import DATA_DIR, cached_corpus  # noqa: E402

PY = sys.executable
EVALS = str(Path(PY).parent / "evals")
CONFIGURATIONS = {  # name: (runner, --backend)
    "no_memory": ("no_memory", "memory"),
    "full_history": ("full_history", "memory"),
    "summary_buffer": ("summary_buffer", "memory"),
    "mneme": ("mneme", "memory"),
    "mneme-sqlite": ("mneme", "sqlite"),
}
BASELINE_SPEEDUP = 3.0
MNEME_SPEEDUP = 1.5
OVERHEAD = 1.10
STARTUP_RATIO = 1.25
HELP_S = 0.3
SECTIONS = ("compat", "speed", "overhead", "startup")


def harness(runner: str, corpus: Path, out: Path, backend: str = "memory") -> list[str]:
    flags = ["--backend", backend, "--embedder", "hash"]
    return [PY, "-m", "evals", "--runner", runner, *flags, "--corpus", str(corpus), "--output", str(out)]


def original(name: str, corpus: Path, out: Path) -> list[str]:
    return [PY, str(BENCH_DIR / "bench_harness.py"), "--_reference", name, str(corpus), str(out)]


def bare(corpus: Path, out: Path) -> list[str]:
    return [PY, str(BENCH_DIR / "bench_overhead.py"), "--_bare", str(corpus), str(out)]


def measure(command: list[str]) -> tuple[float, float]:
    """Run ``command``: (wall seconds, CPU seconds of it and of the children it waited for). Under load
    from other jobs wall times mostly measure the queue; CPU time is printed beside them for that."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"exit {code}: {' '.join(command)}\n{err.read().decode('utf-8', 'replace')[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def wall(command: list[str]) -> float:
    return measure(command)[0]


def paired(commands: dict[str, list[str]], repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    """Each command once per round, in turn, ``repeat`` rounds: the median wall and CPU seconds of each."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            seconds, cpu = measure(command)
            walls[name].append(seconds)
            cpus[name].append(cpu)
    return (
        {name: statistics.median(times) for name, times in walls.items()},
        {name: statistics.median(times) for name, times in cpus.items()},
    )


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def records(document: dict) -> list[list[str]]:
    return [p["retrieved_records"] for c in document["conversations"] for p in c["test_points"]]


def compatibility(work: Path) -> bool:
    corpus = REPO_ROOT / "corpus"
    print(f"compatibility: five configurations on {corpus.name}/, python -m evals --backend B --embedder hash for every runner")
    all_ok = True
    for name, (runner, backend) in CONFIGURATIONS.items():
        ours, theirs = work / f"compat-{name}.json", work / f"compat-{name}.original.json"
        done = subprocess.run(harness(runner, corpus, ours, backend), cwd=REPO_ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  {name:<15} FAILED: exit {done.returncode}: {done.stderr.strip()[-300:]}")
            all_ok = False
            continue
        wall(original(name, corpus, theirs))
        a, b = json.loads(ours.read_text(encoding="utf-8")), json.loads(theirs.read_text(encoding="utf-8"))
        # The metrics the original writes, each compared as JSON text (so 1 and 1.0 differ).
        keys = {
            "recall_at_k": ("aggregate", "hits", "total"),
            "tokens": ("aggregate_context_tokens", "aggregate_tokens_per_test_point"),
        }
        metrics_equal = all(
            json.dumps({k: a["metrics"][block][k] for k in names}) == json.dumps({k: b["metrics"][block][k] for k in names})
            for block, names in keys.items()
        )
        records_equal = records(a) == records(b)
        ok = metrics_equal and records_equal
        all_ok = all_ok and ok
        recall = a["metrics"]["recall_at_k"]["aggregate"]
        tokens = a["metrics"]["tokens"]["aggregate_tokens_per_test_point"]
        print(
            f"  {name:<15} exit 0; metrics {'equal' if metrics_equal else 'DIFFER'}; {len(records(a))} test points' records "
            f"{'equal' if records_equal else 'DIFFER'} (recall {recall}, tokens/tp {tokens})"
        )
    print(f"  compatibility: {verdict(all_ok)}")
    return all_ok


def speed(corpus: Path, work: Path, repeat: int, with_overhead: bool, with_speed: bool, figures: dict | None = None) -> bool:
    figures = {} if figures is None else figures
    ok = True
    if with_speed:
        print(f"speed on {corpus.name} (200 x 500), paired, {repeat} rounds, medians (load before {load()}):")
        for name in ("full_history", "summary_buffer", "mneme"):
            runner, backend = CONFIGURATIONS[name]
            commands = {
                "harness": harness(runner, corpus, work / f"{name}.json", backend),
                "original": original(name, corpus, work / f"{name}.o.json"),
            }
            walls, cpus = paired(commands, repeat)
            ours, theirs = walls["harness"], walls["original"]
            target = MNEME_SPEEDUP if name == "mneme" else BASELINE_SPEEDUP
            figures[f"{name}_original_over_harness"] = theirs / ours
            met = theirs / ours >= target
            ok = ok and met
            print(
                f"  {name:<15} original {theirs:5.2f} s, harness {ours:5.2f} s: {theirs / ours:4.2f}x faster "
                f"(target >= {target:.1f}x: {verdict(met)}); CPU {cpus['original']:5.2f} against {cpus['harness']:5.2f} s: "
                f"{cpus['original'] / cpus['harness']:4.2f}x; load {load()}"
            )
    if with_overhead:
        commands = {"harness": harness("mneme", corpus, work / "o-harness.json"), "bare": bare(corpus, work / "o-bare.json")}
        walls, cpus = paired(commands, repeat)
        ours, loop = walls["harness"], walls["bare"]
        figures |= {"overhead_wall": ours / loop, "overhead_cpu": cpus["harness"] / cpus["bare"]}
        met = cpus["harness"] / cpus["bare"] <= OVERHEAD
        ok = ok and met
        print(
            f"  overhead        bare loop {loop:5.2f} s, harness {ours:5.2f} s: {ours / loop:4.3f}x; "
            f"CPU {cpus['bare']:5.2f} against {cpus['harness']:5.2f} s: {cpus['harness'] / cpus['bare']:4.3f}x "
            f"(target <= {OVERHEAD:.2f}x in CPU: {verdict(met)}); load {load()}"
        )
    return ok


def startup(work: Path, repeat: int, figures: dict | None = None) -> bool:
    figures = {} if figures is None else figures
    five = work / "corpus5"
    if not five.exists():
        five.mkdir()
        for path in sorted((REPO_ROOT / "corpus").glob("*.json"))[:5]:
            shutil.copy(path, five / path.name)
    walls, cpus = paired(
        {
            "harness": [PY, "-m", "evals", "--runner", "no_memory", "--corpus", str(five), "--output", str(work / "s.json")],
            "original": original("no_memory", five, work / "s.o.json"),
            "help": [EVALS, "--help"],
        },
        repeat,
    )
    ours, theirs, helped = (walls[n] for n in ("harness", "original", "help"))
    figures |= {"startup_over_original": ours / theirs, "help_s": helped}
    met_run, met_help = ours / theirs <= STARTUP_RATIO, helped <= HELP_S
    print(f"start-up, paired, {repeat} rounds, medians:")
    print(
        f"  python -m evals --runner no_memory, 5 conversations: {ours:.3f} s against the original's {theirs:.3f} s: "
        f"{ours / theirs:.2f}x (target <= {STARTUP_RATIO}x: {verdict(met_run)}); CPU {cpus['harness']:.3f} against "
        f"{cpus['original']:.3f} s: {cpus['harness'] / cpus['original']:.2f}x; load {load()}"
    )
    print(f"  evals --help: {helped:.3f} s (target <= {HELP_S} s: {verdict(met_help)}); CPU {cpus['help']:.3f} s")
    return met_run and met_help


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="paired rounds of each timing (default 5)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections, from {', '.join(SECTIONS)}")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where the 200 x 500 corpus is kept (bench/.data)")
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    if only - set(SECTIONS):
        parser.error(f"unknown sections: {', '.join(sorted(only - set(SECTIONS)))}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-first-path-") as tmp:
        work = Path(tmp)
        if "compat" in only:
            ok = compatibility(work) and ok
        if "speed" in only or "overhead" in only:
            corpus = cached_corpus(200, 500, 5, 0, args.data_dir)
            ok = speed(corpus, work, args.repeat, "overhead" in only, "speed" in only) and ok
        if "startup" in only:
            ok = startup(work, args.repeat) and ok
    print(f"all targets: {verdict(ok)}")
    return 0 if ok else 1


@benchmark()
def compatible(ctx: Context) -> dict[str, float]:
    """The five original configurations on the starter corpus: the original's metrics and records, equal (1) or not (0)."""
    return {"equal": float(compatibility(ctx.work))}


if __name__ == "__main__":
    sys.exit(main())
