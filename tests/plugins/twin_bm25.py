"""A test-only strategy that retrieves exactly as bm25 does under another name and an option that changes
nothing it returns (``label``): the pair tests/analysis/test_same_ranking.py expects to be called one ranking.
Referenced as ``twin_bm25:SPEC`` with tests/plugins on the path."""

from __future__ import annotations

from evals.strategies import spec_from_factory
from evals.strategies.bm25 import BM25


class TwinBM25(BM25):
    name = "bm25_twin"


def make(label: str = "twin") -> TwinBM25:
    """bm25 under another name; ``label`` is recorded with the run and changes nothing it retrieves."""
    return TwinBM25()


SPEC = spec_from_factory("bm25_twin", make)
