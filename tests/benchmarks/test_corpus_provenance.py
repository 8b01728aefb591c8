"""Provenance is never claimed without its bytes: a corpus is shown under a pinned release's name and pin only when
the file it was imported from matched that pin; otherwise it is "imported by hand from FILE", and published
figures beside it carry a warning."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.cli import evals, evals_output

from evals.benchmarks import BENCHMARKS

LOCOMO = FIXTURES / "importers" / "locomo_small.json"


def _import(tmp_path: Path) -> Path:
    out = tmp_path / "corpora" / "locomo"  # named as `evals fetch locomo` names its folder
    evals_output("import-corpus", "locomo", LOCOMO, "--out", out)
    return out


@pytest.fixture
def hand_store(tmp_path: Path) -> Path:
    """A store with one bm25 run on a LoCoMo-shaped file imported by hand into a folder named locomo."""
    store = tmp_path / "s.duckdb"
    evals_output("run", "--runner", "bm25", "--corpus", _import(tmp_path), "--store", store, "--repo", tmp_path)
    return store


def test_a_hand_import_matching_no_pin_records_its_file(tmp_path: Path):
    """benchmark.json of a file whose bytes match no pinned release names the file, and no release."""
    declared = json.loads((_import(tmp_path) / "benchmark.json").read_text())
    assert declared == {"name": "locomo", "imported_from": "locomo_small.json"}


def test_a_hand_import_of_the_pinned_bytes_records_the_release(tmp_path: Path, monkeypatch):
    """A file imported by hand whose bytes match a release's published SHA-256 is that release."""
    body = LOCOMO.read_bytes()
    entry = BENCHMARKS["locomo"]
    pinned = replace(entry, data=replace(entry.data, sha256=hashlib.sha256(body).hexdigest(), size=len(body)))
    monkeypatch.setitem(BENCHMARKS, "locomo", pinned)
    declared = json.loads((_import(tmp_path) / "benchmark.json").read_text())
    assert declared == {"name": "locomo", "release": "locomo"}


def test_the_leaderboards_claims_beside_a_hand_import_carry_a_warning(hand_store: Path):
    """`evals leaderboard` prints a warning before the published claims on a corpus imported by hand."""
    text = evals_output("leaderboard", "--store", hand_store)
    claims = text.split("Published claims on locomo", 1)[1]
    assert claims.splitlines()[1].strip().startswith("warning: published on a locomo release; this corpus, imported by hand")


@pytest.mark.slow
def test_a_hand_import_is_shown_without_the_releases_name_or_pin(hand_store: Path, tmp_path: Path):
    """The site's benchmark page of a hand import says "Imported by hand from FILE", and shows no pin."""
    result = evals("build-site", "--store", hand_store, "--out", tmp_path / "site")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "site" / "leaderboard-locomo.html").read_text()
    assert "Imported by hand from locomo_small.json" in page
    assert "pinned:" not in page and BENCHMARKS["locomo"].title not in page
