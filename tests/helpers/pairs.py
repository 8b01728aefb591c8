"""A LoCoMo-shaped store with two memories side by side, and its site (the compare pages' tests)."""

from __future__ import annotations

import sys
from pathlib import Path

from evals.benchmarks.formats import import_corpus
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

from . import ROOT


def _generate(path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from gen_locomo import generate

    generate(path, conversations=2, sessions=3, turns=8, questions=15)


def _provenance(commit: str) -> Provenance:
    return Provenance(commit=commit, dirty=False, package_version="0", mneme_version="0", python_version="3")


def build_pair_site(root: Path) -> dict:
    """bm25 and recency at k=2, bm25 at k=3 and at an older commit, and the two ceilings (oracle, full_history) on a
    LoCoMo-shaped corpus (bench/gen_locomo.py); returns the site, the store and the run ids by name."""
    _generate(root / "locomo.json")
    corpus = root / "locomo"
    import_corpus("locomo", root / "locomo.json", corpus)
    runs: dict[str, str] = {}
    with Store.open(root / "results.duckdb") as store:
        runs["bm25-old"] = store.append(evaluate(RunConfig(strategy="bm25", corpus=corpus, k=2)), _provenance("a" * 40))
        for name, strategy, k in (("bm25", "bm25", 2), ("recency", "recency", 2), ("bm25-k3", "bm25", 3), ("oracle", "oracle", 2),
                                  ("full_history", "full_history", 2)):  # fmt: skip
            runs[name] = store.append(evaluate(RunConfig(strategy=strategy, corpus=corpus, k=k)), _provenance("b" * 40))
    build_site(root / "results.duckdb", root / "site")
    return {"site": root / "site", "store": root / "results.duckdb", "runs": runs}
