"""Two memories side by side, and the leaderboard ranked at equal k.

The site is pair_site from a LoCoMo-shaped corpus (bench/gen_locomo.py: sessions with dates, dia_ids,
evidence, the five categories) with two strategies at k=2 (bm25 and recency), bm25 again at k=3 and at
an older commit, and the two ceilings (oracle, full_history). The comparison of bm25 and recency must
list exactly the test points the two runs' headline verdicts (evals.judge.headline) disagree on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.html import parse

from evals.judge.headline import HIT, MISS, verdicts
from evals.judge.metrics import ScoredRun, point_values
from evals.site._pairs import flip_anchor
from evals.store import Store


def _verdicts(store: Path, run_id: str) -> dict[str, str]:
    """Each test point's headline verdict, by its compare-page id."""
    with Store.open(store, read_only=True) as opened:
        stored = opened.get_run(run_id)
    rule = stored.summary.headline.rule
    values = point_values(ScoredRun(stored.run, stored.scores), [rule.metric])
    answerable = [s.answerable for conv in stored.scores.points for s in conv]
    flat = verdicts(rule, values.columns[rule.metric], answerable)
    keys = [flip_anchor(c.conversation_id, p.turn_index) for c in stored.run.conversations for p in c.test_points]
    return dict(zip(keys, flat, strict=True))


def _pair_page(pair_site: dict, a: str, b: str) -> Path:
    return pair_site["site"] / "compare" / f"{pair_site['runs'][a]}-vs-{pair_site['runs'][b]}.html"


# -- the comparison of two runs ------------------------------------------------------------------


@pytest.mark.browser
def test_the_flips_are_those_of_the_two_runs_verdicts(pair_site: dict, pair_served: str, browser):
    """In Chromium, the flipped questions (data-flip a or b, id tp-<conversation>-<turn>) are where the verdicts differ."""
    a, b = _verdicts(pair_site["store"], pair_site["runs"]["bm25"]), _verdicts(pair_site["store"], pair_site["runs"]["recency"])
    expected = {key: "a" for key in a if a[key] == HIT and b.get(key) == MISS}
    expected |= {key: "b" for key in a if a[key] == MISS and b.get(key) == HIT}
    assert expected  # the fixture makes the two memories disagree somewhere
    page = browser.new_page()
    page.goto(pair_served + str(_pair_page(pair_site, "bm25", "recency").relative_to(pair_site["site"])))
    shown = page.evaluate("() => [...document.querySelectorAll('[data-flip]')].map(e => [e.id, e.getAttribute('data-flip')])")
    assert dict(shown) == expected and len(shown) == len(expected)


@pytest.mark.browser
def test_each_flip_shows_both_memories_records_marked_evidence_or_not(pair_site: dict, pair_served: str, browser):
    """In Chromium, each flipped question gets both runs' records, each marked evidence or not, and its evidence quoted."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(pair_served + str(_pair_page(pair_site, "bm25", "recency").relative_to(pair_site["site"])))
    page.wait_for_selector("#pair[data-drawn]")
    drawn = page.evaluate(
        """() => [...document.querySelectorAll('section.flip')].map(s => ({
            sides: s.querySelectorAll('.sides > .side').length,
            marked: [...s.querySelectorAll('.sides li')].every(li => ['yes', 'no'].includes(li.getAttribute('data-evidence'))),
            records: s.querySelectorAll('.sides li').length,
            quoted: [...s.querySelectorAll('ul.flip-evidence li[data-turn]')].every(li => li.querySelector('.txt')),
        }))"""
    )
    assert drawn and errors == []
    assert all(d["sides"] == 2 and d["marked"] and d["quoted"] for d in drawn)
    assert any(d["records"] for d in drawn)


@pytest.mark.browser
def test_evidence_is_named_as_the_benchmark_names_it_with_its_date(pair_site: dict, pair_served: str, browser):
    """In Chromium, each flip's evidence turns carry LoCoMo's dia_id (D<session>:<turn>) and the session's date."""
    page = browser.new_page()
    page.goto(pair_served + str(_pair_page(pair_site, "bm25", "recency").relative_to(pair_site["site"])))
    page.wait_for_selector("#pair[data-drawn]")
    items = page.evaluate(
        "() => [...document.querySelectorAll('ul.flip-evidence li[data-turn]')]"
        ".map(li => [li.querySelector('b').innerText, li.querySelector('small').innerText])"
    )
    assert items
    for name, date in items:
        assert re.fullmatch(r"D\d+:\d+", name), name
        assert re.fullmatch(r"\d{1,2}:\d\d [ap]m on \d{1,2} \w+, \d{4}", date.strip()), date


def _data(path: Path, line: int = 0) -> dict:
    """The value a data file's ``line``-th statement (each sets one global, a line each) holds."""
    return json.loads(path.read_text(encoding="utf-8").splitlines()[line].split("] = ", 1)[1].rstrip(";"))


def test_the_dia_ids_name_the_turns_the_file_names(pair_site: dict):
    """Each evidence turn's name in the corpus's data is the dia_id the LoCoMo file gives the text it quotes."""
    source = json.loads((pair_site["site"].parent / "locomo.json").read_text())
    texts = {
        (sample["sample_id"], turn["dia_id"]): f"{turn['speaker']}: {turn['text']}"
        for sample in source
        for key, value in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", key)
        for turn in value
    }
    (corpus,) = (pair_site["site"] / "transcripts").iterdir()
    checked = 0
    for cid, points in _data(corpus / "points.js").items():
        sample = next(sid for sid in {k[0] for k in texts} if cid.endswith(sid))
        for _question, _gold, _category, evidence in points.values():
            for _turn, name, _date, quoted in evidence:
                assert texts[sample, name].startswith(quoted.removesuffix("…"))
                checked += 1
    assert checked
    # Every turn of the corpus, once (what runs' records name by number): its dia_id and the start of its text.
    for cid, turns in _data(corpus / "points.js", 1).items():
        sample = next(sid for sid in {k[0] for k in texts} if cid.endswith(sid))
        named = [(name, quoted) for name, _date, quoted in turns if not name.startswith("turn ")]  # a dialog's turns
        assert named and all(texts[sample, name].startswith(quoted.removesuffix("…")) for name, quoted in named)


def test_the_paired_test_is_stated(pair_site: dict):
    """The page gives both headlines with their intervals and McNemar's p over the shared test points."""
    page = parse(_pair_page(pair_site, "bm25", "recency"))
    figures = [p.text() for p in page.find_all("p", "pair-figure")]
    assert len(figures) == 2 and all("recall_any@k" in f and "[" in f for f in figures)
    assert "McNemar" in page.find("p", "pair-test").text() and "p = " in page.find("p", "pair-test").text()


def test_each_side_shows_its_tokens_per_test_point(pair_site: dict):
    """Beside each headline, the tokens its records cost per test point, as the store holds them."""
    page = parse(_pair_page(pair_site, "bm25", "recency"))
    shown = [p.text() for p in page.find_all("p", "pair-tokens")]
    with Store.open(pair_site["store"], read_only=True) as opened:
        tokens = {s.run_id: s.tokens_per_test_point for s in opened.runs()}
    expected = [tokens[pair_site["runs"][name]] for name in ("bm25", "recency")]
    assert [float(t.split()[0].replace(",", "")) for t in shown] == pytest.approx(expected, abs=0.05)


def test_flips_by_category_add_up_to_the_flips(pair_site: dict):
    """The per-category rows count every flip once."""
    page = parse(_pair_page(pair_site, "bm25", "recency"))
    rows = [[td.text() for td in tr.find_all("td")] for tr in page.find("table", "pair-categories").find("tbody").find_all("tr")]
    flips = page.find_all("section", "flip")
    assert sum(int(r[1]) for r in rows) == sum(s.attrs["data-flip"] == "a" for s in flips)
    assert sum(int(r[2]) for r in rows) == sum(s.attrs["data-flip"] == "b" for s in flips)


def test_the_commit_over_commit_comparison_is_a_pair_page(pair_site: dict):
    """bm25 at two commits gets its side-by-side page, linked from compare.html."""
    href = f"compare/{pair_site['runs']['bm25-old']}-vs-{pair_site['runs']['bm25']}.html"
    assert (pair_site["site"] / href).is_file()
    assert href in {a.attrs.get("href") for a in parse(pair_site["site"] / "compare.html").find_all("a")}


# -- reached from the leaderboard -----------------------------------------------------------------


def test_the_leaderboard_links_every_pair(pair_site: dict):
    """The board lists a comparison for every two of its rows, each page present."""
    board = parse(pair_site["site"] / "leaderboard-locomo.html")
    links = [a.attrs["href"] for a in board.find("ul", "pairs").find_all("a")]
    assert len(links) == 10  # five rows: every two of them
    assert all((pair_site["site"] / href).is_file() for href in links)


@pytest.mark.browser
def test_ticking_two_rows_opens_their_comparison(pair_site: dict, pair_served: str, browser):
    """In Chromium, ticking "compare" on recency and bm25 offers their page, the higher-ranked first."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(pair_served + "leaderboard-locomo.html")
    page.locator(f'input.pick[value="{pair_site["runs"]["recency"]}"]').check()
    page.locator(f'input.pick[value="{pair_site["runs"]["bm25"]}"]').check()
    page.locator("a.pick-go").click()
    page.wait_for_url(f"**/compare/{pair_site['runs']['bm25']}-vs-{pair_site['runs']['recency']}.html")
    assert page.locator("[data-flip]").count() > 0


# -- ranked at equal k --------------------------------------------------------------------------


def test_leaderboard_json_ranks_within_benchmark_and_k(pair_site: dict):
    """Each memory's rank counts only rows of its benchmark and k; ceilings have none."""
    records = json.loads((pair_site["site"] / "leaderboard.json").read_text())
    by_id = {r["run_id"]: r for r in records}
    runs = pair_site["runs"]
    assert by_id[runs["bm25-k3"]]["rank"] == 1  # alone at k=3
    assert sorted(by_id[runs[name]]["rank"] for name in ("bm25", "recency")) == [1, 2]
    assert by_id[runs["oracle"]]["rank"] is None and by_id[runs["full_history"]]["rank"] is None


def test_the_board_groups_memories_by_k(pair_site: dict):
    """The memories sit in one body per k, each headed with its k; the ceilings in a body of their own."""
    table = parse(pair_site["site"] / "leaderboard-locomo.html").find("table", "leaderboard")
    groups = table.find_all("tbody", "k-group")
    assert [g.attrs["data-k"] for g in groups] == ["2", "3"]
    assert all(f"k = {g.attrs['data-k']}" in g.find("th").text() for g in groups)


def test_the_frontier_leaves_the_ceilings_out(pair_site: dict):
    """No ceiling is on the chart's frontier, and some memory is."""
    board = parse(pair_site["site"] / "leaderboard-locomo.html")
    marks = [a.attrs.get("class", "") for a in board.find_all("a") if "mark" in a.attrs.get("class", "").split()]
    assert not any("ceiling" in m and "frontier" in m for m in marks)
    assert any("frontier" in m for m in marks)


def test_the_benchmarks_own_figure_stands_beside_the_headline(pair_site: dict):
    """LoCoMo's recall_frac@k is a default column right after the headline, with the paper's rows in the table."""
    table = parse(pair_site["site"] / "leaderboard-locomo.html").find("table", "leaderboard")
    headings = [th.text().strip() for th in table.find("thead").find_all("th")]
    at = next(n for n, h in enumerate(headings) if h.startswith("recall_any@k"))
    assert "not the paper's fraction" in headings[at] and headings[at + 1] == "recall_frac@k"
    assert any("LoCoMo paper" in tr.text() for tr in table.find("tfoot").find_all("tr"))


def test_a_store_with_one_benchmark_opens_on_its_leaderboard(pair_site: dict):
    """index.html of a one-benchmark store is that benchmark's leaderboard."""
    front = parse(pair_site["site"] / "index.html")
    assert front.find("table", "leaderboard") is not None


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_a_pair_page_never_pans(pair_site: dict, pair_served: str, browser, width: int):
    """Drawn, with every record side by side, the comparison is no wider than a phone's or a desktop's window."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(pair_served + str(_pair_page(pair_site, "bm25", "recency").relative_to(pair_site["site"])))
    page.wait_for_selector("#pair[data-drawn]")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


# -- narrowing the flips --------------------------------------------------------------


def _categories(store: Path, run_id: str) -> dict[str, str]:
    """Each test point's category, by its compare-page id."""
    with Store.open(store, read_only=True) as opened:
        stored = opened.get_run(run_id)
    return {flip_anchor(c.conversation_id, p.turn_index): p.category for c in stored.run.conversations for p in c.test_points}


def test_each_flip_carries_its_category(pair_site: dict):
    """Each flipped question carries data-category: its test point's category in the corpus, beside data-flip."""
    categories = _categories(pair_site["store"], pair_site["runs"]["bm25"])
    flips = parse(_pair_page(pair_site, "bm25", "recency")).find_all("section", "flip")
    assert flips and all(s.attrs["data-category"] == categories[s.attrs["id"]] for s in flips)


def test_each_category_row_links_to_its_filtered_view(pair_site: dict):
    """Each "Flips by category" row links to #category=<it>, and its two counts add &flip=a and &flip=b."""
    page = parse(_pair_page(pair_site, "bm25", "recency"))
    rows = page.find("table", "pair-categories").find("tbody").find_all("tr")
    assert rows
    for row in rows:
        name, only_a, only_b = (td.find("a") for td in row.find_all("td")[:3])
        view = f"#category={quote(name.text())}"
        assert (name.attrs["href"], only_a.attrs["href"], only_b.attrs["href"]) == (view, f"{view}&flip=a", f"{view}&flip=b")


@pytest.mark.browser
def test_the_url_shows_one_category_and_one_direction(pair_site: dict, pair_served: str, browser):
    """In Chromium, #category=X&flip=a shows exactly the flips of category X hit by A only, and the control says so."""
    flips = parse(_pair_page(pair_site, "bm25", "recency")).find_all("section", "flip")
    category = next(s.attrs["data-category"] for s in flips if s.attrs["data-flip"] == "a")
    expected = [s.attrs["id"] for s in flips if s.attrs["data-category"] == category and s.attrs["data-flip"] == "a"]
    page = browser.new_page()
    page.goto(
        pair_served
        + str(_pair_page(pair_site, "bm25", "recency").relative_to(pair_site["site"]))
        + f"#category={category}&flip=a"
    )
    page.wait_for_selector("#pair[data-drawn]")
    shown = page.evaluate("() => [...document.querySelectorAll('section.flip')].filter(s => !s.hidden).map(s => s.id)")
    chosen = page.evaluate("() => [...document.querySelectorAll('#flip-filter select')].map(s => s.value)")
    assert shown == expected[:25] and chosen == [category, "a"]


@pytest.mark.browser
def test_choosing_a_category_keeps_it_in_the_url(pair_site: dict, pair_served: str, browser):
    """In Chromium, choosing a category and a direction in the control puts them in the URL and shows only those."""
    flips = parse(_pair_page(pair_site, "bm25", "recency")).find_all("section", "flip")
    category = flips[-1].attrs["data-category"]
    page = browser.new_page()
    page.goto(pair_served + str(_pair_page(pair_site, "bm25", "recency").relative_to(pair_site["site"])))
    page.wait_for_selector("#pair[data-drawn]")
    page.select_option("#flip-filter [name=category]", category)
    page.select_option("#flip-filter [name=flip]", "b")
    assert page.evaluate("() => location.hash") == f"#category={quote(category)}&flip=b"
    visible = "[...document.querySelectorAll('section.flip')].filter(s => !s.hidden)"
    shown = page.evaluate(f"() => {visible}.map(s => [s.dataset.category, s.dataset.flip])")
    assert all(item == [category, "b"] for item in shown)


def _run_page(pair_site: dict, name: str) -> Path:
    return pair_site["site"] / "runs" / f"{pair_site['runs'][name]}.html"


def test_a_run_pages_misses_carry_their_category(pair_site: dict):
    """Each row of a run page's miss list carries its test point's category, as a column and as data-category."""
    categories = _categories(pair_site["store"], pair_site["runs"]["recency"])
    rows = parse(_run_page(pair_site, "recency")).find("table", id="miss-list").find("tbody").find_all("tr")
    assert rows
    for row in rows:
        cells = row.find_all("td")
        key = flip_anchor(cells[0].text(), int(cells[1].text()))
        assert row.attrs["data-category"] == cells[2].text() == categories[key]


@pytest.mark.browser
def test_a_run_pages_misses_filter_by_the_category_in_the_url(pair_site: dict, pair_served: str, browser):
    """In Chromium, a run page at #category=X lists only X's misses, and its by-category row links there."""
    rows = parse(_run_page(pair_site, "recency")).find("table", id="miss-list").find("tbody").find_all("tr")
    category = rows[-1].attrs["data-category"]
    expected = sum(r.attrs["data-category"] == category for r in rows)
    page = browser.new_page()
    page.goto(pair_served + str(_run_page(pair_site, "recency").relative_to(pair_site["site"])) + f"#category={quote(category)}")
    shown = page.evaluate(
        "() => [...document.querySelectorAll('#miss-list tbody tr')].filter(r => !r.hidden).map(r => r.dataset.category)"
    )
    assert shown == [category] * expected
    assert page.locator(f'a[href="#category={quote(category)}"]').count() == 1


# -- the terminal says what the page says ---------------------------------------------


def _compare(pair_site: dict, *args: str) -> str:
    from click.testing import CliRunner

    from evals.cli import cli

    a, b = pair_site["runs"]["bm25"], pair_site["runs"]["recency"]
    result = CliRunner().invoke(cli, ["compare", a, b, "--store", str(pair_site["store"]), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_compare_json_carries_the_pages_figures(pair_site: dict):
    """`evals compare --format json` gives every per-category count and p, and the totals, the compare page gives."""
    page = parse(_pair_page(pair_site, "bm25", "recency"))
    rows = [[td.text() for td in tr.find_all("td")] for tr in page.find("table", "pair-categories").find("tbody").find_all("tr")]
    found = json.loads(_compare(pair_site, "--format", "json"))
    assert [[c["category"], str(c["only_a"]), str(c["only_b"]), c["p_text"]] for c in found["categories"]] == rows
    strong = [s.text() for s in page.find("p", "pair-test").find_all("strong")]
    assert strong[:3] == [str(found["only_a"]), str(found["only_b"]), found["p_text"]]
    sections = page.find_all("section", "flip")
    assert sorted(
        (f["flip"], flip_anchor(f["conversation_id"], f["turn_index"]), f["category"]) for f in found["flips"]
    ) == sorted((s.attrs["data-flip"], s.attrs["id"], s.attrs["data-category"]) for s in sections)


def test_compare_prints_the_per_category_flips_as_the_page_names_them(pair_site: dict):
    """`evals compare` prints "hit by A only"/"hit by B only" and one line per category with its counts and p."""
    page = parse(_pair_page(pair_site, "bm25", "recency"))
    rows = [[td.text() for td in tr.find_all("td")] for tr in page.find("table", "pair-categories").find("tbody").find_all("tr")]
    out = _compare(pair_site)
    assert "hit->miss" not in out and "hit by A only:" in out and "hit by B only:" in out
    for name, only_a, only_b, p in rows:
        assert re.search(
            rf"^  {re.escape(name)}\s+{only_a} by A only, {only_b} by B only, McNemar p = {re.escape(p)}$", out, re.M
        )


def test_leaderboard_cli_json_ranks_as_leaderboard_json(pair_site: dict):
    """`evals leaderboard --format json` gives each latest run the rank leaderboard.json gives it (null for a ceiling)."""
    from click.testing import CliRunner

    from evals.cli import cli

    result = CliRunner().invoke(cli, ["leaderboard", "--store", str(pair_site["store"]), "--format", "json"])
    assert result.exit_code == 0, result.output
    printed = {r["run_id"]: r["rank"] for r in json.loads(result.output)}
    site = {r["run_id"]: r["rank"] for r in json.loads((pair_site["site"] / "leaderboard.json").read_text())}
    assert printed == site and None in printed.values()


def test_leaderboard_cli_sets_the_ceilings_apart(pair_site: dict):
    """`evals leaderboard` lists a corpus's memories k by k as its board does, then its ceilings, starred, after them."""
    from click.testing import CliRunner

    from evals.cli import cli

    result = CliRunner().invoke(cli, ["leaderboard", "--store", str(pair_site["store"])])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("strategy"))
    rows = [line.split()[0] if line.strip() else "" for line in lines[start + 1 :]]
    rows = rows[: rows.index("memories")] if "memories" in rows else rows
    names = [r for r in rows if r]
    first_ceiling = next(n for n, r in enumerate(names) if r.endswith("*"))
    assert all(r.endswith("*") for r in names[first_ceiling:]) and not any(r.endswith("*") for r in names[:first_ceiling])
    assert rows[rows.index(names[first_ceiling]) - 1] == ""  # a blank line sets them apart


def test_compare_names_the_evidence_as_the_page_does(pair_site: dict):
    """`evals compare --format json` names each flip's evidence turns as the compare page's data does (LoCoMo's dia_ids)."""
    found = json.loads(_compare(pair_site, "--format", "json"))
    (corpus,) = (pair_site["site"] / "transcripts").iterdir()
    points = _data(corpus / "points.js")
    assert found["flips"]
    for flip in found["flips"]:
        page = [name for _turn, name, _date, _text in points[flip["conversation_id"]][str(flip["turn_index"])][3]]
        assert flip["evidence"] == page and all(re.fullmatch(r"D\d+:\d+", name) for name in page)


def test_the_transcript_names_the_evidence_as_the_compare_page_does(pair_site: dict):
    """Each transcript's test points name their evidence turns with the labels the compare page's data gives them."""
    (corpus,) = (pair_site["site"] / "transcripts").iterdir()
    points = _data(corpus / "points.js")
    labels = {name for conversation in points.values() for point in conversation.values() for _t, name, _d, _x in point[3]}
    shown = set()
    for page in (corpus / "c").glob("*.html"):
        for item in parse(page).find("ol", "points").find_all("li"):
            shown |= set(re.findall(r"turn \d+ \((D\d+:\d+)\)", item.text()))
    assert shown and shown <= labels
