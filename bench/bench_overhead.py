"""The harness's overhead: ``python -m evals --runner mneme`` against a bare loop making the same Mneme calls.

The bare loop (``bare_loop`` below) is what the harness does for mneme with
nothing around it: read each conversation with ``json``, ``clear_all()``, walk
the turns, at a test point ``manager.retrieve(question, k=5)`` first, then
write the turn to working memory and to the episodic tier, exactly as SPEC.md
describes the play-through. It keeps the retrieved lists and writes them out;
nothing else (no validation, no token counts, no metrics, no result document).

Each is run as a child process, as a user would, interpreter start-up included:

    bare:      python bench/bench_overhead.py --_bare CORPUS OUT.json
    harness:   python -m evals --runner mneme --corpus CORPUS --output OUT.json
    original:  python bench/bench_harness.py --_reference mneme CORPUS OUT.json

"original" is bench_harness.py's stand-in for the original harness (same
Mneme calls, corpus read with ``json``, every retrieved record encoded with
cl100k at every test point). The three are run in turn ``--repeat`` times so
that the machine's other load falls on all of them alike; the best wall time
of each counts, and the median is printed beside it. The retrieved lists of
all three must be identical, test point by test point, or the script fails.

Targets: harness ≤ 1.10 × bare in CPU seconds of all its processes (overhead
≤ 10%), and the retrieved lists identical. The suite's benchmark here times the
harness's steps in one process (``--phases``); bench_first_path.py holds the
ratios against the bare loop and the original.

    python bench/bench_overhead.py                    # 200 × 500 × 5 (1,000 test points), best of 5
    python bench/bench_overhead.py --repeat 9 --phases
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, REPO_ROOT, add_corpus_flags, original_command, run_checked  # noqa: E402
from _suite import Context, benchmark  # noqa: E402

OVERHEAD_TARGET = 0.10  # the harness may take at most 10% longer than the bare loop
K = 5


def bare_loop(corpus: Path, output: Path, k: int = K) -> None:
    """Mneme's play-through with nothing around it; writes the retrieved lists, in corpus order."""
    import mneme

    manager = mneme.MemoryManager(
        agent_id="eval", backend=mneme.InMemoryBackend(), embedder=mneme.HashEmbedder(dimensions=16)
    )
    retrieved: list[list[str]] = []
    for path in sorted(corpus.glob("*.json")):
        conversation = json.loads(path.read_text(encoding="utf-8"))
        manager.clear_all()
        for turn in conversation["turns"]:
            test = turn.get("test_at")
            if test is not None:
                retrieved.append([r.record.content for r in manager.retrieve(test["question"], k=k)])
            role, content = turn["role"], turn["content"]
            manager.working.add(role=role, content=content)
            manager.episodic.add(content, metadata={"role": role, "source": "eval"})
    output.write_text(json.dumps(retrieved, ensure_ascii=False), encoding="utf-8")


def retrieved_lists(path: Path) -> list[list[str]]:
    """The retrieved lists of a result document (harness or original) or of the bare loop's output."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(document, list):
        return document
    return [p["retrieved_records"] for c in document["conversations"] for p in c["test_points"]]


def commands(corpus: Path, runs: Path, before: Path | None = None) -> dict[str, tuple[list[str], Path]]:
    py = sys.executable
    out = {name: runs / f"overhead-{name}.json" for name in ("bare", "harness", "original", "before")}
    todo = {
        "bare": ([py, str(Path(__file__).resolve()), "--_bare", str(corpus), str(out["bare"])], out["bare"]),
        "harness": ([*EVALS, "--runner", "mneme", "--corpus", str(corpus), "--output", str(out["harness"])], out["harness"]),
        "original": (original_command("mneme", corpus, out["original"]), out["original"]),
    }
    if before is not None:  # another checkout's harness, run from there: with its own .venv, else this one's
        own = before / ".venv" / "bin" / "python"
        python = [str(own)] if own.exists() else [f"PYTHONPATH={before.resolve()}", py]
        todo["before"] = (
            ["env", "-C", str(before), *python, "-m", "evals", "--runner", "mneme",
             "--corpus", str(corpus.resolve()), "--output", str(out["before"].resolve())],
            out["before"],
        )  # fmt: skip
    return todo


def timed(command: list[str], timeout: float) -> tuple[float, float]:
    """Run ``command`` from the repository root: (wall seconds, CPU seconds of it and of the children it waited for)."""
    child = run_checked(command, timeout=timeout, keep_stdout=False, poll=0.002)
    return child.wall_s, child.cpu_s


def phases(corpus: Path) -> list[tuple[str, float, float]]:
    """Where the harness's time goes, in this process: each step of ``evaluate`` as the original CLI
    runs it (no footprint counted, k only), timed on its own: (step, wall seconds, CPU seconds)."""
    from evals.judge.scoring import score_run
    from evals.model.tokens import TokenCounter
    from evals.run.evaluate import RunConfig, _load_without_collecting, _records_needed
    from evals.run.executors import LocalExecutor, PlayJob
    from evals.run.playthrough import likely_records
    from evals.strategies import Registry
    from evals.views.report import dump_json, legacy_json

    steps: list[tuple[str, float, float]] = []
    clock, cpu = time.perf_counter(), time.process_time()

    def step(name: str) -> None:
        nonlocal clock, cpu
        now, used = time.perf_counter(), time.process_time()
        steps.append((name, now - clock, used - cpu))
        clock, cpu = now, used

    config = RunConfig(strategy="mneme", corpus=corpus, cutoffs=())
    loaded = _load_without_collecting(corpus)
    step("load and validate the corpus")
    planned = config.plan(Registry())
    strategy = planned.build()
    step("plan and build the strategy (imports mneme)")
    counter = TokenCounter()
    if counter.ahead_pays(_records_needed(config, loaded, strategy, planned.spec.ignores_k, False)):
        counter.count_ahead(likely_records(loaded, strategy, planned.spec.name, held=False))
    else:
        counter.load_beside()
    step("start the tokenizer's child")
    played = LocalExecutor().play(PlayJob(config, loaded, planned, strategy))
    step("play (Mneme's calls and the loop around them)")
    scores = score_run(played.run, counter)
    step("count tokens (from the child) and score")
    dump_json(legacy_json(played.run, scores, None))
    step("the result document")
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_flags(parser)
    parser.add_argument("--corpus", type=Path, help="a corpus folder to use instead of the generated one")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the three runs; the best counts (default 5)")
    parser.add_argument("--no-original", action="store_true", help="skip the original-harness stand-in")
    parser.add_argument("--phases", action="store_true", help="also time the harness's steps in this process")
    parser.add_argument(
        "--before", type=Path, help="another checkout whose harness to time alongside (its .venv if it has one, else this one's)"
    )
    parser.add_argument("--timeout", type=float, default=900, help="seconds before a child run is killed (default 900)")
    parser.add_argument("--data-dir", type=Path, help="corpus cache and run outputs (default bench/.data)")
    parser.add_argument("--_bare", nargs=2, metavar=("CORPUS", "OUTPUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._bare:
        bare_loop(Path(args._bare[0]), Path(args._bare[1]))
        return 0
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    from bench_harness import cached_corpus

    data_dir = args.data_dir or DATA_DIR
    corpus = args.corpus or cached_corpus(args.conversations, args.turns, args.test_points, args.seed, data_dir)
    runs = data_dir / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    todo = commands(corpus, runs, args.before)
    if args.no_original:
        del todo["original"]

    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {name: [] for name in todo}
    cpus: dict[str, list[float]] = {name: [] for name in todo}
    for round_ in range(args.repeat):
        for name, (command, _) in todo.items():
            wall, cpu = timed(command, args.timeout)
            walls[name].append(wall)
            cpus[name].append(cpu)
        print(f"round {round_ + 1}: " + ", ".join(f"{n} {t[-1]:.2f} s" for n, t in walls.items()), file=sys.stderr)
    load_after = os.getloadavg()

    lists = {name: retrieved_lists(output) for name, (_, output) in todo.items()}
    points = len(lists["bare"])
    same = all(found == lists["bare"] for found in lists.values())

    best = {name: min(t) for name, t in walls.items()}
    ratio = best["harness"] / best["bare"]
    print(f"corpus: {corpus} ({points} test points)")
    for name, (command, _) in todo.items():
        shown = " ".join(command).replace(str(REPO_ROOT) + os.sep, "")
        print(
            f"  {name:<8} wall best {best[name]:5.2f} s, median {statistics.median(walls[name]):5.2f} s; "
            f"CPU best {min(cpus[name]):5.2f} s   {shown}"
        )
    met_overhead = ratio <= 1 + OVERHEAD_TARGET
    print(
        f"harness / bare = {best['harness']:.2f} / {best['bare']:.2f} = {ratio:.3f}: overhead {ratio - 1:+.1%} "
        f"(target <= {OVERHEAD_TARGET:.0%}: {'met' if met_overhead else 'MISSED'}); "
        f"in CPU time {min(cpus['harness']) / min(cpus['bare']) - 1:+.1%}"
    )
    if "before" in best:
        speed = best["before"] / best["harness"]
        print(f"before / harness = {best['before']:.2f} / {best['harness']:.2f} = {speed:.3f}x ({args.before})")
    met_original = True
    if "original" in best:
        speed = best["original"] / best["harness"]
        met_original = speed >= 1.0
        print(
            f"original / harness = {best['original']:.2f} / {best['harness']:.2f} = {speed:.3f}x "
            f"(target >= 1.0x: {'met' if met_original else 'MISSED'})"
        )
    print(f"retrieved lists: {'identical' if same else 'DIFFERENT'} across {', '.join(todo)} ({points} test points)")
    print(
        f"load average (1/5/15 min) before {' '.join(f'{v:.2f}' for v in load_before)}, "
        f"after {' '.join(f'{v:.2f}' for v in load_after)}; best of {args.repeat} rounds"
    )
    if args.phases:
        print("harness steps, in this process (imports done; wall and CPU seconds):")
        for name, seconds, cpu in phases(corpus):
            print(f"  {seconds:6.3f} s {cpu:6.3f} s  {name}")
    return 0 if same and met_overhead and met_original else 1


@benchmark(slow=True)
def harness_steps(ctx: Context) -> dict[str, float]:
    """The harness's steps for mneme on 200 x 500, in one process, imports done: wall seconds of each."""
    from bench_harness import cached_corpus

    corpus = cached_corpus(*((20, 100, 5) if ctx.quick else (200, 500, 5)), 0, ctx.cache)
    return {f"{name}_s": seconds for name, seconds, _ in phases(corpus)}


if __name__ == "__main__":
    sys.exit(main())
