"""The leaderboard's layout in Chromium: at 1280 px the default columns fit without sideways
scrolling and every other column is one toggle away, kept in the address; at 390 px the first screen shows
the leader and its figure; the intro is at most three lines.

The site is tests/site/test_site_pairs.py's: a LoCoMo-shaped corpus with memories at two k and two ceilings.
"""

from __future__ import annotations

import pytest

BOARD = "leaderboard-locomo.html"
DEFAULT = [
    "strategy", "model", "k", "recall_any@k", "recall_frac@k", "tokens / test point",
    "retrieve p50", "retrieve p95", "ingest CPU / 1k turns", "peak RSS (MB)", "hits / total", "commit", "date",
]  # fmt: skip

VISIBLE_HEADINGS = """() => [...document.querySelector('table.leaderboard').tHead.rows[0].cells]
    .filter(th => th.offsetParent !== null)
    .map(th => th.innerText.split('\\n')[0].replace(/[\\s↕]+$/, '').trim())"""


def _page(browser, width: int):
    phone = width < 700
    context = browser.new_context(viewport={"width": width, "height": 844 if phone else 900}, has_touch=phone, is_mobile=phone)
    return context.new_page()


@pytest.mark.browser
def test_at_1280_px_the_default_columns_fit(pair_served: str, browser):
    """At 1280 px the board shows the default columns and neither it nor the page scrolls sideways."""
    page = _page(browser, 1280)
    page.goto(pair_served + BOARD)
    assert page.evaluate(VISIBLE_HEADINGS) == DEFAULT
    wrap = page.evaluate(
        "() => { const w = document.querySelector('table.leaderboard').parentNode; return [w.scrollWidth, w.clientWidth]; }"
    )
    assert wrap[0] <= wrap[1] and page.evaluate("() => document.documentElement.scrollWidth") <= 1280


@pytest.mark.browser
def test_every_column_is_one_toggle_away_and_kept_in_the_address(pair_served: str, browser):
    """"Show every column" adds the configuration and the other metrics, the address keeps it, and a reload shows them again."""
    page = _page(browser, 1280)
    page.goto(pair_served + BOARD)
    page.locator("a.columns-toggle.more").click()
    shown = page.evaluate(VISIBLE_HEADINGS)
    assert "configuration" in shown and set(DEFAULT) < set(shown) and page.url.endswith("#all-columns")
    page.reload()
    assert page.evaluate(VISIBLE_HEADINGS) == shown
    page.locator("a.columns-toggle.less").click()
    assert page.evaluate(VISIBLE_HEADINGS) == DEFAULT


@pytest.mark.browser
def test_at_390_px_the_first_screen_shows_the_leader_and_its_figure(pair_served: str, browser):
    """On a phone, without scrolling, the first memory's name and its headline figure are on screen."""
    page = _page(browser, 390)
    page.goto(pair_served + BOARD)
    row = page.locator("table.leaderboard tbody.k-group tr:not(.group)").first
    for cell in ("td.strategy a", "td.headline"):
        box = row.locator(cell).first.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= 844, cell


LINES = """() => {
    const range = document.createRange();
    range.selectNodeContents(document.querySelector('p.lede'));
    return new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top))).size;
}"""


@pytest.mark.browser
def test_the_intro_is_at_most_three_lines_at_1280_px(pair_served: str, browser):
    """The opening paragraph takes at most three lines on a desktop; the rest is behind "how to read this"."""
    page = _page(browser, 1280)
    page.goto(pair_served + BOARD)
    assert page.evaluate(LINES) <= 3
    assert page.locator("details.how summary", has_text="how to read this").count() == 1
