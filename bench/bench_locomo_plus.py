"""LoCoMo-Plus: its counts and recall_any@10 of the cue, fetched at its pins and stitched as data/unified_input.py does.

    python bench/bench_locomo_plus.py --downloads /tmp/lp-dl --mirror-from /path/to/Locomo-Plus.git --mirror /tmp/lp-mirror
    EVALS_MIRROR=/tmp/lp-mirror python bench/bench_locomo_plus.py --downloads /tmp/lp-dl --strategy mneme --embedder minilm

Fetches `locomo_plus` (through ``$EVALS_MIRROR`` when set, every file checked against its pin), plays the strategy
(bm25 by default) at k = 10, and prints the items, those with evidence, and recall_any@10 (the share of trigger
queries with a cue turn among the first 10 records) with its Wilson 95% interval. LoCoMo-Plus publishes no
retrieval figure to compare it with.
"""

from __future__ import annotations

import argparse
import subprocess

from _common import add_pinned_run_flags, pinned_run
from _suite import Context, benchmark

from evals.benchmarks import BENCHMARKS, fetch
from evals.judge.metrics import ScoredRun, grouped, point_values
from evals.run.config import RunConfig
from evals.run.evaluate import evaluate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_pinned_run_flags(parser)
    args = parser.parse_args()
    if args.mirror_from:
        for file in BENCHMARKS["locomo_plus"].tree:
            target = args.mirror / file.name
            target.parent.mkdir(parents=True, exist_ok=True)
            _, _, commit, path = file.name.split("/", 3)
            command = ["git", "-C", args.mirror_from, "show", f"{commit}:{path}"]
            target.write_bytes(subprocess.run(command, capture_output=True, check=True).stdout)
    lock, label = pinned_run(args)
    fetched = fetch("locomo_plus", downloads=args.downloads, lock_path=lock)
    options = {"embedder": args.embedder} if args.embedder else {}
    evaluation = evaluate(RunConfig(strategy=args.strategy, options=options, corpus=fetched.corpus, k=10))
    points = [p for c in evaluation.corpus.conversations for _, p in c.test_points()]
    values = point_values(ScoredRun(evaluation.run, evaluation.scores), ["evidence_recall_any"])
    found = next(iter(grouped(values, None, ["evidence_recall_any"]).values()))["evidence_recall_any"]
    print(f"LoCoMo-Plus: {fetched.corpus}: {len(points)} items, {sum(bool(p.evidence_turns) for p in points)} with evidence")
    print(f"{label} recall_any@10 of the cue: {found.value:.3f} [{found.low:.3f}, {found.high:.3f}] n={found.n}")


@benchmark(needs=("locomo_plus",), slow=True)
def bm25_cue_recall(ctx: Context) -> dict[str, float]:
    """bm25 at k=10 on LoCoMo-Plus (an `evals fetch locomo_plus` corpus): recall_any@10 of the cue turn."""
    evaluation = evaluate(RunConfig(strategy="bm25", corpus=ctx.data("locomo_plus"), k=10))
    values = point_values(ScoredRun(evaluation.run, evaluation.scores), ["evidence_recall_any"])
    found = next(iter(grouped(values, None, ["evidence_recall_any"]).values()))["evidence_recall_any"]
    return {"recall_any": found.value, "n": found.n}


if __name__ == "__main__":
    main()
