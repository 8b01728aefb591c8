"""Every page kind on a phone (390 px) and on a desktop (1280 px), in Chromium.

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

from pathlib import Path

import pytest
from helpers import ROOT
from helpers.html import parse
from helpers.stores import provenance

from evals.benchmarks.formats import import_corpus
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

LOCOMO = ROOT / "tests" / "fixtures" / "importers" / "locomo_small.json"
STARTER = ("full_history", "summary_buffer", "bm25", "mneme", "random_k", "recency", "no_memory")
ON_LOCOMO = ("bm25", "mneme", "recency", "full_history", "summary_buffer")
WIDTHS = (390, 1280)
BOARDS = ("leaderboard-corpus.html", "leaderboard-locomo.html")  # the two benchmarks' leaderboards


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(site, name -> path of one page of each kind, relative to the site)."""
    root = tmp_path_factory.mktemp("widths")
    locomo = root / "locomo"
    import_corpus("locomo", LOCOMO, locomo)
    runs: dict[str, str] = {}
    with Store.open(root / "results.duckdb") as store:
        for strategy in ON_LOCOMO:  # an older commit first, so history and compare have two
            store.append(evaluate(RunConfig(strategy=strategy, corpus=locomo, k=2)), provenance("a" * 40))
        for strategy in ON_LOCOMO:
            runs[f"locomo-{strategy}"] = store.append(
                evaluate(RunConfig(strategy=strategy, corpus=locomo, k=2)), provenance("b" * 40, dirty=True)
            )
        for strategy in STARTER:
            runs[strategy] = store.append(evaluate(RunConfig(strategy=strategy, corpus=ROOT / "corpus")), provenance("c" * 40))
    site = root / "site"
    build_site(root / "results.duckdb", site)
    bm25 = runs["locomo-bm25"]
    pages = {
        "index": "index.html",  # the front page, listing the two benchmarks
        "board-starter": "leaderboard-corpus.html",  # each benchmark's own leaderboard
        "board-locomo": "leaderboard-locomo.html",
        "suspects-locomo": "suspects-locomo.html",
        "run-starter-bm25": f"runs/{runs['bm25']}.html",
        "run-locomo-bm25": f"runs/{bm25}.html",
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
def served(serve, built: tuple[Path, dict[str, str]]) -> str:
    """The built site's base URL over HTTP on 127.0.0.1."""
    return serve(built[0])


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
    ["index", "board-starter", "board-locomo", "suspects-locomo", "run-starter-bm25", "run-locomo-mneme",
     "run-locomo-full_history", "drilldown-starter", "drilldown-locomo",
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
    return {left: box.left, right: box.right, top: box.top,
            ciRight: ci.right, ciLeft: ci.left, text: cell.innerText, inner: innerWidth};
})"""


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_headline_and_interval_are_on_screen(served: str, browser, tmp_path: Path, width: int):
    """On each board, the first row's headline figure and its interval lie inside the window, with no sideways scroll."""
    page = _page(browser, width)
    cells = []
    for board in BOARDS:
        page.goto(served + board)
        page.screenshot(path=str(tmp_path / f"{board}-{width}.png"), full_page=True)
        cells += page.evaluate(HEADLINE)
        assert page.evaluate("() => window.scrollX") == 0
    assert len(cells) == 2
    for cell in cells:
        assert 0 <= cell["left"] and cell["right"] <= width and 0 <= cell["ciLeft"] and cell["ciRight"] <= width, cell
        assert "%" in cell["text"] and "[" in cell["text"], cell


@pytest.mark.browser
def test_the_locomo_board_fits_its_box_at_1280_px(served: str, browser, tmp_path: Path):
    """At 1280 px every board (LoCoMo's has the most columns and a dirty commit) fits its wrapper: the date column is not cut."""
    page = _page(browser, 1280)
    boards = []
    for board in BOARDS:
        page.goto(served + board)
        boards += page.evaluate(
            """() => [...document.querySelectorAll('table.leaderboard')].map(table => {
            const wrap = table.parentNode.getBoundingClientRect();
            const heads = [...table.tHead.rows[0].cells];
            const dates = [...table.querySelectorAll('tbody td:last-child')].map(td => td.getBoundingClientRect().right);
            return {scrolls: table.parentNode.scrollWidth > table.parentNode.clientWidth, right: wrap.right,
                    last: heads[heads.length - 1].textContent.trim(), dates: dates,
                    dirty: table.querySelectorAll('abbr.dirty').length,
                    clipped: heads.filter(th => th.scrollWidth > th.clientWidth).map(th => th.textContent.trim())};
        })"""
        )
    page.goto(served + "leaderboard-locomo.html")
    page.locator("section.corpus").first.screenshot(path=str(tmp_path / "locomo-board-1280.png"))
    assert any(b["dirty"] for b in boards)  # the LoCoMo board, made at a dirty commit
    for board in boards:
        assert not board["scrolls"] and board["clipped"] == [], board
        assert board["last"].rstrip(" ↕") == "date" and max(board["dates"]) <= board["right"], board


@pytest.mark.browser
def test_a_phone_shows_the_leaderboard_as_cards(served: str, browser, tmp_path: Path):
    """At 390 px each row is a card: strategy and headline figure side by side on its first line, every other value labelled."""
    page = _page(browser, 390)
    page.goto(served + "leaderboard-locomo.html")
    card = page.locator("table.leaderboard tbody tr").first
    card.screenshot(path=str(tmp_path / "card-390.png"))
    strategy = card.locator("td.strategy").bounding_box()
    headline = card.locator("td.headline").bounding_box()
    assert headline["y"] < strategy["y"] + strategy["height"] and strategy["y"] < headline["y"] + headline["height"]  # one line
    assert headline["x"] > strategy["x"] + strategy["width"] - 1
    assert (
        page.evaluate("() => getComputedStyle(document.querySelector('table.leaderboard tbody td.model'), '::before').content")
        == '"model"'
    )


@pytest.mark.browser
@pytest.mark.parametrize("kind", ["board-locomo", "run-locomo-mneme", "history-mneme", "compare"])
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
    """A tap opens the ceiling badge's reason, and the title of "+dirty" (an abbreviation whose title was hover-only)."""
    page = _page(browser, 390)
    page.goto(served + "leaderboard-locomo.html")  # its runs were made at a dirty commit
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


# -- what the charts claim ------------------------------------------------------------------------------


@pytest.mark.browser
def test_cutoff_chart_has_one_colour_per_metric_and_one_stroke_per_level(served: str, built, browser, tmp_path: Path):
    """On a corpus with sessions, the run page's chart draws each metric in one colour at both levels, turn
    lines solid and session lines dashed, every line named in the legend in the same colour and stroke; the
    paper's points are diamonds in their metric's colour, named by metric, level and k; no text among the lines."""
    page = _page(browser, 1280)
    page.goto(served + built[1]["run-locomo-bm25"])
    chart = page.locator("#retrieval ~ figure.chart").first
    chart.screenshot(path=str(tmp_path / "cutoff-chart-locomo.png"))
    lines = chart.evaluate(
        """figure => [...figure.querySelectorAll('path.line')].map(path => {
            const style = getComputedStyle(path);
            return {cls: path.getAttribute('class'), stroke: style.stroke, dash: style.strokeDasharray};
        })"""
    )
    legend = [(span.get_attribute("class"), span.inner_text()) for span in chart.locator("figcaption .legend-key").all()]
    named = {text.split(" ")[0] + " " + text.split(" ")[1]: cls for cls, text in legend if cls.startswith("legend-key line")}
    metrics = {name.split(" ")[0] for name in named}
    assert {name.split(" ")[1] for name in named} == {"(turn)", "(session)"} and len(metrics) == 5
    for metric in metrics:  # one colour per metric, the same at both levels
        turn, session = named[f"{metric} (turn)"].split(), named[f"{metric} (session)"].split()
        assert turn[2] == session[2] and turn[3] == "solid" and session[3] == "dashed"
    drawn = [line for line in lines if "same" not in line["cls"]]
    assert len({line["stroke"] for line in drawn}) <= 5 and len({(line["stroke"], line["dash"]) for line in drawn}) == len(drawn)
    assert all((line["dash"] == "none") == ("solid" in line["cls"]) for line in drawn)
    published = [text for cls, text in legend if "reference" in cls]
    assert published == ["LoCoMo paper: recall_frac (turn) at k = 5, 10, 25, 50 (published, not re-run here)"]
    frac = named["recall_frac (turn)"].split()[2]
    assert [c for c, _ in legend if "reference" in c] == [f"legend-key reference {frac}"]
    assert chart.locator("svg .mark text").count() == 0


def test_latency_slope_needs_three_memory_sizes():
    """Two memory sizes always fit a line exactly, so no slope is given; three give one. The chart's legend says
    which, and a note says why a line has none."""
    from evals.judge.metrics import LatencyBucket, latency_slope
    from evals.site._retrieval import latency_chart

    def buckets(sizes: int) -> list[LatencyBucket]:  # latency doubling with size: slope 1
        return [LatencyBucket(2**b, 2 ** (b + 1) - 1, 10, 1e-6 * 2**b, 2e-6 * 2**b, 1e-6 * 2**b) for b in range(8, 8 + sizes)]

    assert latency_slope(buckets(1)) is None and latency_slope(buckets(2)) is None
    assert latency_slope(buckets(3)) == pytest.approx(1.0, abs=0.01)
    chart = latency_chart([("on LoCoMo", "a.html", buckets(2)), ("growing", "b.html", buckets(3))], "latency")
    assert chart is not None
    assert [text for _, text in chart.legend] == ["on LoCoMo (no slope: 2 memory sizes)", "growing (slope 1.00)"]
    assert len(chart.notes) == 1 and chart.notes[0].startswith("No slope for on LoCoMo: its retrieve calls came at fewer than 3")


def test_ceilings_and_the_hash_embedder_are_decided_once():
    """evals.views.tables decides both from what the store recorded: the built-in oracles and any run that ignored k are
    ceilings (a plug-in that borrows a built-in's name is not); Mneme with HashEmbedder carries the hash caveat."""
    from types import SimpleNamespace

    from evals.views.tables import caveats

    def run(
        strategy: str,
        source: str | None = "built-in",
        rule: str | None = "prefix",
        model: str = "none",
        usage: dict | None = None,
        **config: str,
    ):
        return SimpleNamespace(
            strategy=strategy,
            strategy_source=source,
            cutoff_rule=rule,
            model=model,
            strategy_config={"name": strategy, **config},
            llm_usage=usage,
        )

    def kinds(summary) -> list[str]:
        return [c.kind for c in caveats(summary)]

    assert kinds(run("full_history", rule="whole_list")) == kinds(run("summary_buffer")) == ["ceiling"]
    assert kinds(run("full_history", source=None, rule=None)) == ["ceiling"]  # stored before either was recorded
    assert kinds(run("full_history", source="someone-else 1.0")) == []
    assert kinds(run("everything", source="pkg:factory", rule="whole_list")) == ["ceiling"]
    assert kinds(run("mneme", model="hash-16", embedder="HashEmbedder")) == ["hash_embedder"]
    assert kinds(run("mneme", model="all-MiniLM-L6-v2", embedder="MiniLMEmbedder")) == kinds(run("bm25")) == []
    assert caveats(run("mneme", model="hash-16", embedder="HashEmbedder"))[0].label == "hash embedder: no semantics"
    # An endpoint that served another model than the one asked for.
    served = {"answer": {"model": "gpt-4o-mini", "served": [{"model": "llama-3.1-8b", "fingerprint": None, "requests": 4}]}}
    assert kinds(run("bm25", usage=served)) == ["served_model"]


def test_ceilings_are_marked_in_cutoff_tables_and_on_the_chart(built):
    """On the LoCoMo board, every cutoff table sets full_history and summary_buffer apart, badged; the cost chart
    draws them as squares labelled "(ceiling)"; full_history's run page and cutoff chart say it is one."""

    site, pages = built
    index = parse(site / "leaderboard-locomo.html")
    board = next(s for s in index.find_all("section", "corpus") if "locomo" in s.find("h2").text())
    tables = board.find("details", "cutoffs").find_all("table")
    assert tables
    for table in tables:
        memories, ceilings = table.find_all("tbody")[:2]
        assert "ceilings" in ceilings.classes
        names = [tr.find("a").text() for tr in ceilings.find_all("tr") if tr.find_all("td")]
        assert sorted(n.split(" ")[0] for n in names) == ["full_history", "summary_buffer"]
        assert all(tr.find("details", "ceiling") for tr in ceilings.find_all("tr") if tr.find_all("td"))
        assert not memories.find_all("details", "ceiling")
    squares = [a for a in board.find("div", "board-chart").find_all("a") if "ceiling" in a.classes]
    assert sorted(a.find("text").text() for a in squares) == ["full_history (ceiling)", "summary_buffer (ceiling)"]
    assert all(a.find("rect") for a in squares)
    run = parse(site / pages["run-locomo-full_history"])
    assert run.find("p", "caveats").find("details", "ceiling")
    assert "full_history is a ceiling, not a memory" in run.find("figure", "chart").find("figcaption").text()


def test_the_hash_embedder_caveat_is_on_every_page_that_shows_the_run(built):
    """Leaderboard row and chart label, run page, history index and page, compare section: each marks mneme (hash-16);
    bm25 nowhere. The drill-down's page model carries it (RunHeader.caveats) for its header."""

    from evals.site._views import run_header
    from evals.store import Store
    from evals.views.site_paths import Paths

    site, pages = built
    for kind in ("board-starter", "board-locomo", "run-locomo-mneme", "history-index", "history-mneme", "compare"):
        marked = parse(site / pages[kind]).find_all("details", "hash_embedder")
        assert marked and all(d.find("summary").text().startswith("hash embedder: no semantics") for d in marked), kind
    for board in BOARDS:
        rows = parse(site / board).find("table", "leaderboard").find_all("tr")
        assert [
            tr.find("td").find("a").text() for tr in rows if tr.find_all("td") and tr.find_all("details", "hash_embedder")
        ] == ["mneme"]
        labels = [t.text() for t in parse(site / board).find("div", "board-chart").find_all("text")]
        assert "mneme (hash)" in labels  # the one mneme on each board
    assert not parse(site / pages["run-starter-bm25"]).find_all("details", "hash_embedder")
    with Store.open(site.parent / "results.duckdb", read_only=True) as store:
        summaries = store.runs()
    mneme = next(s for s in summaries if s.strategy == "mneme")
    assert [c.kind for c in run_header(mneme, Paths(summaries)).caveats] == ["hash_embedder"]

