"""``python -m evals`` against the original harness, each figure beside its target, in one run.

Every figure is a ratio of two whole processes (start-up included) run in turn, A B A B ..., taken pair
by pair and quoted as the median over ``--repeat`` pairs, so a drift in the machine's speed falls on
both sides of each pair alike:

* wall time of the original / ``python -m evals`` on the 200 × 500 synthetic corpus (1,000 test points;
  bench/gen_corpus.py), for mneme (hash; target >= 1.5), full_history and summary_buffer (>= 3);
* start-up: ``python -m evals --runner no_memory`` on the starter corpus / the original's, in wall time and in
  CPU time (target <= 1.25), with the bytecode of both written first (:func:`compile_bytecode`);
* overhead in CPU: CPU seconds of ``python -m evals --runner mneme`` (every process it waited for: its
  forked players, its tokenizer) / those of a bare serial loop making the same Mneme calls
  (bench/bench_overhead.py's; target <= 1.10).

"The original" is bench_harness.py's stand-in for it (``--_reference``). The load average is printed
before and after: on a busy machine the ratios are noisier, and the wall-time ones favour the side that
uses more processes.

    python bench/bench_legacy_cli.py               # 5 pairs each
    python bench/bench_legacy_cli.py --repeat 9 --jobs 1   # this CLI held to one process
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, REPO_ROOT, add_corpus_flags, load_average, original_command, print_table, run_checked  # noqa: E402
from _suite import Context, benchmark  # noqa: E402

WALL_TARGETS = {"mneme": 1.5, "full_history": 3.0, "summary_buffer": 3.0}  # original / this CLI, at least
STARTUP_TARGET = 1.25  # this CLI / the original, at most
OVERHEAD_TARGET = 1.10  # this CLI's CPU / the bare loop's, at most


def _paired(a: list[str], b: list[str], repeat: int, measure: Callable) -> tuple[float, float, float]:
    """Medians of A's and B's figure and of A/B pair by pair, A and B run in turn ``repeat`` times."""
    ours, theirs, ratios = [], [], []
    for _ in range(repeat):
        x = measure(run_checked(a, keep_stdout=False, poll=0.002))
        y = measure(run_checked(b, keep_stdout=False, poll=0.002))
        ours.append(x)
        theirs.append(y)
        ratios.append(x / y)
    return statistics.median(ours), statistics.median(theirs), statistics.median(ratios)


def _row(figure: str, a: str, b: str, ratio: float, target: float, at_least: bool) -> tuple[list[str], bool]:
    """A line of the table, and whether its figure met its target."""
    met = ratio >= target if at_least else ratio <= target
    bound = f"{'>=' if at_least else '<='} {target:g}x"
    return [figure, a, b, f"{ratio:.2f}x", bound, "met" if met else "MISSED"], met


def compile_bytecode() -> None:
    """Write the bytecode of the package and of bench/, as ``pip install`` does for an installed package. A
    checkout run with PYTHONDONTWRITEBYTECODE set (or from a read-only folder) never gets it, and then every
    run compiles each of the package's modules from source: about 0.25 s more of a no_memory run's 0.5 s,
    against the original's few modules."""
    import compileall

    for folder in (REPO_ROOT / "evals", REPO_ROOT / "bench"):
        compileall.compile_dir(folder, quiet=1)


def _wall(child) -> float:
    return child.wall_s


def _cpu(child) -> float:
    return child.cpu_s


Rows = list[tuple[list[str], bool]]


def measure(corpus: Path, runs: Path, repeat: int, jobs_given: int | None) -> tuple[Rows, dict[str, float]]:
    """Every ratio against the original (and the bare loop) on ``corpus``: the table's rows, and the figures by name."""
    from bench_overhead import commands as overhead_commands

    jobs = ["--jobs", str(jobs_given)] if jobs_given is not None else []
    figures: dict[str, float] = {}
    compile_bytecode()

    def ours(runner: str, where: Path, output: Path) -> list[str]:
        return [*EVALS, "--runner", runner, "--corpus", str(where), "--output", str(output), *jobs]

    rows: list[tuple[list[str], bool]] = []
    for runner, target in WALL_TARGETS.items():
        original, mine, ratio = _paired(
            original_command(runner, corpus, runs / f"legacy-{runner}.original.json"),
            ours(runner, corpus, runs / f"legacy-{runner}.json"),
            repeat,
            _wall,
        )
        figures[f"{runner}_original_over_this"] = ratio
        rows.append(_row(f"{runner}: original / this, wall", f"{original:.2f} s", f"{mine:.2f} s", ratio, target, True))
    starter = REPO_ROOT / "corpus"
    for measure_by, name, suffix in ((_wall, "wall", ""), (_cpu, "CPU", "_cpu")):
        mine, original, ratio = _paired(
            ours("no_memory", starter, runs / "legacy-startup.json"),
            original_command("no_memory", starter, runs / "legacy-startup.original.json"),
            repeat,
            measure_by,
        )
        figures[f"startup{suffix}_this_over_original"] = ratio
        figure = f"start-up (no_memory, starter corpus): this / original, {name}"
        rows.append(_row(figure, f"{mine:.3f} s", f"{original:.3f} s", ratio, STARTUP_TARGET, False))
    todo = overhead_commands(corpus, runs)
    mine, bare, ratio = _paired(todo["harness"][0] + jobs, todo["bare"][0], repeat, _cpu)
    figures["mneme_cpu_this_over_bare"] = ratio
    rows.append(
        _row("mneme: this / bare loop, CPU of all processes", f"{mine:.2f} s", f"{bare:.2f} s", ratio, OVERHEAD_TARGET, False)
    )
    return rows, figures


@benchmark(
    targets={"mneme_original_over_this": ">= 1.5", "full_history_original_over_this": ">= 3",
             "summary_buffer_original_over_this": ">= 3", "startup_this_over_original": "<= 1.25",
             "startup_cpu_this_over_original": "<= 1.25",
             "mneme_cpu_this_over_bare": "<= 1.10"},
    slow=True,
)  # fmt: skip
def against_the_original(ctx: Context) -> dict[str, float]:
    """python -m evals beside the original on 200 x 500 (wall, per runner), start-up, and CPU beside a bare Mneme loop."""
    from bench_harness import cached_corpus

    corpus = cached_corpus(*((20, 100, 5) if ctx.quick else (200, 500, 5)), 0, ctx.cache)
    return measure(corpus, ctx.work, 1 if ctx.quick else 5, None)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_flags(parser)
    parser.add_argument("--repeat", type=int, default=5, help="pairs per figure; the median counts (default 5)")
    parser.add_argument("--jobs", type=int, default=None, help="pass --jobs N to python -m evals (default: not given)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="corpus cache and run outputs (default bench/.data)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    from bench_harness import cached_corpus

    corpus = cached_corpus(args.conversations, args.turns, args.test_points, args.seed, args.data_dir)
    runs = args.data_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    before = load_average()
    rows, _ = measure(corpus, runs, args.repeat, args.jobs)
    print(f"corpus: {corpus} ({args.conversations} x {args.turns}, {args.conversations * args.test_points} test points)")
    print_table(["figure", "A", "B", "A/B, median of pairs", "target", "verdict"], [row for row, _ in rows])
    print(f"  medians of {args.repeat} pairs run in turn; load average (1/5/15 min) before {before}, after {load_average()}")
    return 0 if all(met for _, met in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
