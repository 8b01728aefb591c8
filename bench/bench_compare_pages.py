"""How big and how tall a compare page with hundreds of flips is, and how soon a filtered view paints (issue 43).

Generates a LoCoMo-shaped file (bench/gen_locomo.py: 10 conversations of 24 sessions, 199 questions each, as the real file),
imports it, runs bm25 and recency at k=5 (hundreds of flips between them), builds the site, and opens the
compare page with the most flips (bm25 vs recency) in headless Chromium: its bytes, its height in px at 1280 and 390 px wide once
drawn, and the first contentful paint of a filtered view (one category, one direction) from the URL alone.

    python bench/bench_compare_pages.py [--work DIR]   # DIR keeps the store, so a second call only rebuilds the site
    python bench/bench_compare_pages.py --corpus CORPUS --strategy bm25 --strategy mneme:minilm --work DIR
        # a corpus of your own (the real LoCoMo: `evals fetch locomo` or `evals import-corpus locomo`), these strategies
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from gen_locomo import generate  # noqa: E402
from helpers.browser import chromium, serving  # noqa: E402

from evals.benchmarks.formats import import_corpus  # noqa: E402
from evals.model.provenance import Provenance  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402
from evals.site import build_site  # noqa: E402
from evals.store import Store  # noqa: E402


def _store(work: Path, corpus: Path | None, strategies: list[str]) -> Path:
    store = work / "results.duckdb"
    if store.exists():
        return store
    if corpus is None:
        generate(work / "locomo.json", conversations=10, sessions=24, turns=25, questions=199, seed=0)
        import_corpus("locomo", work / "locomo.json", work / "locomo")
        corpus = work / "locomo"
    provenance = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    with Store.open(store) as opened:
        for named in strategies:  # NAME or NAME:EMBEDDER
            strategy, _, embedder = named.partition(":")
            config = RunConfig(strategy=strategy, options={"embedder": embedder} if embedder else {}, corpus=corpus, k=5)
            opened.append(evaluate(config), provenance)
    return store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--corpus", type=Path, default=None, help="a corpus folder (default: a generated LoCoMo-shaped one)")
    parser.add_argument("--strategy", action="append", default=None, help="NAME or NAME:EMBEDDER (default: bm25, recency)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="compare-pages-"))
    work.mkdir(parents=True, exist_ok=True)
    store = _store(work, args.corpus, args.strategy or ["bm25", "recency"])
    site = work / "site"
    build_site(store, site)
    page = max((site / "compare").glob("*.html"), key=lambda p: p.read_text(encoding="utf-8").count('<section class="flip"'))
    relative = page.relative_to(site).as_posix()
    print(f"{relative}: {page.stat().st_size:,} bytes")
    with serving(site) as base, chromium() as browser:
        for width in (1280, 390):
            tab = browser.new_page(viewport={"width": width, "height": 900})
            tab.goto(base + relative)
            tab.wait_for_selector("#pair[data-drawn]")
            flips = tab.evaluate("() => document.querySelectorAll('section.flip').length")
            height = tab.evaluate("() => document.documentElement.scrollHeight")
            print(f"width {width}: {flips} flips, height {height:,} px")
            tab.close()
        tab = browser.new_page(viewport={"width": 390, "height": 900})
        tab.goto(base + relative)
        tab.wait_for_selector("#pair[data-drawn]")
        found = tab.evaluate("() => (document.querySelector('section.flip[data-category]') || {}).dataset?.category || null")
        tab.close()
        category = quote(found or "2")
        tab = browser.new_page(viewport={"width": 390, "height": 900})
        tab.goto(base + relative + f"#category={category}&flip=a")
        tab.wait_for_selector("#pair[data-drawn]")
        paint = tab.evaluate("() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
        shown = tab.evaluate("() => [...document.querySelectorAll('section.flip')].filter(s => !s.hidden).length")
        height = tab.evaluate("() => document.documentElement.scrollHeight")
        print(
            f"filtered view #category={category}&flip=a at 390 px: first contentful paint {paint:.0f} ms, "
            f"{shown} flips shown, height {height:,} px"
        )
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
