"""LongMemEval_m is importable by name: `evals fetch longmemeval_m_cleaned` downloads it (trust on first use) and
imports it as it imports _s, one question at a time."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from click.testing import CliRunner
from helpers import FIXTURES

from evals.benchmarks import BENCHMARKS
from evals.cli import cli
from evals.model.corpus import load_corpus

LONGMEMEVAL = (FIXTURES / "importers" / "longmemeval_small.json").read_bytes()
STAND_IN = b"# stand-in\n"


def test_longmemeval_m_is_fetched_and_imported_by_name(monkeypatch, tmp_path):
    """A stand-in longmemeval_m_cleaned.json in a local mirror: fetched, locked on first use, imported."""
    mirror = tmp_path / "mirror"
    entry = BENCHMARKS["longmemeval_m_cleaned"]
    for source in entry.sources:
        (mirror / source.relative).parent.mkdir(parents=True, exist_ok=True)
        (mirror / source.relative).write_bytes(STAND_IN)
    sources = tuple(replace(s, sha256=hashlib.sha256(STAND_IN).hexdigest()) for s in entry.sources)
    monkeypatch.setitem(BENCHMARKS, "longmemeval_m_cleaned", replace(entry, sources=sources))
    (mirror / "longmemeval_m_cleaned.json").write_bytes(LONGMEMEVAL)
    (tmp_path / "repo").mkdir()
    env = {"EVALS_MIRROR": str(mirror), "EVALS_DOWNLOADS": str(tmp_path / "dl")}
    env["EVALS_BENCHMARKS_LOCK"] = str(tmp_path / "repo" / "lock")
    result = CliRunner().invoke(cli, ["fetch", "longmemeval_m_cleaned"], env=env)
    assert result.exit_code == 0, result.output
    corpus = load_corpus(tmp_path / "dl" / "corpora" / "longmemeval_m_cleaned")
    assert corpus.benchmark == "longmemeval" and len(corpus.conversations) == 3
