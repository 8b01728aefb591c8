"""The site at LongMemEval scale: transcripts once per corpus, recurring passages once, small
runs, capped downloads, incremental rebuilds, size warnings.

The corpus is made here: three conversations built, as LongMemEval's are, from a shared pool of
sessions (each of the four pool sessions recurs in two or three conversations), plus an evidence
session of their own and a question.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.browser import chromium
from helpers.cli import evals_output as evals
from helpers.html import follow, parse, record_text
from helpers.stores import at, provenance

from evals.judge.scoring import Evaluation, score_run
from evals.model.tokens import TokenCounter
from evals.run.evaluate import RunConfig, evaluate
from evals.site import DEFAULT_TEMPLATES, _build, _run, build_site
from evals.site._build import build
from evals.site._fragments import Fragments
from evals.site._layout import PASSAGE_MIN_CHARS, corpus_layout
from evals.site._registry import PUBLISHERS
from evals.site._run import RunPublisher
from evals.store import Store

WORDS = "harbor lantern copper meadow violet engine basket thunder orchard pebble quartz saddle timber velvet walnut".split()
POOL_SESSIONS = 4
# Which pool sessions each conversation is made of, its own evidence session going in at index 2.
ARRANGEMENT = [[0, 1, 2], [2, 0, 3], [3, 1, 0]]
CODES = ["zorvex-417", "quillon-233", "marbek-908"]


def _text(seed: str, words: int = 130) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _session(name: str) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": _text(f"{name}-{i}")} for i in range(3)]


def write_corpus(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    pool = [_session(f"pool{s}") for s in range(POOL_SESSIONS)]
    for c, picks in enumerate(ARRANGEMENT):
        evidence = _session(f"own{c}")
        evidence[0]["content"] = f"By the way, the locker code is {CODES[c]}. " + evidence[0]["content"]
        sessions = [pool[picks[0]], pool[picks[1]], evidence, pool[picks[2]]]
        turns = [dict(turn) for session in sessions for turn in session]
        question = f"What is the locker code of conversation {c}?"
        test = {"question": question, "expected_fact": CODES[c], "expected_keywords": [CODES[c]], "evidence_turns": [6]}
        turns.append({"role": "user", "content": question, "test_at": test})
        document = {"schema_version": "1", "id": f"conv{c}", "description": f"conversation {c}", "turns": turns}
        (directory / f"conv{c}.json").write_text(json.dumps(document), encoding="utf-8")
    return directory


def append(store_path: Path, evaluation: Evaluation, minute: int, commit: str = "c" * 40) -> str:
    start = datetime(2025, 3, 1, 12, 0, tzinfo=UTC) + timedelta(minutes=minute)
    with Store.open(store_path) as store:
        return store.append(at(evaluation, start), provenance(commit))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("pooled") / "corpus")


@pytest.fixture(scope="module")
def store(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """recency k=2 (retrieves the end of a pool session), bm25 k=3 and full_history over the pooled corpus."""
    path = tmp_path_factory.mktemp("pooled_store") / "results.duckdb"
    for n, (strategy, k) in enumerate((("recency", 2), ("bm25", 3), ("full_history", 5))):
        append(path, evaluate(RunConfig(strategy=strategy, corpus=corpus, k=k)), n)
    return path


def runs(store_path: Path) -> dict[str, str]:
    with Store.open(store_path, read_only=True) as opened:
        return {s.strategy: s.run_id for s in opened.runs()}


def corpus_dir(site: Path) -> Path:
    (found,) = (site / "transcripts").iterdir()
    return found


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- where the texts are -----------------------------------------------------------------------------


def test_transcripts_are_written_once_per_corpus_not_per_run(site: Path, store: Path):
    """Each conversation has one transcript page; every run's drill-down links that same page."""
    transcripts = sorted(p.name for p in (corpus_dir(site) / "c").glob("*.html"))
    assert transcripts == ["conv0.html", "conv1.html", "conv2.html"]
    links = set()
    for run_id in runs(store).values():
        page = site / "runs" / run_id / "conv1.html"
        href = next(a.attrs["href"] for a in parse(page).find_all("a") if a.text() == "the whole transcript")
        links.add(follow(page, href)[0])
    assert links == {corpus_dir(site) / "c" / "conv1.html"}
    assert not [p for p in (site / "runs").rglob("*") if "transcript" in p.name]


def test_recurring_sessions_are_shown_once_as_passages(site: Path):
    """Each pool session is one passage page listing where it occurs; the transcripts show it as one linked line."""
    passages = sorted((corpus_dir(site) / "p").glob("*.html"))
    assert len(passages) == POOL_SESSIONS
    uses = {p.name: [a.text() for a in parse(p).find("ul", cls="uses").find_all("a")] for p in passages}
    assert sorted(len(u) for u in uses.values()) == [2, 2, 2, 3]  # pool session 0 is in all three conversations
    page = corpus_dir(site) / "c" / "conv0.html"
    blocks = parse(page).find_all("li", cls="passage")
    assert [b.attrs["id"] for b in blocks] == ["t-0", "t-3", "t-9"]
    for block in blocks:
        target, _ = follow(page, block.find_all("a")[0].attrs["href"])
        assert target in passages
    own = parse(page).find("li", id="t-6")  # the evidence session is this conversation's own: shown in full
    assert CODES[0] in own.text() and "TP1 answer" in own.text()


def test_a_record_links_to_its_whole_turn(site: Path, store: Path):
    """Every retrieved record that is a turn links to a transcript or passage line holding exactly that turn's text."""
    checked = 0
    for strategy in ("recency", "bm25"):
        for conversation in ("conv0", "conv1", "conv2"):
            page = site / "runs" / runs(store)[strategy] / f"{conversation}.html"
            for record in parse(page).find("ol", cls="records").find_all("li"):
                text = record_text(page, record.find("div", cls="txt"))  # a turn's: filled in by site.js (data-fill)
                link = next(a for a in record.find_all("a") if a.text().startswith("turn "))
                target, fragment = follow(page, link.attrs["href"])
                assert parse(target).find("li", id=fragment).find("span", cls="txt").text() == text
                checked += 1
    assert checked > 6  # recency's two records in each conversation, and some of bm25's


def test_from_a_miss_the_answer_turn_is_one_click_away(site: Path, store: Path):
    """A miss's drill-down (linked from the run page) shows where the answer was, linked to that turn in the transcript."""
    run_id = runs(store)["recency"]
    run_page = site / "runs" / f"{run_id}.html"
    miss = next(a.attrs["href"] for a in parse(run_page).find_all("table")[0].find_all("a"))
    drilldown, fragment = follow(run_page, miss)
    section = parse(drilldown).find("section", id=fragment)
    assert "miss" in section.classes
    answer = section.find("ul", cls="evidence").find("a")
    target, turn = follow(drilldown, answer.attrs["href"])
    assert target.parent.name == "c" and CODES[0] in parse(target).find("li", id=turn).text()


def test_every_link_in_the_pooled_site_resolves(site: Path):
    """Every href on every page, drill-downs, transcripts and passages included, names a file and anchor that exist
    (a #category=X view, a category the target page's filter can show)."""
    ids = {p: {n.attrs["id"] for n in parse(p).iter() if n.attrs.get("id")} for p in site.rglob("*.html")}
    shown = {p: {n.attrs["data-category"] for n in parse(p).iter() if n.attrs.get("data-category") is not None} for p in ids}
    for page in ids:
        for node in parse(page).iter():
            if node.attrs.get("href"):
                target, fragment = follow(page, node.attrs["href"])
                assert target.is_file(), f"{page.relative_to(site)}: {node.attrs['href']}"
                if fragment.startswith("category=") and target.suffix == ".html":
                    assert parse_qs(fragment)["category"][0] in shown[target], f"{page.relative_to(site)}: {node.attrs['href']}"
                elif fragment and target.suffix == ".html":
                    assert fragment in ids[target], f"{page.relative_to(site)}: {node.attrs['href']}"


def test_full_history_drilldown_lists_no_records(site: Path, store: Path):
    """full_history's drill-down says its records are the whole history and links the transcript instead of copying it."""
    page = site / "runs" / runs(store)["full_history"] / "conv0.html"
    section = parse(page).find("section", id="tp-12")
    assert not section.find_all("ol", cls="records")
    assert "the whole history" in section.text()
    assert page.stat().st_size < 20_000


# -- the layout ---------------------------------------------------------------------------------------


def _keys(*conversations: str) -> list[tuple[str, list[tuple[int, int]]]]:
    """Conversations written as letters, each letter a turn of PASSAGE_MIN_CHARS // 2 characters."""
    return [(f"c{i}", [(ord(letter), PASSAGE_MIN_CHARS // 2) for letter in turns]) for i, turns in enumerate(conversations)]


def test_layout_finds_runs_of_turns_that_always_occur_together():
    """"ab" recurs in both conversations, so it is a passage; everything else is shown inline."""
    layout = corpus_layout("d" * 64, _keys("xaby", "zabw"))
    assert [(s.start, s.end, s.passage is not None) for s in layout.conversations["c0"].spans] == [
        (0, 1, False),
        (1, 3, True),
        (3, 4, False),
    ]
    (passage,) = layout.passages.values()
    assert passage.turns == 2 and passage.uses == [("c0", 1), ("c1", 1)]


def test_layout_cuts_where_a_turn_has_different_neighbours():
    """"ab" and "ac" share "a" only: "a" alone is too short to be a passage, so nothing is."""
    layout = corpus_layout("d" * 64, _keys("ab", "ac"))
    assert not layout.passages
    assert [(s.start, s.end) for s in layout.conversations["c0"].spans] == [(0, 2)]


def test_layout_keeps_short_recurring_turns_inline():
    """A recurring run under PASSAGE_MIN_CHARS ("ok", say) is not worth a page of its own."""
    keys = [(f"c{i}", [(1, 10), (2 + i, PASSAGE_MIN_CHARS)]) for i in range(2)]
    assert not corpus_layout("d" * 64, keys).passages


def test_turn_links_point_into_passages_or_the_transcript():
    """A turn inside a passage links the passage at its offset; others link the conversation's transcript."""
    from evals.views.site_paths import Paths

    layout = corpus_layout("d" * 64, _keys("xaby", "zabw"))
    paths = Paths([])
    paths.set_corpus("d" * 64, ["c0", "c1"])
    (pid,) = layout.passages
    assert layout.turn_href(paths, "c1", 2) == f"transcripts/{'d' * 16}/p/{pid}.html#p-1"
    assert layout.turn_href(paths, "c1", 3) == f"transcripts/{'d' * 16}/c/c1.html#t-3"
    assert layout.context_href(paths, "c1", 2) == f"transcripts/{'d' * 16}/c/c1.html#t-1"


# -- reading a run a slice at a time --------------------------------------------------------------------


def test_iter_run_gives_get_run_in_slices(store: Path):
    """Store.iter_run's slices, put together, are exactly what get_run gives, for every run."""
    with Store.open(store, read_only=True) as opened:
        for run_id in runs(store).values():
            whole = opened.get_run(run_id)
            parts = list(opened.iter_run(run_id, batch_turns=10))
            assert len(parts) == 3
            assert [c for p in parts for c in p.run.conversations] == whole.run.conversations
            assert [s for p in parts for s in p.scores.points] == whole.scores.points
            assert {k: v for p in parts for k, v in p.transcripts.items()} == whole.transcripts
            assert {k: v for p in parts for k, v in p.record_turns.items()} == whole.record_turns


# -- downloads ------------------------------------------------------------------------------------------


def test_run_json_is_gzipped_without_a_time_or_name(site: Path, store: Path):
    """runs/<id>.json.gz has a gzip header with no file name and time 0, so rebuilds give the same bytes."""
    data = (site / "runs" / f"{runs(store)['bm25']}.json.gz").read_bytes()
    assert data[:4] == b"\x1f\x8b\x08\x00" and data[4:8] == b"\0\0\0\0"  # no FNAME flag, MTIME 0
    assert json.loads(gzip.decompress(data))["k"] == 3


def test_a_json_too_big_is_left_to_evals_export(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A run whose JSON passes the limit has none in the site; its page gives the evals export command instead."""
    monkeypatch.setattr(_run, "JSON_LIMIT", 2_000)
    build_site(store, tmp_path / "site")
    run_id = runs(store)["full_history"]
    assert not (tmp_path / "site" / "runs" / f"{run_id}.json.gz").exists()
    text = parse(tmp_path / "site" / "runs" / f"{run_id}.html").text()
    assert f"evals export {run_id} --store results.duckdb --output {run_id}.json" in text


def test_a_big_store_is_not_copied_into_the_site(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Over the copy limit the store stays out (with a warning, and no link to it); --store-copy always copies it."""
    monkeypatch.setattr(_build, "STORE_COPY_LIMIT", 1_000)
    report = build_site(store, tmp_path / "auto")
    assert not (tmp_path / "auto" / "data" / "results.duckdb").exists()
    assert any("does not carry a copy" in w for w in report.warnings)
    assert "results.duckdb" not in parse(tmp_path / "auto" / "index.html").find("footer").text()
    build_site(store, tmp_path / "always", store_copy="always")
    assert (tmp_path / "always" / "data" / "results.duckdb").read_bytes() == store.read_bytes()


def test_size_warning_names_the_largest_parts(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Past the warning size, build-site warns on stderr and names the biggest runs and corpora."""
    monkeypatch.setattr(_build, "WARN_SITE_BYTES", 1_000)
    result = CliRunner().invoke(
        __import__("evals.cli", fromlist=["cli"]).cli, ["build-site", "--store", str(store), "--out", str(tmp_path / "site")]
    )
    assert result.exit_code == 0, result.output
    warning = next(line for line in result.stderr.splitlines() if "past" in line)
    assert warning.startswith("warning: the site is") and "GitHub Pages publishes at most 1 GB" in warning
    assert "the store copy (data/results.duckdb)" in warning and f"run {runs(store)['recency']} (recency)" in warning


def test_the_report_sizes_every_part(site: Path, store: Path):
    """BuildReport.parts adds up to the site: each run's pages and JSON, each corpus's transcripts, the rest."""
    report = build_site(store, site.parent / "again")
    names = [name for name, _ in report.parts]
    assert sum(size for _, size in report.parts) == report.bytes
    assert sum(name.startswith("transcripts of corpus") for name in names) == 1
    assert {f"run {run_id} ({strategy})" for strategy, run_id in runs(store).items()} <= set(names)


# -- incremental builds ---------------------------------------------------------------------------------


def test_adding_a_run_renders_only_that_run_and_gives_the_same_bytes(corpus: Path, tmp_path: Path):
    """After one more run, a rebuild over the old site renders that run alone (the rest is linked, not
    rendered again) and gives exactly the bytes a full build gives."""
    store_path = tmp_path / "results.duckdb"
    first = append(store_path, evaluate(RunConfig(strategy="recency", corpus=corpus, k=2)), 0)
    out = tmp_path / "site"
    assert build_site(store_path, out).rendered == 2  # the corpus and the run
    kept = out / "runs" / first / "conv0.html"
    inode = kept.stat().st_ino
    append(store_path, evaluate(RunConfig(strategy="bm25", corpus=corpus, k=3)), 1)
    report = build_site(store_path, out)
    assert (report.rendered, report.reused) == (1, 2)
    assert kept.stat().st_ino == inode  # the same file, linked from the old site
    build_site(store_path, tmp_path / "full", incremental=False)
    assert tree(out) == tree(tmp_path / "full")


def test_changed_templates_render_everything_again(store: Path, tmp_path: Path):
    """Pages made with other templates are not reused: a template change renders every unit again."""
    templates = tmp_path / "templates"
    shutil.copytree(DEFAULT_TEMPLATES, templates)
    build_site(store, tmp_path / "site", templates_dir=templates)
    with (templates / "static" / "site.css").open("a") as css:
        css.write("/* changed */\n")
    report = build_site(store, tmp_path / "site", templates_dir=templates)
    assert (report.rendered, report.reused) == (4, 0)


def test_a_missing_file_of_the_old_site_is_rendered_again(store: Path, tmp_path: Path):
    """A unit whose files are not all in the old site is rendered again rather than half reused."""
    out = tmp_path / "site"
    build_site(store, out)
    run_id = runs(store)["bm25"]
    (out / "runs" / run_id / "conv2.html").unlink()
    report = build_site(store, out)
    assert (report.rendered, report.reused) == (1, 3)
    assert (out / "runs" / run_id / "conv2.html").is_file()


# -- records beyond k -------------------------------------------------------------------------------------


def test_records_beyond_k_are_listed_briefly(corpus: Path, tmp_path: Path):
    """A test point holding more records than the run's k shows the first k in full, and past k the telling
    ones (evidence, or holding a keyword) as linked lines, the rest counted in a note."""
    evaluation = evaluate(RunConfig(strategy="recency", corpus=corpus, k=2))
    run = evaluation.run.model_copy(deep=True)
    point = run.conversations[0].test_points[0]
    turns = json.loads((corpus / "conv0.json").read_text())["turns"]
    point.retrieved_records = point.retrieved_records + [turns[6]["content"], turns[0]["content"]]  # ranks 3 and 4
    point.retrieved_turns = point.ranked_turns = point.ranked_sessions = None
    store_path = tmp_path / "results.duckdb"
    append(store_path, Evaluation(evaluation.corpus, run, score_run(run, TokenCounter())), 0)
    build_site(store_path, tmp_path / "site")
    page = tmp_path / "site" / "runs" / runs(store_path)["recency"] / "conv0.html"
    section = parse(page).find("section", id="tp-12")
    assert len(section.find("ol", cls="records").find_all("li")) == 2
    more = section.find("ol", cls="records-more").find_all("li")
    assert [li.attrs["value"] for li in more] == ["3"]
    assert "matched" in more[0].classes  # turn 6 holds the code
    assert "1 more rank past k" in section.text()  # turn 0 does not
    target, fragment = follow(page, more[0].find("a").attrs["href"])
    assert CODES[0] in parse(target).find("li", id=fragment).text()


def test_ranks_past_k_that_the_run_measured_are_listed_as_turns(site: Path, store: Path):
    """A run measured at cutoffs deeper than k keeps its ranking: the drill-down lists the telling ranks past k
    (an evidence turn, or one holding a keyword) as linked turns."""
    with Store.open(store, read_only=True) as opened:
        point = opened.get_run(runs(store)["recency"]).run.conversations[0].test_points[0]
    assert point.ranked_turns is not None and len(point.ranked_turns) > 2
    page = site / "runs" / runs(store)["recency"] / "conv0.html"
    more = parse(page).find("section", id="tp-12").find("ol", cls="records-more").find_all("li")
    telling = [(rank, turn) for rank, turn in enumerate(point.ranked_turns, start=1) if rank > 2 and turn in point.evidence_turns]
    assert telling and [li.attrs["value"] for li in more] == [str(rank) for rank, _ in telling]
    for li, (_, turn) in zip(more, telling, strict=True):
        assert li.find("a").text() == f"turn {turn}"
        assert ("evidence" in li.text()) == (turn == 6)
        target, fragment = follow(page, li.find("a").attrs["href"])
        assert parse(target).find("li", id=fragment) is not None


# -- in Chromium, without JavaScript ------------------------------------------------------------------------


@pytest.mark.browser
def test_browser_without_javascript_reaches_the_answer_turn(site: Path, store: Path):
    """With JavaScript off, Chromium follows run page -> miss -> the turn where the answer was, which is shown."""
    run_id = runs(store)["recency"]
    with chromium() as browser:
        page = browser.new_context(java_script_enabled=False).new_page()
        page.goto((site / "runs" / f"{run_id}.html").as_uri())
        page.locator("#misses ~ .table-wrap a").first.click()
        page.wait_for_url("**/conv*.html#tp-*")
        section = page.locator("section.point:target")
        assert section.locator(".badge.miss").first.is_visible()
        assert section.locator("ol.records li").count() == 2
        section.locator("ul.evidence a").first.click()
        page.wait_for_url("**/transcripts/**#t-*")
        turn = page.locator("li:target")
        assert turn.is_visible() and any(code in turn.inner_text() for code in CODES)


KEY_TEXT = 1_000  # characters: a record longer than this is a long one (a summary of the whole history)


class _KeptRunPublisher(RunPublisher):
    """The run pages' publisher, keeping its fragment cache for the test to look into."""

    kept: list[Fragments] = []

    def publish_run(self, run, site, output) -> None:
        super().publish_run(run, site, output)
        assert self._fragments is not None
        _KeptRunPublisher.kept.append(self._fragments)


def test_publishing_a_run_keeps_no_long_record_in_its_cache(store_path, tmp_path):
    """A drill-down's section is cached by a key of what it shows (evals.site._drilldown.fragment_key): a
    fixed-size digest of its view, so publishing a run of records longer than KEY_TEXT (a summary of the whole
    history) keeps none of their text in the keys (summary_buffer at 100 LongMemEval_m questions: 670 MB)."""
    corpus = ROOT / "tests" / "fixtures" / "store_rows" / "corpus"
    evals("run", "--runner", "summary_buffer", "--corpus", str(corpus), "--store", str(store_path), "--no-cache")
    _KeptRunPublisher.kept.clear()
    build(store_path, tmp_path / "site", publishers=tuple(_KeptRunPublisher if p is RunPublisher else p for p in PUBLISHERS))
    (cache,) = _KeptRunPublisher.kept
    assert any(r.length > KEY_TEXT for view in cache.points.values() for r in view.records)  # 01_long's summaries
    assert all(isinstance(approx, bool) and isinstance(digest, bytes) and len(digest) == 16 for approx, digest in cache.points)
    page = (tmp_path / "site").rglob("*.html")
    assert any("Earlier in the conversation: " in path.read_text(encoding="utf-8") for path in page)
