"""The static site, built from a real store of real runs over tests/fixtures/site_corpus.

The store holds two commits. At the older one every strategy ran as is; at
the newer one full_history's first test point was made to miss (its records
emptied before scoring), so the newer commit shows a drop and a flip. Pages
are parsed with the standard library's HTML parser, and the tests assert on
the few elements that matter.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from click.testing import CliRunner
from helpers.browser import problems_on
from helpers.html import follow, parse, record_text
from helpers.stores import NEW, OLD, SITE_CORPUS, STRATEGIES, board, make_store, provenance, summaries

from evals.judge.metrics import METRICS
from evals.model import formatting
from evals.model.tokens import TokenCounter
from evals.run.evaluate import RunConfig, evaluate
from evals.site import DEFAULT_TEMPLATES, SiteError, build_site
from evals.store import Store
from evals.strategies import REFERENCE_STRATEGY
from evals.views.report import stored_legacy_json

CSP = "default-src 'self'; script-src 'self'"


# -- the store and the site ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with five strategies at two commits over the site fixture corpus."""
    return make_store(tmp_path_factory.mktemp("store") / "results.duckdb")


def run_of(store_path: Path, strategy: str, commit: str = NEW):
    return next(s for s in summaries(store_path) if s.strategy == strategy and s.commit == commit)


def point_links(store_path: Path, run_id: str, chosen) -> list[str]:
    """The run page's link to each test point for which ``chosen(score, answer)`` holds (answer None without answers)."""
    with Store.open(store_path, read_only=True) as opened:
        stored = opened.get_run(run_id)
    answers = stored.answers.points if stored.answers else [[None] * len(c.test_points) for c in stored.run.conversations]
    return [
        f"../runs/{run_id}/{c.conversation_id}.html#tp-{p.turn_index}"
        for c, scores, given in zip(stored.run.conversations, stored.scores.points, answers, strict=True)
        for p, score, answer in zip(c.test_points, scores, given, strict=True)
        if chosen(score, answer)
    ]


def drilldown(site: Path, run_id: str, conversation_id: str) -> Path:
    return site / "runs" / run_id / f"{conversation_id}.html"


def run_json(site: Path, run_id: str) -> dict:
    """A run's published JSON (gzipped)."""
    return json.loads(gzip.decompress((site / "runs" / f"{run_id}.json.gz").read_bytes()))


# -- the leaderboard -----------------------------------------------------------------------------


def test_index_links_the_latest_run_of_each_configuration(site: Path, store: Path):
    """The index links each strategy's newest run and none of the older commit's."""
    hrefs = {a.attrs["href"] for a in parse(board(site)).find_all("a")}
    for s in summaries(store):
        assert (f"runs/{s.run_id}.html" in hrefs) == (s.commit == NEW), s.strategy


def test_index_row_shows_interval_hits_tokens_and_commit(site: Path, store: Path):
    """A leaderboard row carries recall, its 95% interval, strict recall, MRR, hits/total, tokens, relative cost and commit."""
    mneme = run_of(store, "mneme")
    row = next(tr for tr in parse(board(site)).find_all("tr") if f"runs/{mneme.run_id}.html" in str(
        [a.attrs.get("href") for a in tr.find_all("a")]
    ))
    headings = [th.text().strip() for th in parse(board(site)).find("thead").find_all("th")]
    cells = dict(zip(headings, [td.text().strip() for td in row.find_all("td")], strict=True))
    recall, strict = mneme.metric("recall"), mneme.metric("strict_recall")
    assert cells["strategy"].startswith("mneme hash embedder: no semantics")  # its caveat beside the name
    assert cells["keyword hit@k"] == f"{recall.value * 100:.1f}% [{recall.low * 100:.1f}%, {recall.high * 100:.1f}%]"
    assert cells["strict recall"] == f"{strict.value * 100:.1f}% [{strict.low * 100:.1f}%, {strict.high * 100:.1f}%]"
    assert cells["MRR"] == f"{mneme.metric('mrr').value:.3f}"
    assert cells["tokens / test point"] == f"{mneme.tokens_per_test_point:,.1f}"
    assert cells["retrieve p95"] == formatting.milliseconds(mneme.metric("retrieve_latency_p95_s").value)
    assert cells["hits / total"] == f"{mneme.hits} / {mneme.total}"
    assert cells[f"vs {REFERENCE_STRATEGY}"].endswith("%")
    assert cells["commit"] == NEW[:7]


def test_relative_cost_is_against_the_declared_reference(site: Path, store: Path):
    """The "vs" column divides each row's tokens per test point by the latest REFERENCE_STRATEGY run's and names that strategy."""
    latest = {s.run_id: s for s in summaries(store) if s.commit == NEW}
    reference = next(s for s in latest.values() if s.strategy == REFERENCE_STRATEGY)
    table = parse(board(site)).find("table", "leaderboard")
    headings = [th.text() for th in table.find("thead").find_all("th")]
    column = headings.index(f"vs {REFERENCE_STRATEGY}")
    for tr in table.find("tbody").find_all("tr"):
        run_id = next(a.attrs["href"] for a in tr.find_all("a") if a.attrs["href"].startswith("runs/"))[
            len("runs/") : -len(".html")
        ]
        expected = formatting.relative(latest[run_id].tokens_per_test_point / reference.tokens_per_test_point)
        assert tr.find_all("td")[column].text() == expected
    records = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert {r["run_id"]: r[f"tokens_relative_to_{REFERENCE_STRATEGY}"] for r in records} == {
        run_id: s.tokens_per_test_point / reference.tokens_per_test_point for run_id, s in latest.items()
    }


def test_index_has_cost_chart_with_frontier(site: Path, store: Path):
    """The index has an inline SVG chart with one mark per configuration and a frontier line."""
    svg = parse(board(site)).find("svg")
    marks = [g for g in svg.find_all("a") if "mark" in g.classes]
    assert len(marks) == len(STRATEGIES)
    assert any("frontier" in m.classes for m in marks)
    assert svg.find("path", cls="frontier")


def test_approximate_tokens_are_marked_on_the_index(tmp_path: Path):
    """Runs counted with the ~4 characters per token estimate say so next to their tokens."""
    store_path = make_store(tmp_path / "approx.duckdb", counter=TokenCounter(exact=False))
    build_site(store_path, tmp_path / "site")
    rows = parse(board(tmp_path / "site")).find("table", "leaderboard").find("tbody").find_all("tr")
    assert all(row.find_all("td")[7].find("abbr", cls="est").text() == "(est.)" for row in rows)


# -- run page and drill-downs ----------------------------------------------------------------------


def test_run_page_links_every_miss_to_its_drilldown(site: Path, store: Path):
    """The run page lists each missed test point, linked to its place in the drill-down."""
    run = run_of(store, "recency")
    expected = point_links(store, run.run_id, lambda score, _: not score.hit)
    page = parse(site / "runs" / f"{run.run_id}.html")
    assert len(expected) >= 2
    assert page.find("h2", id="misses").text() == f"Misses ({len(expected)})"
    assert [a.attrs["href"] for a in page.find_all("table")[0].find_all("a")] == expected


def test_run_page_puts_conversations_with_misses_first(site: Path, store: Path):
    """In the run page's conversation table, every conversation with a miss comes before those without."""
    run = run_of(store, "recency")
    rows = parse(site / "runs" / f"{run.run_id}.html").find_all("table")[1].find("tbody").find_all("tr")
    misses = [int(r.find_all("td")[3].text()) for r in rows]
    assert misses[0] > 0 and misses[-1] == 0
    assert [m > 0 for m in misses] == sorted((m > 0 for m in misses), reverse=True)


def test_empty_recall_is_a_dash_not_zero(site: Path, store: Path):
    """A conversation without test points shows recall as a dash."""
    run = run_of(store, "recency")
    rows = parse(site / "runs" / f"{run.run_id}.html").find_all("table")[1].find("tbody").find_all("tr")
    row = next(r for r in rows if r.find("a").text() == "03_no_tests")
    assert row.find_all("td")[5].text() == "\u2014"


def test_miss_drilldown_lists_retrieved_records_in_rank_order(site: Path, store: Path):
    """A miss's drill-down lists exactly the records the run retrieved, in rank order."""
    run = run_of(store, "recency")
    with Store.open(store, read_only=True) as opened:
        point = opened.get_run(run.run_id).run.conversations[1].test_points[0]
    page = drilldown(site, run.run_id, "02_far_fact")
    section = parse(page).find("section", id="tp-14")
    assert "miss" in section.classes
    # A record that is a turn names its line in the transcript, whose text site.js fills in (test_site_shared_turns.py).
    texts = [record_text(page, li.find("div", cls="txt")) for li in section.find("ol", cls="records").find_all("li")]
    assert texts == point.retrieved_records


def test_miss_drilldown_shows_where_the_answer_was(site: Path, store: Path):
    """A miss's drill-down names the turn holding the keyword and its distance, marks it, and links the turn to the transcript."""
    run = run_of(store, "recency")
    page = drilldown(site, run.run_id, "02_far_fact")
    section = parse(page).find("section", id="tp-14")
    evidence = section.find("ul", cls="evidence").find("li")
    assert evidence.find("a").text() == "turn 0"
    assert "14 turns before the test point" in evidence.text()
    assert evidence.find("mark").text() == "7731"
    target, fragment = follow(page, evidence.find("a").attrs["href"])
    assert fragment == "t-0" and "7731" in parse(target).find("li", id="t-0").text()


def test_drilldown_transcript_tags_retrieved_and_answer_turns(site: Path, store: Path):
    """The transcript tags each turn a test point retrieved (with rank) and the turn holding its answer."""
    run = run_of(store, "recency")
    page = parse(drilldown(site, run.run_id, "02_far_fact"))
    tags = {
        (li.attrs["id"], a.text())
        for li in page.find("ol", cls="transcript").find_all("li")
        for a in li.find_all("a", cls="tag")
        if a.attrs["href"] == "#tp-14"
    }
    retrieved = {(f"t-{turn}", f"TP1 #{rank}") for rank, turn in enumerate(range(13, 8, -1), start=1)}  # recency: newest first
    assert tags == retrieved | {("t-0", "TP1 answer"), ("t-14", "TP1 asked")}
    assert "evidence" in page.find("li", id="t-0").classes


def test_corpus_markup_renders_as_text(site: Path, store: Path):
    """<script> and </td> in turns are escaped: they appear as text, never as elements."""
    run = run_of(store, "summary_buffer")
    path = drilldown(site, run.run_id, "01_markup")
    page = parse(path)
    scripts = page.find_all("script")
    assert [s.attrs.get("src") for s in scripts] == ["../../static/site.js"]
    assert "<script>alert(1)</script>" in page.text()
    assert "Close the cell with </td> and the row with </tr> & friends" in page.text()
    raw = path.read_text(encoding="utf-8")
    assert "&lt;script&gt;" in raw and "&lt;/script&gt;" in raw and "&lt;/td&gt;" in raw


def test_keyword_highlight_wraps_escaped_text(site: Path, store: Path):
    """A keyword that is itself markup (</td>) is highlighted as escaped text inside <mark>."""
    run = run_of(store, "mneme")
    path = drilldown(site, run.run_id, "01_markup")
    marks = {m.text() for m in parse(path).find_all("mark")}
    assert "</td>" in marks
    assert "<mark>&lt;/td&gt;</mark>" in path.read_text(encoding="utf-8")


def test_full_history_page_of_500_turn_conversations_stays_small(tmp_path: Path):
    """A full_history drill-down over 500-turn conversations stays under 2 MB."""
    corpus = tmp_path / "long"
    corpus.mkdir()
    for c in range(2):
        turns = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} of talk {c}: " + "filler words " * 6}
            for i in range(500)
        ]
        turns[3]["content"] = "the secret is zorvex-417"
        for i in range(50, 500, 45):
            turns[i]["test_at"] = {
                "question": "what is the secret",
                "expected_fact": "zorvex-417",
                "expected_keywords": ["zorvex-417"],
            }
        (corpus / f"talk{c}.json").write_text(
            json.dumps({"schema_version": "1", "id": f"talk{c}", "description": "long", "turns": turns})
        )
    with Store.open(tmp_path / "long.duckdb") as opened:
        run_id = opened.append(evaluate(RunConfig(strategy="full_history", corpus=corpus)), provenance(OLD))
    report = build_site(tmp_path / "long.duckdb", tmp_path / "site")
    page = drilldown(tmp_path / "site", run_id, "talk0")
    assert page.stat().st_size < 2_000_000
    assert report.largest_page_bytes < 2_000_000


# -- history and compare -------------------------------------------------------------------------


def test_history_flags_the_drop(site: Path, store: Path):
    """full_history's newer run hit fewer of the same test points, so its history row is flagged."""
    newer, older = run_of(store, "full_history", NEW), run_of(store, "full_history", OLD)
    history = parse(board(site)).find("a", href=f"history/{newer.config_key}--{newer.corpus_digest[:10]}.html")
    page = parse(site / history.attrs["href"])
    rows = page.find("tbody").find_all("tr")
    assert [r.find_all("a")[0].text() for r in rows] == [newer.run_id, older.run_id]
    assert "drop" in rows[0].classes and "drop" not in rows[1].classes
    assert f"hits fell from {older.hits} to {newer.hits}" in rows[0].text()


def test_compare_links_each_flip_to_both_drilldowns(site: Path, store: Path):
    """The compare page lists full_history's flipped test point, linked to both runs' drill-downs."""
    newer, older = run_of(store, "full_history", NEW), run_of(store, "full_history", OLD)
    page = parse(site / "compare.html")
    section = next(s for s in page.find_all("section") if newer.config_key in s.attrs["id"])
    flips = section.find("tbody").find_all("tr")
    assert len(flips) == 1
    links = [a.attrs["href"] for a in flips[0].find_all("a")]
    assert links == [f"runs/{older.run_id}/01_markup.html#tp-4", f"runs/{newer.run_id}/01_markup.html#tp-4"]


# -- downloads -----------------------------------------------------------------------------------


def test_run_json_is_the_seed_shape(site: Path, store: Path):
    """runs/<id>.json.gz, gunzipped, equals the store's seed-shaped export of that run, but that it names its corpus
    (``corpus_dir``: the corpus's name, never a folder of the machine that ran it; tests/site/test_site_no_paths.py)."""
    run = run_of(store, "mneme")
    with Store.open(store, read_only=True) as opened:
        expected = stored_legacy_json(opened.get_run(run.run_id))
    assert expected["corpus_dir"] != run.corpus_name
    assert run_json(site, run.run_id) == {**expected, "corpus_dir": run.corpus_name}


def test_leaderboard_downloads_match_the_index(site: Path, store: Path):
    """leaderboard.csv and leaderboard.json hold the latest run per configuration, empty recall as null."""
    rows = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    table = list(csv.DictReader(io.StringIO((site / "leaderboard.csv").read_text(encoding="utf-8"))))
    latest = {s.run_id for s in summaries(store) if s.commit == NEW}
    assert {r["run_id"] for r in rows} == latest
    assert [r["run_id"] for r in table] == [r["run_id"] for r in rows]
    assert all(r["keyword_hit_at_k"] is not None for r in rows)  # keyword recall, renamed


def test_store_file_is_published(site: Path, store: Path):
    """The store itself is in the site, byte for byte, for the next CI run to restore."""
    assert (site / "data" / "results.duckdb").read_bytes() == store.read_bytes()


# -- properties of the whole site ----------------------------------------------------------------


def _html_files(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_relative_link_resolves(site: Path):
    """Every href and src on every page is relative and names a file (and anchor) that exists."""
    ids: dict[Path, set[str]] = {}
    categories: dict[Path, set[str]] = {}  # what a page's category filter can show (#category=X)
    links: list[tuple[Path, str]] = []
    for path in _html_files(site):
        page = parse(path)
        ids[path] = {n.attrs["id"] for n in page.iter() if n.attrs.get("id")}
        categories[path] = {n.attrs["data-category"] for n in page.iter() if n.attrs.get("data-category") is not None}
        links += [(path, n.attrs[a]) for n in page.iter() for a in ("href", "src") if n.attrs.get(a) is not None]
    assert links
    for source, link in links:
        parts = urlsplit(link)
        assert not parts.scheme and not parts.netloc and not parts.path.startswith("/"), f"{source}: {link}"
        target = (source.parent / unquote(parts.path)).resolve() if parts.path else source
        assert target.is_file(), f"{source.relative_to(site)}: {link}"
        if parts.fragment.startswith("category=") and target.suffix == ".html":
            view = parse_qs(parts.fragment)
            assert view["category"][0] in categories[target], f"{source.relative_to(site)}: {link}"
            assert view.get("flip", ["a"])[0] in ("a", "b"), f"{source.relative_to(site)}: {link}"
        elif parts.fragment and target.suffix == ".html":
            assert parts.fragment in ids[target], f"{source.relative_to(site)}: {link}"


def test_pages_have_csp_and_no_inline_script_or_style(site: Path):
    """Every page carries the CSP meta; scripts are external files; no inline handlers or styles."""
    for path in _html_files(site):
        page = parse(path)
        csp = page.find("meta", **{"http-equiv": "Content-Security-Policy"}).attrs["content"]
        assert CSP in csp and "'unsafe-inline'" not in csp, path
        for script in page.find_all("script"):
            assert script.attrs.get("src") and not script.text().strip(), path
        assert not page.find_all("style"), path
        for node in page.iter():
            assert not any(a == "style" or a.startswith("on") for a in node.attrs), f"{path}: <{node.tag} {node.attrs}>"


def test_no_page_requests_anything_outside_the_site(site: Path):
    """No page or stylesheet names a remote URL (no CDN, fonts or analytics)."""
    for path in [*_html_files(site), *site.glob("static/*")]:
        text = path.read_text(encoding="utf-8")
        without_svg_namespace = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "http://" not in without_svg_namespace and "https://" not in without_svg_namespace, path
        assert "@import" not in text and "url(" not in text, path


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_store_builds_byte_identical_site(store: Path, tmp_path: Path):
    """Two builds of one store give the same files with the same bytes."""
    build_site(store, tmp_path / "one")
    build_site(store, tmp_path / "two")
    assert _tree_bytes(tmp_path / "one") == _tree_bytes(tmp_path / "two")


@pytest.mark.slow
def test_worker_processes_build_the_same_site(store: Path, tmp_path: Path):
    """Rendering runs in worker processes gives the same bytes as rendering them in this process."""
    build_site(store, tmp_path / "serial", workers=1)
    build_site(store, tmp_path / "parallel", workers=2)
    assert _tree_bytes(tmp_path / "serial") == _tree_bytes(tmp_path / "parallel")


def test_rebuild_removes_stale_files(store: Path, tmp_path: Path):
    """A rebuild replaces the output whole: files from earlier builds do not survive."""
    out = tmp_path / "site"
    build_site(store, out)
    (out / "runs" / "stale.html").write_text("old")
    build_site(store, out)
    assert not (out / "runs" / "stale.html").exists()
    assert (out / "index.html").is_file()


def test_refuses_to_replace_a_directory_it_did_not_build(store: Path, tmp_path: Path):
    """A non-empty output directory without the build marker is left alone, with an error."""
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(SiteError, match="refusing to replace"):
        build_site(store, out)
    assert (out / "notes.txt").read_text() == "keep me"


def test_build_only_reads_the_store(store: Path, tmp_path: Path):
    """Building leaves the store file unchanged."""
    before = store.read_bytes()
    build_site(store, tmp_path / "site")
    assert store.read_bytes() == before


def test_missing_template_value_fails_the_build(store: Path, tmp_path: Path):
    """A template that uses an undefined value fails the build and leaves the previous site in place."""
    out = tmp_path / "site"
    build_site(store, out)
    templates = tmp_path / "templates"
    shutil.copytree(DEFAULT_TEMPLATES, templates)
    about = templates / "about.html"
    about.write_text(about.read_text().replace("<h1>Methodology</h1>", "<h1>{{ no_such_value }}</h1>"))
    with pytest.raises(SiteError, match="no_such_value"):
        build_site(store, out, templates_dir=templates)
    assert (out / "about.html").is_file()
    assert not list(tmp_path.glob(".site.*"))


def test_missing_attribute_fails_the_build(store: Path, tmp_path: Path):
    """A template reaching for a field a row does not have fails the build."""
    templates = tmp_path / "templates"
    shutil.copytree(DEFAULT_TEMPLATES, templates)
    index = templates / "index.html"
    index.write_text(index.read_text().replace("{{ r.model }}", "{{ r.model_name }}"))
    with pytest.raises(SiteError, match="model_name"):
        build_site(store, tmp_path / "site", templates_dir=templates)


def test_build_site_command(store: Path, tmp_path: Path):
    """`evals build-site --store S --out D` builds the site and says where."""
    from evals.cli import cli

    result = CliRunner().invoke(cli, ["build-site", "--store", str(store), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "index.html").is_file()
    assert str(tmp_path / "out") in result.output


def test_build_site_command_reports_a_missing_store(tmp_path: Path):
    """A store path that does not exist is a one-line error, not a traceback."""
    from evals.cli import cli

    result = CliRunner().invoke(cli, ["build-site", "--store", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "Traceback" not in result.output


# -- end-to-end answers --------------------------------------------------------------------------


def test_index_shows_answer_accuracy_with_interval(answers_site: Path, answers_store: Path):
    """A run with answers shows its answer accuracy and 95% interval; one without shows dashes there."""
    page = parse(board(answers_site))
    headers = [th.text().strip() for th in page.find("thead").find_all("th")]
    at_accuracy = headers.index("answer accuracy")
    assert headers[at_accuracy + 1 : at_accuracy + 7] == [
        "keyword accuracy",
        "answer F1",
        "BLEU-1",
        "tokens / correct",
        "$ / correct",
        "$ spent",
    ]
    for s in summaries(answers_store):
        row = next(
            tr
            for tr in page.find("table", "leaderboard").find_all("tr")
            if any(a.attrs.get("href") == f"runs/{s.run_id}.html" for a in tr.find_all("a"))
        )
        cells = [td.text().strip() for td in row.find_all("td")]
        if s.answer_model is None:
            assert cells[at_accuracy] == cells[at_accuracy + 1] == "\u2014"
        else:
            accuracy = s.metric("answer_accuracy")
            assert cells[at_accuracy] == f"{accuracy.value * 100:.1f}% [{accuracy.low * 100:.1f}%, {accuracy.high * 100:.1f}%]"
            assert cells[at_accuracy + 4] == f"{s.metric('tokens_per_correct').value:,.1f}"


def test_index_shows_answer_f1_and_bleu1_with_intervals(answers_site: Path, answers_store: Path):
    """Answer F1 and BLEU-1 are columns with their bootstrap intervals in decimals; "—" without answers."""
    page = parse(board(answers_site))
    headers = [th.text().strip() for th in page.find("thead").find_all("th")]
    for s in summaries(answers_store):
        row = next(
            tr
            for tr in page.find("table", "leaderboard").find_all("tr")
            if any(a.attrs.get("href") == f"runs/{s.run_id}.html" for a in tr.find_all("a"))
        )
        cells = [td.text().strip() for td in row.find_all("td")]
        for name, label in (("answer_f1", "answer F1"), ("answer_bleu1", "BLEU-1")):
            value = s.metric(name)
            shown = "\u2014" if value is None else f"{value.value:.3f} [{value.low:.3f}, {value.high:.3f}]"
            assert cells[headers.index(label)] == shown
        assert (s.metric("answer_f1") is None) == (s.answer_model is None)


def test_index_without_answers_has_no_answer_columns(site: Path):
    """A corpus whose runs have no answers keeps the retrieval-only columns."""
    headers = [th.text().strip() for th in parse(board(site)).find("thead").find_all("th")]
    assert "answer accuracy" not in headers


def test_drilldown_shows_answer_and_verdict_behind_a_miss(answers_site: Path, answers_store: Path):
    """At a miss, the drill-down shows the answer, the verdict and the judge's reason beside the records."""
    run = next(s for s in summaries(answers_store) if s.strategy == "recency")
    with Store.open(answers_store, read_only=True) as opened:
        stored = opened.get_run(run.run_id)
    answer = stored.answers.points[1][0]
    section = parse(drilldown(answers_site, run.run_id, "02_far_fact")).find("section", id="tp-14")
    assert "miss" in section.classes and section.find("ol", cls="records")
    block = section.find("div", cls="answer")
    assert block.find("blockquote").text() == answer.answer
    assert block.find("span", cls="badge").text() == ("correct" if answer.correct else "incorrect")
    assert answer.reason in block.find("p", cls="verdict").text()


def test_drilldown_shows_f1_and_bleu1_beside_the_verdict(answers_site: Path, answers_store: Path):
    """Each answer's heading carries its token F1 and BLEU-1 against the expected fact."""
    from evals.judge.answer_scores import bleu1, token_f1

    run = next(s for s in summaries(answers_store) if s.strategy == "full_history")
    with Store.open(answers_store, read_only=True) as opened:
        stored = opened.get_run(run.run_id)
    seen = set()
    for conversation, answers in zip(stored.run.conversations, stored.answers.points, strict=True):
        page = parse(drilldown(answers_site, run.run_id, conversation.conversation_id))
        for point, answer in zip(conversation.test_points, answers, strict=True):
            heading = page.find("section", id=f"tp-{point.turn_index}").find("div", cls="answer").find("h4")
            f1, bleu = token_f1(answer.answer, point.expected_fact), bleu1(answer.answer, point.expected_fact)
            assert heading.find("span", cls="f1").text() == f"{f1:.3f}"
            assert heading.find("span", cls="bleu1").text() == f"{bleu:.3f}"
            seen.add(f1 > 0)
    assert seen == {True, False}  # the fixture has answers that share tokens with the fact and answers that do not


def test_run_page_lists_answers_judged_incorrect(answers_site: Path, answers_store: Path):
    """The run page gives accuracy with its interval and links every answer judged incorrect to its drill-down."""
    run = next(s for s in summaries(answers_store) if s.strategy == "recency")
    expected = point_links(answers_store, run.run_id, lambda _, answer: answer.correct is False)
    page = parse(answers_site / "runs" / f"{run.run_id}.html")
    assert expected
    assert page.find("h3", id="wrong-answers").text() == f"Answers judged incorrect ({len(expected)})"
    table = page.find("h3", id="wrong-answers").parent.find_all("table")[0]
    assert [a.attrs["href"] for a in table.find_all("a")] == expected
    assert f"{run.metric('answer_accuracy').value * 100:.1f}%" in page.find("h2", id="answers").parent.text()


def test_run_page_shows_answer_f1_and_bleu1(answers_site: Path, answers_store: Path):
    """The run page's answers section gives mean F1 and BLEU-1 with their intervals."""
    run = next(s for s in summaries(answers_store) if s.strategy == "recency")
    text = parse(answers_site / "runs" / f"{run.run_id}.html").find("h2", id="answers").parent.text()
    f1, bleu = run.metric("answer_f1"), run.metric("answer_bleu1")
    assert f"{f1.value:.3f} answer F1" in text and f"{bleu.value:.3f} BLEU-1" in text
    assert f"{f1.low:.3f} – {f1.high:.3f} · {bleu.low:.3f} – {bleu.high:.3f}" in text


def test_methodology_page_shows_the_prompts(answers_site: Path):
    """The methodology page carries each prompt exactly as shipped, with its digest."""
    from evals.run.llm import PROMPT_NAMES, prompt, prompt_digests

    page = parse(answers_site / "about.html")
    texts = [pre.text() for pre in page.find_all("pre", cls="prompt")]
    assert texts == [prompt(name) for name in PROMPT_NAMES]
    assert all(digest in page.text() for digest in prompt_digests().values())


def test_run_json_and_downloads_carry_the_answers(answers_site: Path, answers_store: Path):
    """The run's JSON has metrics.answers; leaderboard.json has accuracy for runs with answers and null for others."""
    run = next(s for s in summaries(answers_store) if s.strategy == "recency")
    document = run_json(answers_site, run.run_id)
    assert document["metrics"]["answers"]["accuracy"] == run.metric("answer_accuracy").value
    rows = json.loads((answers_site / "leaderboard.json").read_text())
    assert {r["strategy"]: r["answer_accuracy"] is None for r in rows} == {"recency": False, "full_history": False, "mneme": True}


# -- in a real browser ---------------------------------------------------------------------------


@pytest.mark.browser
def test_browser_sorts_and_reaches_a_miss(serve, site: Path, browser, store: Path):
    """In Chromium: sorting the leaderboard reorders rows; a miss's drill-down opens; no error, no failed request."""
    page = browser.new_page()
    problems = problems_on(page)
    page.goto(serve(site) + "index.html")
    page.locator("table.benchmarks td.bench a").first.click()  # the front page, then the benchmark's own leaderboard
    page.wait_for_url("**/leaderboard-*.html")

    first_column = "table.sortable tbody tr td:first-child"
    before = page.locator(first_column).all_inner_texts()
    page.locator("table.sortable thead th", has_text="keyword hit@k").locator("button").click()
    after = page.locator(first_column).all_inner_texts()
    assert sorted(before) == sorted(after) and before != after
    assert page.locator("table.sortable thead th[aria-sort]").count() == 1

    recency = run_of(store, "recency")
    page.locator(f'table.sortable a[href="runs/{recency.run_id}.html"]').click()
    page.wait_for_url(f"**/runs/{recency.run_id}.html")
    page.locator("a", has_text="02_far_fact").first.click()
    page.wait_for_url("**/02_far_fact.html#tp-14")
    section = page.locator("section#tp-14")
    assert section.locator(".badge.miss").first.is_visible()
    assert section.locator("ol.records li").count() == 5
    assert problems == []


# -- intervals, strict recall, MRR, McNemar -------------------------------------------------------


def test_compare_section_gives_intervals_and_mcnemar_p(site: Path, store: Path):
    """full_history lost 1 test point and gained none: McNemar p = 2 * (1/2)^1 = 1, and both recalls carry intervals."""
    newer, older = run_of(store, "full_history", NEW), run_of(store, "full_history", OLD)
    section = next(s for s in parse(site / "compare.html").find_all("section") if newer.config_key in s.attrs["id"])
    text = section.find("p").text()
    assert f"McNemar p = 1.0000 over {newer.total} paired test points" in text
    for run in (older, newer):
        recall = run.metric("recall")
        assert f"[{recall.low * 100:.1f}%, {recall.high * 100:.1f}%]" in text


def test_run_page_shows_strict_recall_mrr_and_interval_per_conversation(site: Path, store: Path):
    """The run page's metrics table gives strict recall with its interval and MRR; each conversation row its recall interval."""
    run = run_of(store, "mneme")
    page = parse(site / "runs" / f"{run.run_id}.html")
    rows = {
        tr.find("th").text(): [td.text() for td in tr.find_all("td")]
        for tr in page.find("table", cls="metrics").find("tbody").find_all("tr")
    }
    strict = run.metric("strict_recall")
    assert rows["strict recall"][:2] == [
        f"{strict.value * 100:.1f}% [{strict.low * 100:.1f}%, {strict.high * 100:.1f}%]",
        str(strict.n),
    ]
    assert rows["MRR"][0] == f"{run.metric('mrr').value:.3f}"
    assert list(rows) == [m.label for name, m in METRICS.items() if name in run.metrics]
    row = page.find_all("table")[1].find("tbody").find("tr")
    assert "[" in row.find_all("td")[5].text() and "%]" in row.find_all("td")[5].text()


def test_drilldown_gives_each_point_its_first_match_rank(site: Path, store: Path):
    """Each test point says at which rank the first record holding the answer came (or none)."""
    run = run_of(store, "mneme")
    with Store.open(store, read_only=True) as opened:
        stored = opened.get_run(run.run_id)
    conversation = stored.run.conversations[0]
    page = parse(drilldown(site, run.run_id, conversation.conversation_id))
    for point, score in zip(conversation.test_points, stored.scores.points[0], strict=True):
        facts = page.find("section", id=f"tp-{point.turn_index}").find("dl", cls="facts").text()
        assert (f"first keyword match rank {score.rank}" if score.rank else "first keyword match none") in facts


def test_run_page_says_what_the_embedding_cache_did(tmp_path: Path):
    """A run stored with cache counts says how many embeddings it computed and took from the cache."""
    store_path = tmp_path / "cache.duckdb"
    with Store.open(store_path) as opened:
        run_id = opened.append(
            evaluate(RunConfig(strategy="mneme", corpus=SITE_CORPUS)), provenance(NEW), cache_hits=40, cache_misses=2
        )
    build_site(store_path, tmp_path / "site")
    assert (
        "Embedding cache: 2 embeddings computed, 40 from the cache."
        in parse(tmp_path / "site" / "runs" / f"{run_id}.html").text()
    )


@pytest.mark.browser
def test_browser_sorts_by_accuracy_and_reads_an_answer(serve, answers_site: Path, browser, answers_store: Path):
    """In Chromium: sorting by answer accuracy works; a wrong answer's drill-down shows answer and verdict; no error."""
    page = browser.new_page()
    problems = problems_on(page)
    page.goto(serve(answers_site) + "index.html")
    page.locator("table.benchmarks td.bench a").first.click()
    page.wait_for_url("**/leaderboard-*.html")

    page.locator("table.sortable thead th", has_text="answer accuracy").locator("button").click()
    assert page.locator("table.sortable thead th[aria-sort]").count() == 1
    # The memories' rows (full_history, a ceiling, is in a body of its own that sorting leaves alone).
    cells = page.locator("table.sortable tbody:first-of-type tr td.metric-answer_accuracy").all_inner_texts()
    assert cells[-1] == "\u2014" or cells[0] == "\u2014"  # the run without answers sorts to an end

    recency = next(s for s in summaries(answers_store) if s.strategy == "recency")
    page.locator(f'table.sortable a[href="runs/{recency.run_id}.html"]').click()
    page.wait_for_url(f"**/runs/{recency.run_id}.html")
    page.wait_for_load_state("load")
    page.locator("#wrong-answers ~ .table-wrap a").first.click()
    page.wait_for_url("**/*.html#tp-*")
    section = page.locator("section.point:target")
    assert section.locator("div.answer .badge.miss").is_visible()
    assert section.locator("div.answer blockquote").inner_text()
    assert problems == []
