"""Import and run every built-in strategy on a LongMemEval-shaped file: peak memory and wall time.

Runs, each in a child process, exactly what a user runs:

    evals import-corpus longmemeval FILE --out DIR
    evals run --runner R --corpus DIR --store STORE --force            (each strategy)
    evals run --runner R --corpus DIR --store STORE --force --executor ray   (with --ray)
    evals run --runner mneme --embedder minilm ...                      (with --minilm)

and reports each one's wall time and peak resident memory (``ru_maxrss`` from
``os.wait4``: the largest of that child and the processes it waited for, which
for a Ray run includes the local instance it started, workers included).
Target (issue 14): every import and run under 1.5 GB.

Stores: local runs go into one fresh store, Ray runs into another and the
MiniLM runs into a third, in the order given, so the first run into each also
writes the corpus. summary_buffer comes last by default: its records are
summaries of whole haystacks (338 MB of text a run on the 500-question file),
and DuckDB re-checkpoints the last row group of a table on every append, so a
run appended after it to the same store pays for that text again (see
bench/README.md).

With ``--minilm`` it also reports how many embeddings the run computed against
how many texts the play-through embeds (every turn and question, repeats
included) and how many of them are distinct: shared haystack texts must be
embedded once. The first minilm run starts from an empty cache.

    python bench/bench_longmemeval.py                                # 500 questions (generated once into bench/.data/)
    python bench/bench_longmemeval.py --file /tmp/lme.json --ray     # an existing file; local vs Ray wall time
    python bench/bench_longmemeval.py --corpus DIR --strategies summary_buffer,mneme
    python bench/bench_longmemeval.py --minilm --ray --strategies none
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, EVALS, load_average, print_table, run_checked  # noqa: E402

# summary_buffer last: see "stores" in the module docstring.
STRATEGIES = ("no_memory", "full_history", "mneme", "random_k", "recency", "bm25", "summary_buffer")
PEAK_MB = 1500  # issue 14: import and every built-in strategy's run under 1.5 GB


@dataclass
class Step:
    name: str
    wall_s: float
    peak_mb: float
    note: str = ""

    def __post_init__(self) -> None:  # each step as it ends, so a long bench shows where it is
        print(f"  {self.name}: {self.wall_s:.1f} s, {self.peak_mb:.0f} MB {self.note}".rstrip(), file=sys.stderr, flush=True)


def measure(command: list[str], *, timeout: float) -> tuple[float, float, str]:
    """Run ``command``; (wall seconds, peak RSS in MB of it and what it waited for, its stderr)."""
    child = run_checked(command, timeout=timeout)
    return child.wall_s, child.peak_mib, child.stderr


def texts_seen(corpus: Path) -> tuple[int, int]:
    """(texts a play-through embeds, distinct ones): every turn's content and every question."""
    from evals.model.corpus import load_corpus
    from evals.run.executors._play import corpus_texts

    seen = 0
    unique: set[str] = set()
    for text in corpus_texts(load_corpus(corpus).conversations):
        seen += 1
        unique.add(text)
    return seen, len(unique)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--file", type=Path, help="a LongMemEval-shaped JSON file (default: generate --questions into bench/.data/)"
    )
    parser.add_argument("--questions", type=int, default=500, help="questions to generate when no --file (default 500)")
    parser.add_argument("--corpus", type=Path, help="an already imported corpus folder (skips the import)")
    parser.add_argument(
        "--strategies", default=",".join(STRATEGIES), help="comma-separated, or 'none' (default: the seven built-ins)"
    )
    parser.add_argument("--ray", action="store_true", help="also run each with --executor ray (a local instance on this machine)")
    parser.add_argument("--minilm", action="store_true", help="also run mneme --embedder minilm from an empty cache, then again")
    parser.add_argument("--keep", type=Path, help="keep the store (and imported corpus) in this folder")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-lme-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    store, ray_store, minilm_store = work / "local.duckdb", work / "ray.duckdb", work / "minilm.duckdb"
    steps: list[Step] = []
    loads = [load_average()]
    try:
        corpus = args.corpus
        if corpus is None:
            source = args.file
            if source is None:
                from gen_longmemeval import generate

                source = DATA_DIR / f"lme_s_{args.questions}.json"
                if not source.exists():
                    DATA_DIR.mkdir(parents=True, exist_ok=True)
                    generate(source, args.questions)
            corpus = work / "corpus"
            shutil.rmtree(corpus, ignore_errors=True)
            command = [*EVALS, "import-corpus", "longmemeval", str(source), "--out", str(corpus)]
            wall, peak, _ = measure(command, timeout=args.timeout)
            steps.append(Step("import-corpus", wall, peak, f"{source.stat().st_size / 1e6:.0f} MB file"))
        strategies = [] if args.strategies == "none" else args.strategies.split(",")
        def base(path: Path) -> list[str]:
            return [*EVALS, "run", "--corpus", str(corpus), "--store", str(path), "--force"]

        for strategy in strategies:
            wall, peak, _ = measure([*base(store), "--runner", strategy], timeout=args.timeout)
            steps.append(Step(strategy, wall, peak))
            if args.ray:
                command = [*base(ray_store), "--runner", strategy, "--executor", "ray"]
                ray_wall, ray_peak, _ = measure(command, timeout=args.timeout)
                steps.append(Step(f"{strategy} --executor ray", ray_wall, ray_peak, f"{ray_wall / wall:.2f}x local wall"))
        if args.minilm:
            seen, distinct = texts_seen(corpus)
            cache = minilm_store.with_name(f"{minilm_store.stem}.cache.duckdb")
            runs = [("local", [])] + ([("ray", ["--executor", "ray"])] if args.ray else [])
            for label, extra in runs:
                cache.unlink(missing_ok=True)
                for attempt in ("empty cache", "again"):
                    command = [*base(minilm_store), "--runner", "mneme", "--embedder", "minilm", *extra]
                    wall, peak, stderr = measure(command, timeout=args.timeout)
                    found = re.search(r"cache: (\d+) computed, (\d+) from cache", stderr)
                    computed = found.group(1) if found else "0"
                    note = f"{computed} embeddings computed; {seen} texts seen, {distinct} distinct"
                    steps.append(Step(f"mneme minilm ({label}, {attempt})", wall, peak, note))
    finally:
        loads.append(load_average())
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    ok = all(step.peak_mb < PEAK_MB for step in steps)
    headers = ["step", "wall s", "peak MB", f"< {PEAK_MB} MB", "note"]
    rows = [[s.name, f"{s.wall_s:.1f}", f"{s.peak_mb:.0f}", "met" if s.peak_mb < PEAK_MB else "MISSED", s.note] for s in steps]
    print_table(headers, rows)
    print(f"  load average (1, 5, 15 min) before: {loads[0]}; after: {loads[1]}; {os.cpu_count()} cores")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
