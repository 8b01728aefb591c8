"""No page and no published JSON carries an absolute path of the machine that ran it: a corpus is shown by its
name and digest, never by ``corpus_dir`` (the folder the user named). The original harness's document
(`python -m evals --output`) keeps ``corpus_dir`` verbatim: that is its contract, tested in tests/cli/test_cli_legacy.py."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES

from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store
from evals.views.tables import summaries_csv, summaries_json

PROVENANCE = Provenance(commit="d" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, Path]:
    """(store, corpus): one run of full_history on a copy of corpus_small under this test's own folder."""
    corpus = tmp_path / "machine-path-corpus"
    shutil.copytree(FIXTURES / "corpus_small", corpus)
    store = tmp_path / "results.duckdb"
    with Store.open(store) as opened:
        opened.append(evaluate(RunConfig(strategy="full_history", corpus=corpus, k=2)), PROVENANCE)
    return store, corpus


@pytest.mark.slow  # a real run into a store: seconds
def test_the_leaderboard_json_and_csv_name_the_corpus_not_its_folder(stored):
    store, corpus = stored
    with Store.open(store, read_only=True) as opened:
        summaries = opened.latest_per_configuration()
    assert summaries[0].corpus_dir == str(corpus)  # the store keeps it
    rows = json.loads(summaries_json(summaries))
    assert "corpus_dir" not in rows[0] and rows[0]["corpus_name"] and rows[0]["corpus_digest"]
    assert str(corpus) not in summaries_csv(summaries)


@pytest.mark.slow
def test_no_file_of_a_built_site_holds_the_corpus_or_store_path(stored, tmp_path: Path):
    """Every file of the site (gzipped JSON opened) is free of the corpus's and the store's absolute paths,
    but the store copy (data/results.duckdb): the store itself, which keeps corpus_dir for its own commands."""
    store, corpus = stored
    site = tmp_path / "site"
    build_site(store, site)
    needles = [str(corpus).encode(), str(store.parent).encode()]
    checked = 0
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        if path.relative_to(site).as_posix() == "data/results.duckdb":
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        for needle in needles:
            assert needle not in data, f"{path.relative_to(site)} holds {needle.decode()}"
        checked += 1
    assert checked > 10
