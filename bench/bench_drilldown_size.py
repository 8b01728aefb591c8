"""Benchmark: drill-down pages on real LoCoMo against issue 24's size targets.

Imports LoCoMo (``locomo10.json``: 10 conversations, 1,986 questions) into a corpus, runs
strategies into a store, builds the site, and prints, per run, its largest drill-down page
(bytes and DOM elements) and how much the run adds to the site (its drill-downs, run page and
JSON), each beside its target:

- a drill-down page at most 600 KB and 10,000 elements;
- at most 10 MB added to the site per LoCoMo run.

    git -C <a clone of snap-research/LoCoMo> show HEAD:data/locomo10.json > /tmp/locomo10.json
    python bench/bench_drilldown_size.py /tmp/locomo10.json --data-dir /tmp/drilldown-bench

Runs are made once and kept in ``--data-dir`` (delete it to make them again). Exit code 0 when
every target is met.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import EVALS  # noqa: E402

STRATEGIES = ("bm25", "recency", "full_history", "summary_buffer", "mneme")
PAGE_KB, PAGE_ELEMENTS, RUN_MB = 600, 10_000, 10


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.count += 1


def elements(path: Path) -> int:
    parser = _Elements()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("locomo", type=Path, help="locomo10.json")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/drilldown-bench"))
    args = parser.parse_args()
    data = args.data_dir
    corpus, store, site = data / "locomo", data / "results.duckdb", data / "site"
    data.mkdir(parents=True, exist_ok=True)
    if not corpus.exists():
        subprocess.run([*EVALS, "import-corpus", "locomo", str(args.locomo), "--out", str(corpus)], check=True)
    if not store.exists():
        for strategy in STRATEGIES:
            subprocess.run([*EVALS, "run", "--runner", strategy, "--corpus", str(corpus), "--store", str(store)], check=True)
    shutil.rmtree(site, ignore_errors=True)
    subprocess.run([*EVALS, "build-site", "--store", str(store), "--out", str(site), "--store-copy", "never"], check=True)
    summaries = subprocess.run(
        [*EVALS, "runs", "--store", str(store), "--format", "json"], check=True, capture_output=True, text=True
    )
    import json

    ok = True
    print(f"{'run':<14} {'strategy':<15} {'largest page':<22} {'KB':>6} {'elements':>9} {'run adds':>9}")
    for row in json.loads(summaries.stdout):
        run_id = row["run_id"]
        pages = sorted((site / "runs" / run_id).glob("*.html"), key=lambda p: p.stat().st_size)
        largest = pages[-1]
        size_kb = largest.stat().st_size / 1024
        count = elements(largest)
        added = sum(p.stat().st_size for p in (site / "runs" / run_id).iterdir()) + sum(
            p.stat().st_size for p in (site / "runs").glob(f"{run_id}.*")
        )
        added_mb = added / 1_000_000
        met = size_kb <= PAGE_KB and count <= PAGE_ELEMENTS and added_mb <= RUN_MB
        ok &= met
        print(
            f"{run_id:<14} {row['strategy']:<15} {largest.name:<22} {size_kb:>6.0f} {count:>9,} {added_mb:>7.1f}MB "
            f"{'ok' if met else 'OVER'}"
        )
    print(f"targets: a drill-down page <= {PAGE_KB} KB and <= {PAGE_ELEMENTS:,} elements; <= {RUN_MB} MB added per run")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
