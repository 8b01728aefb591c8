"""A drill-down's records that are turns carry no text: a turn's text is written once per corpus, in its
transcript, and each record's first link names its turn there; site.js fills the text in (``data-fill``) from that
page. Without JavaScript the record keeps its turn's link, its benchmark id and its token count."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.html import parse

from evals.model.corpus import load_corpus
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

CORPUS = FIXTURES / "sessions_corpus"
PROVENANCE = Provenance(commit="d" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("shared")
    with Store.open(folder / "results.duckdb") as opened:
        run_id = opened.append(evaluate(RunConfig(strategy="bm25", corpus=CORPUS, k=3)), PROVENANCE)
    build_site(folder / "results.duckdb", folder / "site")
    return folder / "site", run_id


def _turns() -> list[str]:
    return [turn.content for turn in load_corpus(CORPUS).conversations[0].turns]


@pytest.mark.slow
def test_records_name_their_turn_in_the_transcript_and_hold_no_text(site):
    root, run_id = site
    page = next((root / "runs" / run_id).glob("*.html"))
    slots = [node for node in parse(page).find_all("div", cls="txt") if "data-fill" in node.attrs]
    assert slots, "no record names its turn"
    turns = _turns()
    for slot in slots:
        assert slot.text() == ""
        href = slot.parent.find("a").attrs["href"]  # the record's <li>: its first link is the turn's
        target, anchor = (page.parent / href.split("#")[0]).resolve(), href.split("#")[1]
        line = parse(target).find("li", id=anchor)
        assert line.find("span", cls="txt").text() == turns[int(anchor.removeprefix("t-"))]


@pytest.mark.browser
def test_the_records_text_is_filled_in_from_the_transcript(site, serve, browser):
    root, run_id = site
    base = serve(root)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    name = next((root / "runs" / run_id).glob("*.html")).name
    page.goto(f"{base}runs/{run_id}/{name}")
    page.wait_for_function("() => [...document.querySelectorAll('[data-fill]')].every(e => e.textContent !== '')")
    texts = page.eval_on_selector_all("[data-fill]", "slots => slots.map(s => s.textContent)")
    assert texts and set(texts) <= set(_turns())
    # Each record site.js drew reads as tests/helpers/html.py's draw_records has it (every other test reads that).
    drawn = page.eval_on_selector_all(
        "ol.records li",
        "items => items.map(li => [li.querySelector('a').getAttribute('href'), li.textContent.replace(/\\s+/g, ' ').trim()])",
    )
    path = root / "runs" / run_id / name
    expected = [
        [li.find("a").attrs["href"], " ".join(li.text().split())]
        for ol in parse(path).find_all("ol", cls="records")
        for li in ol.find_all("li")
    ]
    assert len(drawn) == len(expected) and drawn and all(  # the browser's text ends with the turn filled in
        got[0] == want[0] and got[1].startswith(want[1]) for got, want in zip(drawn, expected, strict=True)
    ), (drawn[:3], expected[:3])
    assert not page.eval_on_selector_all("ol.records li[data-t]", "items => items.length")
    touched = page.eval_on_selector_all("ol.transcript > li a.more", "links => links.map(a => a.getAttribute('href'))")
    lines = [a.attrs["href"] for ol in parse(path).find_all("ol", cls="transcript") for a in ol.find_all("a", cls="more")]
    assert touched and touched == lines
    assert not errors
    page.close()
