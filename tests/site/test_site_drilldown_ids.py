"""Drill-downs name turns as the benchmark does: every record and evidence turn with LoCoMo's
dia_id and its session date, every evidence turn the records missed listed, "not in the top N kept" for an
evidence turn the run never ranked, and the session list once, folded.

The site is built from a LoCoMo-shaped file (bench/gen_locomo.py) with bm25 and recency at k=2.
"""

from __future__ import annotations

import json
import re
import sys

import pytest
from helpers import ROOT
from helpers.html import parse, record_text

from evals.benchmarks.formats import import_corpus
from evals.benchmarks.turn_ids import TurnIds
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

sys.path.insert(0, str(ROOT / "bench"))
from gen_locomo import generate  # noqa: E402

DIA = re.compile(r"\((D\d+:\d+), (\d{1,2}:\d\d [ap]m on \d{1,2} \w+, \d{4})\)")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("ids")
    generate(root / "locomo.json", conversations=2, sessions=3, turns=8, questions=15)
    import_corpus("locomo", root / "locomo.json", root / "locomo")
    provenance = Provenance(commit="b" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    runs = {}
    with Store.open(root / "results.duckdb") as store:
        for strategy in ("bm25", "recency"):
            runs[strategy] = store.append(evaluate(RunConfig(strategy=strategy, corpus=root / "locomo", k=2)), provenance)
    build_site(root / "results.duckdb", root / "site")
    source = json.loads((root / "locomo.json").read_text())
    texts = {
        turn["dia_id"]: (f"{turn['speaker']}: {turn['text']}", sample["conversation"][f"{key}_date_time"])
        for sample in source[:1]
        for key, value in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", key)
        for turn in value
    }
    return {"site": root / "site", "runs": runs, "texts": texts}


def _page(built: dict, strategy: str = "bm25"):
    return parse(built["site"] / "runs" / built["runs"][strategy] / "000_conv-1.html")


def test_every_record_names_its_dia_id_and_date(built: dict):
    """Each retrieved record that is a turn carries the dia_id and session date the LoCoMo file gives its text."""
    path = built["site"] / "runs" / built["runs"]["bm25"] / "000_conv-1.html"
    records = [li for ol in _page(built).find_all("ol", "records") for li in ol.find_all("li")]
    assert records
    for li in records:
        found = DIA.search(li.text())
        assert found, li.text()
        text, date = built["texts"][found.group(1)]
        assert found.group(2) == date
        assert record_text(path, li.find("div", "txt")).strip()[:40] == text[:40]


def test_every_evidence_turn_is_named_in_the_facts(built: dict):
    """The facts of each test point name each evidence turn with its dia_id and date."""
    page = _page(built)
    for section in page.find_all("section", "point"):
        facts = section.find("dl", "facts").text()
        assert DIA.search(facts), facts


def test_every_missed_evidence_turn_is_quoted(built: dict):
    """A miss lists every evidence turn its records did not show: no "… and N more"."""
    page = _page(built, "recency")
    assert "more evidence turns" not in page.text()
    for section in page.find_all("section", "point"):
        if section.attrs.get("data-verdict") != "miss":
            continue
        facts = section.find("dl", "facts").text()
        missed = re.search(r"not within k: (.*)", facts)
        listed = [ul for ul in section.find_all("ul", "evidence")]
        if missed:
            assert len(listed[0].find_all("li")) == len(re.findall(r"turn \d+", missed.group(1)))


def test_no_page_says_never_ranked(built: dict):
    """An evidence turn outside the ranks a run kept is "not in the top N kept", never "never ranked"."""
    for run_id in built["runs"].values():
        for page in (built["site"] / "runs" / run_id).glob("*.html"):
            assert "never ranked" not in page.read_text(encoding="utf-8")


def test_the_session_list_is_folded_once(built: dict):
    """The sessions and their dates are in one folded block, not in the opening line."""
    page = _page(built)
    assert "session 2:" not in page.find("p", "lede").text()
    (folded,) = page.find_all("details", "sessions")
    assert "session 2:" in folded.text()


def test_turn_ids_follow_the_session_keys():
    """session_N keys give LoCoMo's D<N>:<i>; other session ids give the id and the turn's place; none give "turn N"."""
    ids = TurnIds(["session_1", "session_1", "session_2", "abc", "abc", None], ["d1", "d1", "d2", "x", "x", None])
    assert [ids.label(t) for t in range(6)] == ["D1:1", "D1:2", "D2:1", "abc #1", "abc #2", "turn 5"]
    assert ids.date(2) == "d2" and ids.date(5) == ""
