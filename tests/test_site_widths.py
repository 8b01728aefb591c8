"""Every page kind on a phone (390 px) and on a desktop (1280 px), in Chromium (issue 24, item 11).

The site is built from two corpora: the starter corpus (corpus/) with one run of each deterministic
strategy, and a LoCoMo-shaped one (tests/fixtures/importers/locomo_small.json, imported: sessions,
evidence, the paper's published figures), whose leaderboard has the most columns, with runs at two
commits (one of them dirty) so the history and compare pages have something to show. At each width:

* no page pans as a whole (``document.documentElement.scrollWidth <= innerWidth``): wide tables
  scroll inside their own wrapper;
* the leaderboard's headline figure and its interval are on screen without scrolling sideways, and at
  1280 px the LoCoMo board fits its box (its date column is not cut);
* the explanations (caveats, a ceiling's reason, +dirty) open with a tap, not a hover, and opening
  them does not make the page pan.

A full-page screenshot of each page at each width is saved under the test's tmp dir.
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from test_site import _QuietHandler, chromium

from evals.evaluate import RunConfig, evaluate
from evals.importers import import_corpus
from evals.provenance import Provenance
from evals.site import build_site
from evals.store import Store

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT / "tests" / "fixtures" / "importers" / "locomo_small.json"
STARTER = ("full_history", "summary_buffer", "bm25", "mneme", "random_k", "recency", "no_memory")
ON_LOCOMO = ("bm25", "mneme", "recency", "full_history", "summary_buffer")
WIDTHS = (390, 1280)


def _provenance(commit: str, dirty: bool = False) -> Provenance:
    return Provenance(commit=commit, dirty=dirty, package_version="0", mneme_version="0", python_version="3")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(site, name -> path of one page of each kind, relative to the site)."""
    root = tmp_path_factory.mktemp("widths")
    locomo = root / "locomo"
    import_corpus("locomo", LOCOMO, locomo)
    runs: dict[str, str] = {}
    with Store.open(root / "results.duckdb") as store:
        for strategy in ON_LOCOMO:  # an older commit first, so history and compare have two
            store.append(evaluate(RunConfig(strategy=strategy, corpus=locomo, k=2)), _provenance("a" * 40))
        for strategy in ON_LOCOMO:
            runs[f"locomo-{strategy}"] = store.append(evaluate(RunConfig(strategy=strategy, corpus=locomo, k=2)), _provenance("b" * 40, dirty=True))
        for strategy in STARTER:
            runs[strategy] = store.append(evaluate(RunConfig(strategy=strategy, corpus=ROOT / "corpus")), _provenance("c" * 40))
    site = root / "site"
    build_site(root / "results.duckdb", site)
    bm25 = runs["locomo-bm25"]
    pages = {
        "index": "index.html",
        "run-starter-bm25": f"runs/{runs['bm25']}.html",
        "run-locomo-mneme": f"runs/{runs['locomo-mneme']}.html",
        "run-locomo-full_history": f"runs/{runs['locomo-full_history']}.html",
        "drilldown-starter": f"runs/{runs['bm25']}/009_data_pipeline_long_120.html",
        "drilldown-locomo": f"runs/{bm25}/" + sorted(p.name for p in (site / "runs" / bm25).glob("*.html"))[0],
        "history-index": "history/index.html",
        "history-mneme": "history/" + next(p.name for p in (site / "history").glob("mneme-*.html") if "locomo" not in p.name),
        "compare": "compare.html",
        "about": "about.html",
        "transcript": next(str(p.relative_to(site)) for p in sorted((site / "transcripts").rglob("*.html"))),
    }
    return site, pages


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def served(built: tuple[Path, dict[str, str]]):
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(built[0])))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _page(browser, width: int):
    """A page in a context of ``width`` px; a phone (touch, mobile viewport) at 390."""
    phone = width < 700
    context = browser.new_context(viewport={"width": width, "height": 844 if phone else 900}, has_touch=phone, is_mobile=phone)
    return context.new_page()


PANS = "() => ({scroll: document.documentElement.scrollWidth, inner: innerWidth})"


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "kind",
    ["index", "run-starter-bm25", "run-locomo-mneme", "run-locomo-full_history", "drilldown-starter", "drilldown-locomo",
     "history-index", "history-mneme", "compare", "about", "transcript"],
)  # fmt: skip
def test_no_page_pans_as_a_whole(served: str, built, browser, tmp_path: Path, kind: str, width: int):
    """The page is no wider than the window, as it loads and with every <details> opened (wide tables scroll in their wrapper)."""
    page = _page(browser, width)
    page.goto(served + built[1][kind])
    closed = page.evaluate(PANS)
    page.screenshot(path=str(tmp_path / f"{kind}-{width}.png"), full_page=True)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    opened = page.evaluate(PANS)
    page.screenshot(path=str(tmp_path / f"{kind}-{width}-open.png"), full_page=True)
    assert closed["scroll"] <= closed["inner"] == width, (kind, closed)
    assert opened["scroll"] <= opened["inner"], (kind, "details opened", opened)


HEADLINE = """() => [...document.querySelectorAll('table.leaderboard')].map(table => {
    const cell = table.querySelector('tbody tr td.headline');
    const box = cell.getBoundingClientRect();
    const ci = cell.querySelector('.ci').getBoundingClientRect();
    return {left: box.left, right: box.right, top: box.top, ciRight: ci.right, ciLeft: ci.left, text: cell.innerText, inner: innerWidth};
})"""


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_headline_and_interval_are_on_screen(served: str, browser, tmp_path: Path, width: int):
    """On each board, the first row's headline figure and its interval lie inside the window, with no sideways scroll."""
    page = _page(browser, width)
    page.goto(served + "index.html")
    page.screenshot(path=str(tmp_path / f"leaderboard-{width}.png"), full_page=True)
    cells = page.evaluate(HEADLINE)
    assert len(cells) == 2
    for cell in cells:
        assert 0 <= cell["left"] and cell["right"] <= width and 0 <= cell["ciLeft"] and cell["ciRight"] <= width, cell
        assert "%" in cell["text"] and "[" in cell["text"], cell
    assert page.evaluate("() => window.scrollX") == 0


@pytest.mark.browser
def test_the_locomo_board_fits_its_box_at_1280_px(served: str, browser, tmp_path: Path):
    """At 1280 px every board (LoCoMo's, with the most columns, and a dirty commit) fits its wrapper: the date column is not cut."""
    page = _page(browser, 1280)
    page.goto(served + "index.html")
    boards = page.evaluate(
        """() => [...document.querySelectorAll('table.leaderboard')].map(table => {
        const wrap = table.parentNode.getBoundingClientRect();
        const heads = [...table.tHead.rows[0].cells];
        const dates = [...table.querySelectorAll('tbody td:last-child')].map(td => td.getBoundingClientRect().right);
        return {scrolls: table.parentNode.scrollWidth > table.parentNode.clientWidth, right: wrap.right,
                last: heads[heads.length - 1].textContent.trim(), dates: dates, dirty: table.querySelectorAll('abbr.dirty').length,
                clipped: heads.filter(th => th.scrollWidth > th.clientWidth).map(th => th.textContent.trim())};
    })"""
    )
    page.locator("section.corpus").first.screenshot(path=str(tmp_path / "locomo-board-1280.png"))
    assert any(b["dirty"] for b in boards)  # the LoCoMo board, made at a dirty commit
    for board in boards:
        assert not board["scrolls"] and board["clipped"] == [], board
        assert board["last"].rstrip(" ↕") == "date" and max(board["dates"]) <= board["right"], board


@pytest.mark.browser
def test_a_phone_shows_the_leaderboard_as_cards(served: str, browser, tmp_path: Path):
    """At 390 px each row is a card: the strategy and its headline figure side by side on its first line, every other value labelled."""
    page = _page(browser, 390)
    page.goto(served + "index.html")
    card = page.locator("table.leaderboard tbody tr").first
    card.screenshot(path=str(tmp_path / "card-390.png"))
    strategy = card.locator("td.strategy").bounding_box()
    headline = card.locator("td.headline").bounding_box()
    assert headline["y"] < strategy["y"] + strategy["height"] and strategy["y"] < headline["y"] + headline["height"]  # one line
    assert headline["x"] > strategy["x"] + strategy["width"] - 1
    assert page.evaluate("() => getComputedStyle(document.querySelector('table.leaderboard tbody td.model'), '::before').content") == '"model"'


@pytest.mark.browser
@pytest.mark.parametrize("kind", ["index", "run-locomo-mneme", "history-mneme", "compare"])
def test_the_hash_embedder_caveat_opens_with_a_tap(served: str, built, browser, tmp_path: Path, kind: str):
    """On a phone, tapping the "hash embedder: no semantics" badge shows why, on screen, and the page still does not pan."""
    page = _page(browser, 390)
    page.goto(served + built[1][kind])
    badge = page.locator("details.caveat.hash_embedder").first
    text = badge.locator(".tip-text")
    assert badge.locator("summary").inner_text().startswith("hash embedder: no semantics")
    assert not text.is_visible()
    badge.locator("summary").tap()
    assert text.is_visible() and "HashEmbedder" in text.inner_text()
    box = text.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.screenshot(path=str(tmp_path / f"hash-tapped-{kind}.png"), full_page=True)
    assert page.evaluate(PANS)["scroll"] <= 390


@pytest.mark.browser
def test_ceiling_and_dirty_explanations_open_with_a_tap(served: str, browser, tmp_path: Path):
    """The ceiling badge opens its reason on a tap; "+dirty" (an abbreviation whose title was hover-only) shows its title on a tap."""
    page = _page(browser, 390)
    page.goto(served + "index.html")
    ceiling = page.locator("details.caveat.ceiling").first
    ceiling.locator("summary").tap()
    assert "ignoring k" in ceiling.locator(".tip-text").inner_text()
    dirty = page.locator("abbr.dirty").first
    url = page.url
    dirty.tap()
    assert page.url == url  # a tap on +dirty inside the commit's link explains it rather than following the link
    assert page.locator(".abbr-text").first.inner_text() == dirty.get_attribute("title")
    dirty.tap()
    assert page.locator(".abbr-text").count() == 0
    page.screenshot(path=str(tmp_path / "tapped-390.png"), full_page=True)
