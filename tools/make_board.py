"""The published board: the field on each benchmark at one k, run into a store per benchmark, exported as board files.

For every benchmark named with ``--benchmark NAME=CORPUS`` (a corpus ``evals fetch NAME`` imported), each
configuration of the field (bench/bench_field.py's ``FIELD``: every offline library, Mneme on MiniLM, bm25)
and the baselines and ceilings beside it is one ``evals run`` into ``STORES/NAME.duckdb``, as a user would
type it; a run the store already holds at the same inputs is reused. Then every configuration's latest run
on that store is written to ``BOARD/<benchmark>/<system>/<run id>.json`` with ``evals export --board``
(docs/board.md), and ``evals verify BOARD`` checks the lot.

A run that does not finish within ``--time-limit`` seconds is stopped and said so; a runner whose extra is
not installed is listed as skipped. The times printed are the whole processes', wall clock.

    python tools/make_board.py --benchmark locomo=$DL/corpora/locomo --benchmark beam_100k=$DL/corpora/beam_100k \\
        --stores /tmp/board-stores --board board
    python tools/make_board.py ... --export-only      # only write the board files of what the stores hold
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))

from _common import EVALS, load_average, run_child  # noqa: E402
from bench_field import FIELD  # noqa: E402

# Beside the libraries: the floor (nothing, the last turns) and the ceilings (every turn, the labelled turns).
BASELINES: list[tuple[str, str, list[str]]] = [
    ("recency", "recency", []),
    ("full_history", "full_history", []),
    ("oracle", "oracle", []),
]
SLOW = ("mempalace", "llamaindex")  # run last: they embed or write anew what no other runner cached (minutes to an hour)


def _installed() -> set[str]:
    return set(run_child([*EVALS, "strategies", "--available", "--names"]).stdout.split())


def run_field(name: str, corpus: Path, store: Path, k: int, time_limit: float, only: set[str], skip: set[str]) -> None:
    """Each configuration of the field and the baselines, one ``evals run`` into ``store``."""
    ready = _installed()
    for label, runner, options in sorted([*FIELD, *BASELINES], key=lambda entry: entry[1] in SLOW):
        if (only and label not in only) or label in skip:
            continue
        if runner not in ready:
            print(f"{name}: {label}: skipped (not installed: see `evals strategies`)", flush=True)
            continue
        command = [*EVALS, "run", "--runner", runner, *options, "--corpus", str(corpus), "--k", str(k), "--store", str(store)]
        child = run_child(command, merged=True, timeout=time_limit)
        last = next((line for line in reversed(child.stdout.splitlines()) if line.startswith(("run ", "cached: run "))), "")
        if child.timed_out:
            print(f"{name}: {label}: did not finish within {time_limit:,.0f} s on this machine (stopped)", flush=True)
        elif child.returncode != 0:
            print(f"{name}: {label}: exit {child.returncode}: {child.stdout.strip().splitlines()[-1:]}", flush=True)
        else:
            print(f"{name}: {label}: {child.wall_s:,.0f} s; {last[:160]}", flush=True)


def export_board(store: Path, board: Path) -> int:
    """Every configuration's latest run on ``store`` as a board file under ``board``; how many were written."""
    listed = run_child([*EVALS, "leaderboard", "--store", str(store), "--format", "json"])
    if listed.returncode != 0:
        raise SystemExit(f"evals leaderboard --store {store} failed: {listed.stdout[-500:]}")
    written = 0
    for row in json.loads(listed.stdout):
        done = run_child([*EVALS, "export", row["run_id"], "--store", str(store), "--board", str(board)], merged=True)
        if done.returncode != 0:
            raise SystemExit(f"evals export {row['run_id']} failed: {done.stdout[-500:]}")
        written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", action="append", default=[], metavar="NAME=CORPUS", required=True)
    parser.add_argument("--stores", type=Path, required=True, help="folder of one store per benchmark (made if missing)")
    parser.add_argument("--board", type=Path, default=Path("board"))
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=3600.0, help="seconds one run may take (default: an hour)")
    parser.add_argument("--only", default="", help="comma-separated labels of bench_field.py's FIELD to run")
    parser.add_argument(
        "--downloads", type=Path, default=None, help="the folder `evals fetch` downloaded the benchmarks into ($EVALS_DOWNLOADS)"
    )
    parser.add_argument("--skip", default="", help="comma-separated labels not to run")
    parser.add_argument("--export-only", action="store_true", help="run nothing: write the board files of what the stores hold")
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    args.stores.mkdir(parents=True, exist_ok=True)
    if args.downloads is not None:  # export names each file's pinned release from there; verify finds the labels there
        os.environ["EVALS_DOWNLOADS"] = str(args.downloads)
    print(f"load average at start: {load_average()}", flush=True)
    started = time.perf_counter()
    for pair in args.benchmark:
        name, _, corpus = pair.partition("=")
        if not corpus:
            parser.error(f"--benchmark {pair!r}: write NAME=CORPUS")
        store = args.stores / f"{name}.duckdb"
        if not args.export_only:
            run_field(name, Path(corpus), store, args.k, args.time_limit, only, skip)
        print(f"{name}: {export_board(store, args.board)} board files -> {args.board}", flush=True)
    verified = run_child([*EVALS, "verify", str(args.board)], merged=True)
    lines = verified.stdout.strip().splitlines()
    for line in lines:  # every file that is not verified, and why
        if not line.startswith("verified"):
            print(line)
    print(f"evals verify: {sum(line.startswith('verified') for line in lines)} of {len(lines)} files verified")
    print(f"board made in {time.perf_counter() - started:,.0f} s; load average at end: {load_average()}")
    return verified.returncode


if __name__ == "__main__":
    sys.exit(main())
