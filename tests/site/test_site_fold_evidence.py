"""A drill-down folds a long evidence turn the records missed, as it folds a long retrieved record (a
BEAM page once printed its missed evidence in full, 39,807 px tall)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.html import parse

from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

LONG = "The deployment notes go on. " * 40  # over 600 characters, as BEAM's messages often are


def test_a_long_missed_evidence_turn_is_folded(tmp_path: Path):
    """no_memory misses both evidence turns: the long one is in a closed <details>, the short one is not."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    asked = {"question": "server name?", "expected_fact": "ferrum", "expected_keywords": ["ferrum"], "evidence_turns": [0, 1]}
    turns = [
        {"role": "user", "content": "My server is called ferrum. " + LONG},
        {"role": "assistant", "content": "Noted: ferrum."},
        {"role": "user", "content": "What is my server called?", "test_at": asked},
    ]
    (corpus / "001_fold.json").write_text(json.dumps({"id": "001_fold", "description": "one long turn", "turns": turns}))
    provenance = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    with Store.open(tmp_path / "s.duckdb") as store:
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus)), provenance)
    build_site(tmp_path / "s.duckdb", tmp_path / "site")
    (page,) = [p for p in (tmp_path / "site" / "runs").rglob("*.html") if "001_fold" in p.name or "001_fold" in str(p.parent)]
    items = parse(page).find("ul", "evidence").find_all("li")
    folded = [bool(li.find_all("details")) for li in items]
    assert folded == [True, False]
    assert "open" not in items[0].find("details").attrs
