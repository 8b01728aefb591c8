"""Calibration evidence: on long conversations, does the table tell a real memory from chance?

Generates a long-conversation corpus with ``gen_corpus.py`` (default 20
conversations × 300 turns, 5 planted facts each: 100 test points), then runs,
each through the public CLI into a temporary store:

* ``random_k``: k earlier turns drawn at random, the chance floor;
* ``mneme`` with the ``hash`` embedder: random vectors, so chance too;
* ``mneme`` with ``minilm``: a real semantic embedder (needs the minilm extra);
* ``bm25``: lexical top-k;
* ``full_history``: the ceiling, at its cost.

It prints the Markdown leaderboard (``evals leaderboard --format markdown``),
McNemar's exact p for the pairs that matter (``evals compare``), and reruns
minilm with ``--force`` to show that the second run computes no embedding
(the ``cache:`` line). What to expect: random_k against mneme-hash
indistinguishable (large p, overlapping intervals); minilm and bm25 far above
both (p near 0, intervals apart).

    python tools/calibration.py
    python tools/calibration.py --conversations 20 --turns 300 --keep /tmp/calibration

``--keep DIR`` leaves the corpus and the store (with its embedding cache) in
DIR; otherwise they live in a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))

from gen_corpus import generate  # noqa: E402

# (label, `evals run` arguments)
RUNS = (
    ("random_k", ["--runner", "random_k"]),
    ("mneme-hash", ["--runner", "mneme", "--option", "embedder=hash"]),
    ("mneme-minilm", ["--runner", "mneme", "--option", "embedder=minilm"]),
    ("bm25", ["--runner", "bm25"]),
    ("full_history", ["--runner", "full_history"]),
)
# McNemar pairs: (A, B, what we expect)
PAIRS = (
    ("random_k", "mneme-hash", "indistinguishable: both are chance"),
    ("random_k", "mneme-minilm", "minilm far above chance"),
    ("random_k", "bm25", "bm25 far above chance"),
    ("mneme-hash", "mneme-minilm", "minilm far above hash"),
    ("mneme-minilm", "bm25", "the two real retrievers"),
)
_RUN_ID = re.compile(r"^(?:cached: )?run ([0-9a-f]+):", re.MULTILINE)
_MCNEMAR = re.compile(r"^McNemar .*$", re.MULTILINE)


def evals(*args: str) -> subprocess.CompletedProcess[str]:
    """``evals ARGS`` in a child process, as a user would run it; fails loudly."""
    proc = subprocess.run([sys.executable, "-m", "evals", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"evals {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def cache_line(stderr: str) -> str:
    return next((line for line in stderr.splitlines() if line.startswith("cache:")), "cache: (no line: nothing cached)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--test-points", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (the runs use evals' default seed, 42)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="keep the corpus and store in this folder")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="evals-calibration-") as scratch:
        base = args.keep or Path(scratch)
        corpus = base / f"long_{args.conversations}x{args.turns}"
        store = base / "calibration.duckdb"
        made = generate(corpus, args.conversations, args.turns, args.test_points, args.seed)
        print(
            f"corpus: {made.conversations} conversations × {made.turns} turns, "
            f"{made.total_test_points} test points (bench/gen_corpus.py, seed {args.seed}) -> {corpus}"
        )
        common = ["--corpus", str(corpus), "--store", str(store), "--k", str(args.k), "--force"]
        run_ids: dict[str, str] = {}
        for label, run_args in RUNS:
            clock = time.perf_counter()
            proc = evals("run", *run_args, *common)
            run_ids[label] = _RUN_ID.search(proc.stdout).group(1)
            seconds = time.perf_counter() - clock
            print(f"{label:>13}: {proc.stdout.strip()}  [{seconds:.1f} s; {cache_line(proc.stderr)}]")

        print("\n## evals leaderboard --format markdown\n")
        print(evals("leaderboard", "--format", "markdown", "--store", str(store)).stdout)

        print("## McNemar's exact test (evals compare A B)\n")
        print("| A | B | expected | result |")
        print("|---|---|---|---|")
        for a, b, expected in PAIRS:
            out = evals("compare", run_ids[a], run_ids[b], "--store", str(store)).stdout
            result = _MCNEMAR.search(out).group(0).split(": ", 1)[1]
            print(f"| {a} | {b} | {expected} | {result} |")

        print("\n## minilm again, --force: the embeddings come from the cache\n")
        clock = time.perf_counter()
        proc = evals("run", "--runner", "mneme", "--option", "embedder=minilm", *common)
        print(f"{cache_line(proc.stderr)}  ({time.perf_counter() - clock:.1f} s)")
        first = json.loads(evals("export", run_ids["mneme-minilm"], "--store", str(store)).stdout)
        again = json.loads(evals("export", _RUN_ID.search(proc.stdout).group(1), "--store", str(store)).stdout)
        same = first["conversations"] == again["conversations"]
        print(f"same retrieved records as the first minilm run: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
