"""BEAM per tier: questions per ability, how many name evidence, dangling ids, and recall_any@10 per ability.

    EVALS_MIRROR=/tmp/beam-mirror python bench/bench_beam.py --downloads /tmp/beam-dl 100K 500K
    python bench/bench_beam.py --downloads /tmp/beam-dl --strategy mneme --embedder minilm 100K

Each tier is fetched as `evals fetch beam_<tier>` does it (through ``$EVALS_MIRROR``: a folder or URL serving
``mohammadtavakoli78/BEAM/<commit>/<path>``, every file checked against its pin), imported again into a
temporary folder for the import's counts, and played through the strategy (bm25 by default) at k = 10.
Recall_any@10 per ability is the share of the ability's questions with evidence that have an evidence
message among the first 10 records, with its Wilson 95% interval: the figure the run page shows per
category. BEAM publishes no retrieval figure to compare it with.

A local mirror from a git snapshot of the repository (bare, as `git clone --mirror` makes it):

    python bench/bench_beam.py --mirror-from /path/to/BEAM.git --mirror /tmp/beam-mirror 100K 500K
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import add_pinned_run_flags, pinned_run
from _suite import Context
from _suite import benchmark as bench_mark

from evals.benchmarks import benchmark, fetch
from evals.benchmarks.beam import ABILITIES, COMMIT, PINS, REPOSITORY
from evals.benchmarks.beam.importer import import_beam
from evals.judge.metrics import ScoredRun, grouped, point_values
from evals.run.config import RunConfig
from evals.run.evaluate import evaluate


def make_mirror(snapshot: str, mirror: Path, tiers: list[str]) -> None:
    """Write the pinned files of ``tiers`` that the snapshot holds under ``mirror`` at OWNER/REPO/COMMIT/PATH."""
    for tier in tiers:
        for path, _size, sha256, blob in PINS[tier]:
            if sha256 is None:
                continue  # not in the snapshot
            target = mirror / REPOSITORY / COMMIT / path
            if not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                command = ["git", "-C", snapshot, "cat-file", "blob", blob]
                blob_bytes = subprocess.run(command, capture_output=True, check=True).stdout
                target.write_bytes(blob_bytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tiers", nargs="+", choices=list(PINS))
    add_pinned_run_flags(parser)
    args = parser.parse_args()
    if args.mirror_from:
        make_mirror(args.mirror_from, args.mirror, args.tiers)
    lock, label = pinned_run(args)
    for tier in args.tiers:
        name = f"beam_{tier.lower()}"
        fetched = fetch(name, downloads=args.downloads, lock_path=lock)
        with tempfile.TemporaryDirectory() as scratch:
            counts = import_beam(args.downloads / name / benchmark(name).import_root, Path(scratch) / "corpus").counts
        options = {"embedder": args.embedder} if args.embedder else {}
        config = RunConfig(strategy=args.strategy, options=options, corpus=fetched.corpus, k=10)
        evaluation = evaluate(config)
        values = point_values(ScoredRun(evaluation.run, evaluation.scores), ["evidence_recall_any"])
        by_ability = grouped(values, "category", ["evidence_recall_any"])
        print(f"\nBEAM {tier}: {fetched.corpus}; {label} recall_any@10 per ability (Wilson 95%)")
        print(f"{'ability':<26} {'questions':>9} {'evidence':>8} {'dangling':>8}  recall_any@10")
        for ability in ABILITIES:
            found = by_ability.get(ability, {}).get("evidence_recall_any")
            figure = "—"
            if found is not None and found.value is not None:
                figure = f"{found.value:.3f} [{found.low:.3f}, {found.high:.3f}] n={found.n}"
            print(f"{ability:<26} {counts.questions.get(ability, 0):>9} {counts.with_evidence.get(ability, 0):>8} "
                  f"{counts.dangling.get(ability, 0):>8}  {figure}")
        whole = grouped(values, None, ["evidence_recall_any"])
        overall = next(iter(whole.values()))["evidence_recall_any"]
        print(f"{'all':<26} {sum(counts.questions.values()):>9} {sum(counts.with_evidence.values()):>8} "
              f"{sum(counts.dangling.values()):>8}  {overall.value:.3f} [{overall.low:.3f}, {overall.high:.3f}] n={overall.n}")
        sys.stdout.flush()


@bench_mark(needs=("beam_100k",), slow=True)
def bm25_by_ability(ctx: Context) -> dict[str, float]:
    """bm25 at k=10 on BEAM 100K (an `evals fetch beam_100k` corpus): recall_any@10 per ability and overall."""
    evaluation = evaluate(RunConfig(strategy="bm25", corpus=ctx.data("beam_100k"), k=10))
    values = point_values(ScoredRun(evaluation.run, evaluation.scores), ["evidence_recall_any"])
    figures = {f"{ability}_recall_any": found["evidence_recall_any"].value
               for ability, found in grouped(values, "category", ["evidence_recall_any"]).items()
               if found["evidence_recall_any"].value is not None}  # fmt: skip
    overall = next(iter(grouped(values, None, ["evidence_recall_any"]).values()))["evidence_recall_any"]
    return figures | {"recall_any": overall.value}


if __name__ == "__main__":
    main()
