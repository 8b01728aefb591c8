"""The site's leaderboard beside its ranked runs: a failed run as a row saying why (no figure, no rank), the spread
of a configuration's repeated runs, each run's declared facts as small marks, and two checkboxes (site.js) that hide
the rows declaring them; without the script every row shows.

The store: recency run twice, recency k=5 declaring it was tuned on LoCoMo and writes with an LLM (as a plug-in's
spec declares them), and a failed run of bm25, on the starter corpus."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import ROOT
from helpers.html import parse

from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import FailedRun, Store

pytestmark = pytest.mark.slow
REASON = "strategy bm25: retrieve(question, k=50) raised KeyError: 'x', at conversation 'c1', turn 3"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("declared")
    provenance = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    with Store.open(root / "results.duckdb") as store:
        for _ in range(2):
            store.append(
                evaluate(RunConfig(strategy="recency", corpus=ROOT / "corpus")), provenance, tuned_on=[], writes_with_llm=False
            )
        declared = evaluate(RunConfig(strategy="recency", corpus=ROOT / "corpus", k=3))
        store.append(declared, provenance, tuned_on=["locomo"], writes_with_llm=True)
        summary = store.runs()[0]
        store.write_failed(
            [
                FailedRun(
                    run_id="0123456789ab", commit="c" * 40, dirty=False, model="none", date="2026-01-02",
                    timestamp=datetime(2026, 1, 2, tzinfo=UTC), strategy="bm25", strategy_config={"name": "bm25"},
                    config_key="bm25-k5-x", k=5, seed=42, corpus_name=summary.corpus_name,
                    corpus_digest=summary.corpus_digest, package_version="0", python_version="3", duration_s=0.5,
                    reason=REASON, tuned_on=[], writes_with_llm=False,
                )
            ]
        )  # fmt: skip
    build_site(root / "results.duckdb", root / "site")
    return root / "site"


def rows(site: Path) -> list:
    return [tr for tr in parse(site / "index.html").find_all("tr") if tr.find_all("td")]


def test_a_failed_run_is_a_row_saying_why_with_no_figure(site):
    """The failed run is a row of its own body, its reason under its name, "failed" in the headline's column and a
    dash in every other figure's; it has no rank."""
    (row,) = [tr for tr in rows(site) if "failed" in tr.classes]
    cells = row.find_all("td")
    assert cells[0].text().startswith("bm25") and f"failed: {REASON}" in cells[0].text()
    assert row.find("td", "headline").text() == "failed"
    assert not row.find_all("a", "ranked")
    figures = [td.text() for td in cells[4:-2] if "headline" not in td.classes]
    assert figures and set(figures) == {"—"}


def test_repeated_runs_show_their_spread_under_the_name(site):
    """recency at k=5, run twice, says "2 runs: 25.0%–25.0%" (its headline as the board writes it) under its name."""
    spreads = [tr.find("small", "spread").text() for tr in rows(site) if tr.find_all("small", "spread")]
    assert len(spreads) == 1 and spreads[0].startswith("2 runs: ") and "%–" in spreads[0]


def test_declared_facts_are_marks_with_their_explanation_and_row_attributes(site):
    """The declaring run carries two marks whose title says what each means, and data-tuned and data-llm for the
    filter; no other row does. No row is hidden in the page itself."""
    every = rows(site)
    declared = [tr for tr in every if "data-tuned" in tr.attrs]
    assert len(declared) == 1 and [tr for tr in every if "data-llm" in tr.attrs] == declared
    marks = {abbr.text(): abbr.attrs["title"] for abbr in declared[0].find_all("abbr", "declared")}
    assert set(marks) == {"tuned", "LLM writes"} and "locomo" in marks["tuned"]
    assert not [tr for tr in every if "hidden" in tr.attrs]


def test_the_downloads_carry_failures_spreads_and_declared_facts(site):
    """leaderboard.json: the failed row with "failed" and null figures, recency's spread, the declared facts."""
    records = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    (failed,) = [r for r in records if r["failed"] is not None]
    assert failed["failed"] == f"failed: {REASON}" and failed["rank"] is None and failed["hits"] is None
    by_k = {(r["strategy"], r["k"]): r for r in records if r["failed"] is None}
    assert by_k["recency", 5]["spread"].startswith("2 runs: ")
    assert (by_k["recency", 3]["tuned_on"], by_k["recency", 3]["writes_with_llm"]) == (["locomo"], True)
    assert "failed" in (site / "leaderboard.csv").read_text(encoding="utf-8").splitlines()[0].split(",")


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_the_checkboxes_hide_the_declaring_rows_and_show_them_again(site, serve, browser, width):
    """With the script, two checkboxes: ticking "hide memories that write with an LLM" hides the declaring row,
    unticking shows it; the other rows stay."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(serve(site) + "index.html")
    declared, others = page.locator("tr[data-llm]"), page.locator("table.leaderboard tbody tr:not([data-llm]):not(.group)")
    assert page.locator("label.declared-filter").count() == 2 and declared.count() == 1
    assert declared.first.is_visible()
    page.locator("label.declared-filter.llm input").check()
    assert not declared.first.is_visible() and others.first.is_visible()
    page.locator("label.declared-filter.llm input").uncheck()
    assert declared.first.is_visible()
    page.locator("label.declared-filter.tuned input").check()
    assert not declared.first.is_visible()
    page.close()
