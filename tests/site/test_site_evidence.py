"""The site on a corpus with categories, evidence turns and an unanswerable question (tests/fixtures/evidence_corpus).

recency k=2, as worked out in test_evidence.py: recall 2/3, evidence any 1/3,
all 0/3; 01_family's third question (turn 8) is unanswerable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.html import parse

from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

EVIDENCE = FIXTURES / "evidence_corpus"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A site built from one recency k=2 run over the evidence corpus; (site, run id)."""
    root = tmp_path_factory.mktemp("evidence_site")
    provenance = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")
    with Store.open(root / "results.duckdb") as store:
        run_id = store.append(evaluate(RunConfig(strategy="recency", corpus=EVIDENCE, k=2)), provenance)
    build_site(root / "results.duckdb", root / "site")
    return root / "site", run_id


def test_run_page_has_a_category_table(built):
    """The run page lists each category with the headline's hits/total (evidence any, answerable points),
    evidence any/all and unanswerable counts."""
    site, run_id = built
    page = parse(site / "runs" / f"{run_id}.html")
    heading = page.find("h2", id="categories")
    table = next(n for n in heading.parent.iter() if n.tag == "table")
    rows = [[td.text().strip() for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]
    assert [(r[0], r[1], r[4], r[5], r[6]) for r in rows] == [
        ("adversarial", "0 / 0", "—", "—", "1"),
        ("multi-hop", "1 / 1", "100.0%", "0.0%", "0"),
        ("single-hop", "0 / 1", "0.0%", "0.0%", "0"),
        ("(none)", "0 / 1", "0.0%", "0.0%", "0"),
    ]


def test_run_page_counts_answerable_misses_only(built):
    """Misses are the headline's (no evidence turn within k): two answerable ones; the unanswerable question is not one."""
    site, run_id = built
    page = parse(site / "runs" / f"{run_id}.html")
    assert page.find("h2", id="misses").text() == "Misses (2)"


def test_drilldown_badges_the_unanswerable_question(built):
    """The unanswerable test point carries its own badge, not hit or miss."""
    site, run_id = built
    section = parse(site / "runs" / run_id / "01_family.html").find("section", id="tp-8")
    assert section.find("span", cls="badge").text() == "unanswerable"


def test_drilldown_marks_evidence_turns_in_the_transcript(built):
    """Each evidence turn is tagged in the transcript with its test point."""
    site, run_id = built
    page = parse(site / "runs" / run_id / "01_family.html")
    tags = {
        turn: [a.text() for a in page.find("li", id=f"t-{turn}").find_all("a", cls="evi")] for turn in (0, 2, 4)
    }
    assert tags == {0: ["TP1 evidence"], 2: ["TP2 evidence"], 4: ["TP2 evidence"]}


def test_drilldown_says_which_evidence_turns_were_retrieved(built):
    """A test point lists its evidence turns and how many of them were retrieved."""
    site, run_id = built
    section = parse(site / "runs" / run_id / "01_family.html").find("section", id="tp-7")
    assert "1 of 2 within k" in section.find("dl", cls="facts").text()
