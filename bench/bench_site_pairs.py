"""What the compare pages (compare/<A>-vs-<B>.html and their data files) add to a LoCoMo site (issue 34).

Generates a LoCoMo-shaped file at the real size (bench/gen_locomo.py: 10 conversations, 1,990
questions), imports it, runs ten configurations on it, and builds the site twice: with every page kind,
and without the compare pages' publisher. Prints both sizes, what the comparisons add (the pair pages,
each run's data file and the corpus's points file) against the budget of 15 MB, the number of pairs
and flips, and the largest page.

    python bench/bench_site_pairs.py [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_locomo import generate  # noqa: E402

from evals.benchmarks.formats import import_corpus  # noqa: E402
from evals.model.provenance import Provenance  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402
from evals.site._build import build  # noqa: E402
from evals.site._pairs import PairsPublisher  # noqa: E402
from evals.site._registry import PUBLISHERS  # noqa: E402
from evals.store import Store  # noqa: E402

BUDGET = 15_000_000
CONFIGURATIONS = (
    ("bm25", 5), ("bm25", 10), ("recency", 5), ("recency", 10), ("random_k", 5), ("mneme", 5),
    ("no_memory", 5), ("oracle", 5), ("full_history", 5), ("summary_buffer", 5),
)  # fmt: skip


def _size(root: Path, keep=lambda rel: True) -> int:
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            if keep(path.relative_to(root).as_posix()):
                total += path.stat().st_size
    return total


def _pairs_part(rel: str) -> bool:
    return rel.startswith("compare/") or rel.endswith(".data.js") or rel.endswith("/points.js")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpus, store and sites (default: a temporary)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-pairs-"))
    work.mkdir(parents=True, exist_ok=True)
    store = work / "results.duckdb"
    if not store.exists():
        generate(work / "locomo.json")
        import_corpus("locomo", work / "locomo.json", work / "locomo")
        provenance = Provenance(commit="b" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
        with Store.open(store) as opened:
            for strategy, k in CONFIGURATIONS:
                opened.append(evaluate(RunConfig(strategy=strategy, corpus=work / "locomo", k=k)), provenance)
                print(f"ran {strategy} k={k}", flush=True)
    others = [p for p in PUBLISHERS if p is not PairsPublisher]
    without = build(store, work / "site-without", publishers=others, incremental=False)
    full = build(store, work / "site", incremental=False)
    pages = list((work / "site" / "compare").glob("*.html"))
    flips = sum(page.read_text(encoding="utf-8").count("data-flip=") for page in pages)
    added = _size(work / "site", _pairs_part)
    print(f"site with comparisons: {full.bytes / 1e6:.1f} MB, {full.pages} pages; without: {without.bytes / 1e6:.1f} MB")
    site = work / "site"
    pair_pages = _size(site, lambda r: r.startswith("compare/"))
    data = _size(site, lambda r: r.endswith(".data.js"))
    evidence = _size(site, lambda r: r.endswith("/points.js"))
    print(
        f"the comparisons add {added / 1e6:.2f} MB (budget {BUDGET / 1e6:.0f} MB): "
        f"{len(pages)} pair pages {pair_pages / 1e6:.2f} MB, run data files {data / 1e6:.2f} MB, "
        f"corpus points {evidence / 1e6:.2f} MB; {flips} flipped questions in all"
    )
    print(f"largest page: {full.largest_page} ({full.largest_page_bytes / 1e6:.2f} MB)")
    print(f"build {full.seconds:.1f} s (without the comparisons: {without.seconds:.1f} s)")
    print("within budget" if added <= BUDGET else "OVER BUDGET")


if __name__ == "__main__":
    main()
