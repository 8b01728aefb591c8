"""A conversation with very many test points (LoCoMo has up to 260) spreads its drill-down over pages of
POINTS_PER_PAGE; every link to a test point (run page misses, the TOC, compare, the gate) finds its page."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.html import follow, parse

from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store
from evals.views.site_paths import POINTS_PER_PAGE

POINTS = 2 * POINTS_PER_PAGE + 30


def long_corpus(folder: Path) -> Path:
    """One conversation: a fact, then POINTS questions about it, each answered by a filler turn."""
    turns = [{"role": "user", "content": "My locker code is 4417."}]
    for number in range(POINTS):
        turns.append(
            {
                "role": "user",
                "content": f"Question {number}?",
                "test_at": {
                    "question": "What is my locker code?",
                    "expected_fact": "4417",
                    "expected_keywords": ["4417" if number % 3 else "9999"],
                },
            }
        )
        turns.append({"role": "assistant", "content": f"Noted {number}."})
    folder.mkdir()
    (folder / "long.json").write_text(
        json.dumps({"schema_version": "1", "id": "long", "description": "many test points", "turns": turns})
    )
    return folder


def test_a_long_conversation_is_split_into_pages_and_every_link_finds_its_point(tmp_path: Path):
    """Three pages of at most POINTS_PER_PAGE sections; each test point on exactly one; the run page's
    misses and every page's table of contents link to the page that holds the point."""
    corpus = long_corpus(tmp_path / "corpus")
    provenance = Provenance(commit="d" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")
    with Store.open(tmp_path / "results.duckdb") as store:
        run_id = store.append(evaluate(RunConfig(strategy="full_history", corpus=corpus, k=2)), provenance)
    build_site(tmp_path / "results.duckdb", tmp_path / "site")
    folder = tmp_path / "site" / "runs" / run_id
    pages = sorted(folder.glob("*.html"))
    assert [p.name for p in pages] == ["long.html", "long~2.html", "long~3.html"]
    sections = {p.name: [s.attrs["id"] for s in parse(p).find_all("section") if "data-verdict" in s.attrs] for p in pages}
    assert all(0 < len(ids) <= POINTS_PER_PAGE for ids in sections.values())
    every = [anchor for ids in sections.values() for anchor in ids]
    assert len(every) == len(set(every)) == POINTS
    run_page = tmp_path / "site" / "runs" / f"{run_id}.html"
    misses = [a for a in parse(run_page).find("h2", id="misses").parent.find_all("a") if "#tp-" in a.attrs.get("href", "")]
    assert len(misses) == len([n for n in range(POINTS) if n % 3 == 0])
    links = [(run_page, a.attrs["href"]) for a in misses]
    links += [(page, a.attrs["href"]) for page in pages for a in parse(page).find("ul", cls="toc").find_all("a")]
    assert len(links) == len(misses) * 4  # every page lists the conversation's misses
    for source, href in links:
        target, fragment = follow(source, href)
        assert fragment in sections[target.name], href
